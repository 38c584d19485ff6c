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

#endif
