/*
 * zk_semaphore.c - Curator's InterProcessSemaphoreMutex: the sequential
 * queue of zk-sequential without reentrancy.
 *
 * Every acquire, the holder's own included, creates a new
 * ephemeral-sequential node under /locklab/<key> and waits until it is the
 * lowest, watching only its predecessor (the recipe is in zk_queue.c), so
 * a release wakes one waiter and the session, not a TTL, holds the lock.
 * People reach for it when the lock must be released by another thread
 * than the one that took it, which a per-thread hold count forbids.
 *
 * How it breaks: recursion. A nested acquire by the holder queues behind
 * its own first node, which is only deleted when the outer hold is
 * released, after the nested acquire returns: it waits out its whole
 * budget and times out (blocked), deleting its node on the way out so the
 * queue behind it moves on. Like every session lock, a holder paused past
 * the session timeout loses its node while it still believes it holds the
 * lock: two holders.
 */
#include "zk_common.h"

const struct lock_ops lock_zk_semaphore = {
    .name = "zk-semaphore",
    .backend = "zookeeper",
    .summary = "Curator InterProcessSemaphoreMutex: the sequential queue, not reentrant: "
               "recursion waits on itself",
    .caps = LOCK_CAP_NOTIFIES,
    .open = zk_lock_open,
    .acquire = zk_queue_acquire, /* no hold count: a nested acquire queues a new node */
    .release = zk_hold_release,
    .close = zk_lock_close,
};
