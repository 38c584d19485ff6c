/*
 * zk_ephemeral.c - one ephemeral node is the lock; losers watch it.
 *
 * The first ZooKeeper lock people write (seed 002's ZkDistributeLock):
 * acquire creates the ephemeral node /locklab/<key>/lock; whoever creates
 * it holds the lock, and release deletes it. A loser (ZNODEEXISTS) sets an
 * exists-watch on the node and sleeps until it is deleted, the wait budget
 * runs out or the run stops, then tries to create it again. Because the
 * node is ephemeral, a holder that dies or loses its session drops the
 * lock by itself: nothing to expire, no TTL to pick, so a business time
 * longer than any TTL is safe.
 *
 * How it breaks: every waiter watches the same node, so every release wakes
 * every waiter (the herd effect: N-1 watch events and N-1 create attempts
 * per release with N clients, of which one wins), which is what the seed's
 * herd section and the `wake/rel` column show. A holder paused longer than
 * the session timeout loses its session, the node goes, a second client
 * creates it, and the paused one resumes believing it still holds the lock:
 * two holders. And it is not reentrant: a nested acquire by the holder
 * finds its own node, waits for it to go and times out (blocked).
 *
 * Fencing token: the czxid of the lock node, the id of the transaction
 * that created it (create2 returns the node's Stat in the same request).
 * Every grant is a new create, after the node of the previous one was
 * deleted, and the ensemble orders its transactions: tokens rise.
 */
#include "zk_drive.h"

static const struct zk_sm_design design = {.kind = ZK_SM_EPHEMERAL, .name = "zk-ephemeral"};

static int zke_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return zk_block_open(out, env, &design, err);
}

static int zke_group_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    return zk_group_open(out, env, loop, &design, opened, arg, err);
}

/* A session, a socket, timers and a mailbox per client (zk_drive_group.c). */
static const struct lock_async_ops zke_async = {
    .client_faults = true,
    .open = zke_group_open,
    .acquire = zk_group_acquire,
    .release = zk_group_release,
    .close = zk_group_close,
    .crash = zk_group_crash,
};

const struct lock_ops lock_zk_ephemeral = {
    .name = "zk-ephemeral",
    .backend = "zookeeper",
    .summary = "one ephemeral node, losers exists-watch it: every release wakes every waiter "
               "(herd); not reentrant",
    .caps = LOCK_CAP_NOTIFIES | LOCK_CAP_FENCING,
    .options = zk_option_rows,
    .options_size = sizeof(struct zk_options),
    .finish_options = zk_finish_options,
    .open = zke_open,
    .acquire = zk_block_acquire,
    .release = zk_block_release,
    .close = zk_block_close,
    .async = &zke_async,
};
