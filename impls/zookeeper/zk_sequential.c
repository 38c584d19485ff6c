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
 * release deletes the node. The recipe is zk_machine.c's queue.
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
#include "zk_drive.h"

static const struct zk_sm_design design = {.kind = ZK_SM_SEQUENTIAL, .name = "zk-sequential"};

static int zks_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return zk_block_open(out, env, &design, err);
}

static int zks_group_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    return zk_group_open(out, env, loop, &design, opened, arg, err);
}

/* A session, a socket, timers and a mailbox per client: nothing shared,
 * so a fault aimed at one client of a group hits it alone. */
static const struct lock_async_ops zks_async = {
    .client_faults = true,
    .open = zks_group_open,
    .acquire = zk_group_acquire,
    .release = zk_group_release,
    .close = zk_group_close,
    .crash = zk_group_crash,
};

const struct lock_ops lock_zk_sequential = {
    .name = "zk-sequential",
    .backend = "zookeeper",
    .summary = "Curator InterProcessMutex: ephemeral-sequential queue, watch the predecessor "
               "only, reentrant; session expiry while paused gives two holders",
    .caps = LOCK_CAP_REENTRANT | LOCK_CAP_NOTIFIES | LOCK_CAP_FENCING,
    .options = zk_option_rows,
    .options_size = sizeof(struct zk_options),
    .finish_options = zk_finish_options,
    .open = zks_open,
    .acquire = zk_block_acquire,
    .release = zk_block_release,
    .close = zk_block_close,
    .async = &zks_async,
};
