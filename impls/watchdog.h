/*
 * watchdog.h - a renewal thread that keeps a held lock alive.
 *
 * Redisson's "watchdog" and the seeds' RedisLockUtil4: while the client
 * holds the lock, a background thread extends its lease every lease/3, so
 * a critical section longer than the lease does not lose the lock. The
 * thread only renews between watchdog_arm() (after a grant) and
 * watchdog_disarm() (before the release is sent), and the renewal itself
 * must be a compare-and-extend on the owner's identity, so a late renewal
 * can never extend someone else's lock.
 *
 * As Redisson's: a renewal that fails is retried (over a new connection:
 * the design's renew function reconnects) a few times while the lease
 * still runs; when the retries fail too, or when the renewal says the lock
 * is no longer ours, the watchdog stops renewing that hold and the lock is
 * left to expire under its holder. Renewals and failed renewal attempts
 * are counted in the client's lock_stats.
 */
#ifndef LOCKLAB_WATCHDOG_H
#define LOCKLAB_WATCHDOG_H

#include <stdint.h>

#include "lock.h"

/* Renew key on the watchdog thread: 1 extended, 0 no longer ours, -1 error.
 * It must use its own connection: the client's is busy on its own thread;
 * a connection that failed is replaced before the next call. */
typedef int (*watchdog_renew_fn)(void *arg, const char *key);

struct watchdog;

/* Start the thread for a lock whose lease (the TTL each renewal sets) is
 * lease_ns: it renews every lease/3. Returns NULL with err filled on
 * failure. */
struct watchdog *watchdog_start(int64_t lease_ns, watchdog_renew_fn renew, void *arg,
                                struct lock_stats *stats, struct lab_err *err);

/* Start renewing key every lease/3, from now (the grant). */
void watchdog_arm(struct watchdog *w, const char *key);

/* Stop renewing; returns once no renewal is in flight. */
void watchdog_disarm(struct watchdog *w);

/* Stop and join the thread, free w. NULL is fine. */
void watchdog_stop(struct watchdog *w);

#endif
