/*
 * redisson.h - what the Redisson RLock design's two sides share: the
 * blocking hooks (redisson.c, one process per client) and the asynchronous
 * ones (redisson_async.c, client groups). Both send the same scripts on the
 * same channel, so a grouped client is the same client to Redis; they
 * differ in how a waiter sleeps (a blocking read of its own pub/sub
 * connection, or one subscription per group as one Redisson JVM holds).
 */
#ifndef LOCKLAB_REDISSON_H
#define LOCKLAB_REDISSON_H

#include <stddef.h>
#include <stdint.h>

#include "lock.h"

/* redisson's own settings, keys of the scenario's lock: section. */
struct rsn_options {
    int64_t watchdog_lease_ns; /* lock.watchdog_lease: the lease the watchdog renews */
    int64_t lease_ns;          /* derived: Redisson's leaseTime, 0 = lock() with the watchdog */
};

/* The scripts (redisson.c says what each takes and answers). */
extern const char rsn_acquire_lua[];
extern const char rsn_fenced_acquire_lua[];
extern const char rsn_release_lua[];

/* Redisson's channel name for a lock into out (len bytes). -1 with err
 * filled when too long. */
int rsn_channel(char *out, size_t len, const char *key, struct lab_err *err);

/* The hooks for client groups (redisson_async.c). */
extern const struct lock_async_ops redisson_async;

#endif
