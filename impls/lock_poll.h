/*
 * lock_poll.h - the retry loop shared by every lock design that polls.
 *
 * Most Redis locks people ship are "try, and if taken, sleep and try
 * again" (the classic 100 ms sleep of the seeds' RedisLockUtil). One loop
 * serves all of them: it calls the design's single attempt until granted,
 * an error, the wait budget running out, or the run stopping, sleeping a
 * fixed interval or an exponentially growing, jittered one between tries,
 * and counts every failed attempt as a poll.
 */
#ifndef LOCKLAB_LOCK_POLL_H
#define LOCKLAB_LOCK_POLL_H

#include <stdbool.h>

#include "lock.h"

/* One attempt: 1 granted, 0 taken by someone else, -1 error (err filled). */
typedef int (*lock_try_fn)(struct lock_client *c, const char *key, struct lab_err *err);

/* Try until granted or wait_ns has passed (at least one attempt is made).
 * Sleeps env->retry_interval_ns between attempts, or with env->retry_backoff
 * an exponential backoff from that interval up to 32 times it, with jitter.
 * On a grant, env->stats->lease_floor_ns is the time the granting attempt
 * was sent plus env->ttl_ns in whole milliseconds (as the designs send it):
 * the lock cannot expire before then. */
enum lock_status lock_poll(const struct lock_env *env, lock_try_fn attempt, struct lock_client *c,
                           const char *key, int64_t wait_ns, struct lab_err *err);

/* The pause between two attempts, for lock_poll and for designs with a
 * retry loop of their own (redlock). attempt is the number of the attempt
 * that just failed, from 0. The step is env->retry_interval_ns, or with
 * env->retry_backoff that interval doubled per attempt up to 32 times it;
 * a backoff step is jittered, drawn from [step/2, step], and so is a fixed
 * one when jitter_always (clients that split redlock's votes between them
 * must not collide again). deadline is the end of the wait budget
 * (CLOCK_MONOTONIC ns): the pause never runs past it.
 * Returns 1 after pausing (attempt again), 0 when the run is stopping and
 * -1 when the budget is spent, without pausing in either case. */
int lock_poll_pause(const struct lock_env *env, int attempt, int64_t deadline,
                    bool jitter_always);

/* The pause lock_poll_pause would sleep, without sleeping (for a design's
 * asynchronous hooks, whose pause is a timer): > 0 ns, 0 when the run is
 * stopping, -1 when the budget is spent. */
int64_t lock_poll_next(const struct lock_env *env, int attempt, int64_t deadline,
                       bool jitter_always);

/* The same at a given time now (CLOCK_MONOTONIC ns), for a design's state
 * machine, which reads no clock of its own. */
int64_t lock_poll_next_at(const struct lock_env *env, int attempt, int64_t deadline, int64_t now,
                          bool jitter_always);

#endif
