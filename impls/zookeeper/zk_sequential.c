/*
 * zk_sequential.c - Curator's InterProcessMutex: a queue of
 * ephemeral-sequential nodes, each waiter watching only its predecessor,
 * reentrant through a local hold count.
 *
 * Acquire creates /locklab/<key>/lock-<client id>-<n>-<sequence> (the
 * client id in the name lets a client find its own node by listing after a
 * connection loss ate the create's reply, as Curator's protected mode),
 * lists the children and sorts them by sequence: the lowest holds. Any
 * other waiter reads the next lower node only, with a watch, and lists
 * again when it fires. It reads with getData, as Curator does, not exists:
 * a predecessor gone by then leaves no watch behind, where an exists-watch
 * on the missing node would stay on the server until the session ends. A
 * release therefore wakes exactly one waiter (about one watch event per
 * release, against N-1 for zk-ephemeral), and the queue is served in order.
 * A waiter whose budget runs out deletes its node, which wakes its
 * successor to re-check and re-watch. The holder may acquire again: as
 * Curator, a local count goes up with no round trip, and only the last
 * release deletes the node. The recipe is in zk_queue.c.
 *
 * Ephemeral nodes tie the lock to the session, not to a TTL, so a long
 * business time is safe. How it breaks: a holder paused (GC, SIGSTOP)
 * longer than the session timeout loses its session and its node, the
 * next waiter is granted the lock, and the paused holder resumes inside
 * its critical section: two holders. Curator's own nested acquire does not
 * look at ZooKeeper either, so it too trusts a lock the session may have
 * lost; the last release then finds the node gone (not owner).
 *
 * Fencing token: the sequence number of the holder's node. The ensemble
 * numbers the children in creation order and only the lowest node holds,
 * so a node granted later was created later: tokens rise. A nested hold
 * keeps the outer one's (it never reaches ZooKeeper).
 */
#include "zk_common.h"

static enum lock_status zks_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err)
{
    struct zk_hold *h = zk_hold_find(c, key);
    if (h) {
        h->count++; /* reentrant: InterProcessMutex's lockCount, local only */
        return LOCK_GRANTED;
    }
    return zk_queue_acquire(c, key, wait_ns, err);
}

static enum release_status zks_release(struct lock_client *c, const char *key,
                                       struct lab_err *err)
{
    struct zk_hold *h = zk_hold_find(c, key);
    if (h && h->count > 1) {
        h->count--; /* an inner hold: the node stays */
        return RELEASE_OK;
    }
    return zk_hold_release(c, key, err);
}

const struct lock_ops lock_zk_sequential = {
    .name = "zk-sequential",
    .backend = "zookeeper",
    .summary = "Curator InterProcessMutex: ephemeral-sequential queue, watch the predecessor "
               "only, reentrant; session expiry while paused gives two holders",
    .caps = LOCK_CAP_REENTRANT | LOCK_CAP_NOTIFIES | LOCK_CAP_FENCING,
    .options = zk_option_rows,
    .options_size = sizeof(struct zk_options),
    .finish_options = zk_finish_options,
    .open = zk_lock_open,
    .acquire = zks_acquire,
    .release = zks_release,
    .close = zk_lock_close,
    .async = &zk_sequential_async,
};
