/*
 * handoff_split.h - where a notified design's handoff goes (handoff_split.c):
 * from the holder's release being sent, to the wake-up message reaching the
 * waiter's socket (delivery), to the waiter sending its next acquire attempt
 * (scheduling: the waiter process's wake-up, the lab's own share), to that
 * attempt's grant (the winning acquire). Per-client sums in lock_stats.
 */
#ifndef LOCKLAB_HANDOFF_SPLIT_H
#define LOCKLAB_HANDOFF_SPLIT_H

#include <stdint.h>

#include "lock.h"

/* Ask the kernel to stamp what arrives on the socket fd (SO_TIMESTAMPNS). */
void handoff_split_arm(int fd);

/* When the bytes waiting on fd arrived, in CLOCK_MONOTONIC ns (read with
 * MSG_PEEK: the reader still gets them); 0 when nothing is waiting or the
 * socket is not armed. */
int64_t handoff_split_arrival(int fd);

/* A waiter's attempt after a wake-up ended (granted or not): exit_ns the
 * releaser's time of sending its release (carried in its message),
 * arrive_ns the message's arrival, sent_ns the attempt's sending, now
 * the attempt's answer. A grant adds a split handoff to st, a refusal a
 * losing attempt. Times out of order (a stale message) are not counted. */
void handoff_split_note(struct lock_stats *st, int granted, int64_t exit_ns, int64_t arrive_ns,
                        int64_t sent_ns, int64_t now);

/* The parts, as split_buckets' first index. */
enum { HANDOFF_DELIVERY, HANDOFF_SCHEDULING, HANDOFF_ACQUIRE };

/* The median of one part (HANDOFF_*) in microseconds, to a bucket's
 * width (within 12 %); 0 without handoffs. */
double handoff_split_p50(const struct lock_stats *st, int part);

/* Add one client's split sums to sum's. */
void handoff_split_add(struct lock_stats *sum, const struct lock_stats *one);

#endif
