/*
 * redisson.c - the Redisson RLock protocol: a hash of hold counts, pub/sub
 * wakeups, and a watchdog when no lease is given.
 *
 * The lock is a Redis hash at the key whose single field is the owner id
 * "<client-uuid>:<thread-id>" and whose value is the hold count, so the
 * same owner may take it again (reentrancy lives in Redis, not in the
 * client). Acquire, release and renew are each one Lua script: acquire
 * increments the owner's count and sets the lease, or returns the key's
 * remaining PTTL when someone else holds it; release decrements and, at
 * zero, deletes the key and PUBLISHes on the lock's channel; renew extends
 * the lease if the owner's field is still there.
 *
 * What sets the design apart is how it waits: a loser SUBSCRIBEs to the
 * lock's channel, tries once more (the release may have come before the
 * subscription took effect), and then sleeps until an unlock message
 * arrives or the returned TTL runs out, whichever is first, and tries
 * again; after the grant it UNSUBSCRIBEs. With one process per client
 * every waiter holds its own subscription, so a release wakes the whole
 * herd; in a client group the process is one Redisson JVM, whose shared
 * subscription wakes one waiter per message (redisson_drive_group.c). Nor
 * is it fair, as RLock is not: a holder that asks again at once after its
 * release usually beats the waiters its message woke, so a waiter can be
 * passed over for its whole wait and time out with the lock free between
 * holds: `blocked`, by design. Where a woken handoff's time goes is
 * measured on the way (handoff_split.h): the unlock message carries the
 * release's send time instead of Redisson's "0", the pub/sub socket is
 * stamped by the kernel on arrival, and the woken attempt's send and
 * answer are noted.
 *
 * With a lease, as Redisson's lock(leaseTime), the lock simply expires
 * after it: the scenario's lock.ttl, when it gives one, is that lease.
 * Without one (no lock.ttl, or lock.watchdog_lease given to ask for the
 * watchdog: rsn_finish_options resolves this into struct rsn_options when
 * the scenario is loaded), the lease is lock.watchdog_lease (30 s,
 * Redisson's lockWatchdogTimeout) and a watchdog thread renews it every
 * lease/3 while the lock is held (watchdog.c; one process per client
 * only). How it breaks: a lease shorter than the business time gives two
 * holders, a paused process loses it to its own lease, and, above all,
 * Redis replicates asynchronously: a master that granted the lock and
 * failed before the write reached a replica leaves a promoted replica with
 * no lock, which it grants to the next client.
 *
 * With fencing (lock_env.fencing), acquire runs a variant of its script
 * that also INCRs "<key>:fence" on a first hold and returns the counter as
 * the grant's token, as Redisson's RFencedLock hands out a token; a nested
 * hold keeps the outer one's.
 *
 * The protocol, and every decision on a reply, a lost connection or a
 * pub/sub event, is redisson_machine.c's (its header lists them), in
 * either mode; redisson_drive_block.c and redisson_drive_group.c move the
 * bytes. This file is the design's table and settings.
 */
#include "redis_drive.h"

#include <errno.h>
#include <stdbool.h>

static const struct opt rsn_option_rows[] = {
    { .name = "watchdog_lease", .type = OPT_DUR,
      OPT_FIELD(struct rsn_options, watchdog_lease_ns), .min = 1, .def = "30s",
      .help = "lease the redisson watchdog renews; when given, redisson runs the watchdog" },
    { .name = "leaseTime", .type = OPT_DUR, OPT_FIELD(struct rsn_options, lease_ns),
      .flags = OPT_DERIVED,
      .help = "lock.ttl when the file gives it and not lock.watchdog_lease, else 0 (watchdog)" },
    { .name = NULL }
};

/* A ttl the file gives is a lease, as Redisson's lock(leaseTime) takes it
 * (no watchdog), unless the file also gives the watchdog's lease, which asks
 * for the watchdog; without either, lock() with the watchdog and its
 * default lease (docs/scenarios.md, redisson's lease). */
static int rsn_finish_options(void *options, const struct lock_opts_ctx *ctx,
                              struct lab_err *err)
{
    struct rsn_options *o = options;
    bool leased = ctx->ttl_given && !ctx->given(ctx, &o->watchdog_lease_ns);
    o->lease_ns = leased ? ctx->ttl_ns : 0;
    if (ctx->listed && ctx->clients_per_process > 1 && !leased) {
        lab_err_set(err, EINVAL, "redisson's watchdog cannot run in client groups: give "
                    "lock.ttl (its lease) or use run.clients_per_process 1");
        return -1;
    }
    return 0;
}

const struct lock_ops lock_redisson = {
    .name = "redisson",
    .backend = "redis",
    .summary = "Redisson RLock: hash of hold counts, pub/sub wakeups, watchdog without a lease; "
               "lost on async failover",
    .caps = LOCK_CAP_TTL | LOCK_CAP_RENEWS | LOCK_CAP_REENTRANT | LOCK_CAP_NOTIFIES |
            LOCK_CAP_FENCING,
    .open = rsn_block_open,
    .acquire = rsn_block_acquire,
    .release = rsn_block_release,
    .close = rsn_block_close,
    .options = rsn_option_rows,
    .options_size = sizeof(struct rsn_options),
    .finish_options = rsn_finish_options,
    .async = &rsn_group_ops,
};
