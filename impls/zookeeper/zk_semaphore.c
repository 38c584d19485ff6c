/*
 * zk_semaphore.c - Curator's InterProcessSemaphoreMutex: a semaphore of one
 * lease (InterProcessSemaphoreV2 with maxLeases = 1), not reentrant.
 *
 * The lock's node /locklab/<key> has two persistent children. locks/ holds
 * an internal mutex, the sequential queue of zk-sequential (zk_machine.c),
 * which admits one client at a time to the leases; leases/ holds one
 * ephemeral-sequential lease node per client that holds or wants the lock.
 * Acquire takes the internal mutex, creates its lease node (named after the
 * client and attempt, so a create whose reply was lost is found again),
 * and lists leases/ with a children watch: at most one lease there means
 * it holds the lock; otherwise it sleeps until the watch fires and lists
 * again. Then, granted or not, it takes its watch back (a check-watches
 * round trip, as Curator's removeWatchers), deletes its lease if it gave
 * up, and releases the internal mutex. Release deletes the lease.
 *
 * So a release wakes the one client waiting on leases/ (it holds the
 * internal mutex), and that client's release of the mutex wakes the next
 * in the locks/ queue, which creates its lease and waits in turn: about
 * two watch events per release, four writes and seven round trips per
 * lock and unlock, where zk-sequential needs one event, two writes and
 * three round trips. The waiter watches the whole leases/ directory, so
 * every change of it (another lease created or given up) wakes it too.
 * The server counts one more per cycle, which no callback sees: check-
 * watches only asks whether the watch is there, so the watch set by the
 * listing that granted stays on the server until the next change of
 * leases/ fires it. Whether a waiter waits on leases/ at all is a race:
 * it does when its listing comes before the holder's release. Curator
 * does all of this the same way, request for request (docs/benchmarks.md, "The
 * originals check the copies").
 * People reach for this lock when it must be released by another thread
 * than the one that took it, which a per-thread hold count forbids.
 *
 * How it breaks: recursion. A nested acquire by the holder takes the
 * internal mutex, creates a second lease and finds two: it waits on its
 * own first lease, which only goes when the outer hold is released, after
 * the nested acquire returns. It waits out its whole budget holding the
 * internal mutex, so every other waiter waits with it, then times out
 * (blocked), deleting its lease and releasing the mutex on the way out.
 * Like every session lock, a holder paused past the session timeout loses
 * its lease while it still believes it holds the lock: two holders.
 *
 * Fencing token: the sequence number of the lease node. It is sound here
 * only because the semaphore has one lease: a client creates its lease
 * while it holds the internal mutex and keeps the mutex until the lease is
 * granted, so leases are granted in creation order and tokens rise. A
 * semaphore of N > 1 leases hands out N holds at once, which no token can
 * make exclusive.
 */
#include "zk_drive.h"

static const struct zk_sm_design design = {.kind = ZK_SM_SEMAPHORE, .name = "zk-semaphore"};

static int sem_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return zk_block_open(out, env, &design, err);
}

static int sem_group_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    return zk_group_open(out, env, loop, &design, opened, arg, err);
}

/* A session, a socket, timers and a mailbox per client, as zk-sequential's. */
static const struct lock_async_ops sem_async = {
    .client_faults = true,
    .open = sem_group_open,
    .acquire = zk_group_acquire,
    .release = zk_group_release,
    .close = zk_group_close,
    .crash = zk_group_crash,
};

const struct lock_ops lock_zk_semaphore = {
    .name = "zk-semaphore",
    .backend = "zookeeper",
    .summary = "Curator InterProcessSemaphoreMutex: a one-lease semaphore (internal mutex under "
               "locks/, lease nodes under leases/), not reentrant: recursion waits on itself",
    .caps = LOCK_CAP_NOTIFIES | LOCK_CAP_FENCING,
    .options = zk_option_rows,
    .options_size = sizeof(struct zk_options),
    .finish_options = zk_finish_options,
    .open = sem_open,
    .acquire = zk_block_acquire,
    .release = zk_block_release, /* delete the lease */
    .close = zk_block_close,
    .async = &sem_async,
};
