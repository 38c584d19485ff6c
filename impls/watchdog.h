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

#include <stdbool.h>
#include <stdint.h>

#include "lock.h"

/* Renew key on the watchdog thread: 1 extended, 0 no longer ours, -1 error.
 * It must use its own connection: the client's is busy on its own thread;
 * a connection that failed is replaced before the next call. */
typedef int (*watchdog_renew_fn)(void *arg, const char *key);

/* The renewal schedule and what a renewal's outcome does to it, for the
 * thread below and for a client group's per-client timer. */
struct watch_plan {
    int64_t lease_ns;  /* the TTL each renewal sets */
    int64_t period_ns; /* time between renewals: lease/3 */
    int64_t retry_ns;  /* time between retries of a failed renewal */
    int64_t expires;   /* when the hold's lease runs out, as far as known */
    int retries;       /* failed renewals of it in a row */
};
void watch_plan_init(struct watch_plan *p, int64_t lease_ns);
/* A new hold, granted at t. */
void watch_plan_arm(struct watch_plan *p, int64_t t);
/* When the next renewal is due, from now. */
int64_t watch_plan_next(const struct watch_plan *p, int64_t now);
/* A renewal sent at sent answered r at done (1 extended, 0 no longer
 * ours, -1 failed), counted in stats: false when the hold is to be
 * renewed no more. */
bool watch_plan_renewed(struct watch_plan *p, int r, int64_t sent, int64_t done,
                        struct lock_stats *stats);

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
