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
#include "zk_common.h"

#include <stdio.h>

#define ZKE_NODE "lock" /* the lock node under /locklab/<key> */

/* Whether the node at path was created by our current session. */
static bool zke_ours(struct lock_client *c, const struct Stat *st)
{
    const clientid_t *id = c->zh ? zoo_client_id(c->zh) : NULL;
    return id && st->ephemeralOwner == id->client_id;
}

static enum lock_status zke_try_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                        bool *maybe_created, struct lab_err *err)
{
    int64_t deadline = lab_now_ns() + wait_ns;
    char path[ZK_PATH_MAX + sizeof ZKE_NODE];
    struct Stat made = {0}; /* with fencing: the node's, whose czxid is the token */
    for (bool first = true;; first = false) {
        if (!first && (lab_now_ns() >= deadline || *c->env->stop))
            return LOCK_TIMEOUT;
        int r = zk_prepare(c, key, deadline, err);
        if (r <= 0)
            return r < 0 ? LOCK_ERROR : LOCK_TIMEOUT;
        snprintf(path, sizeof path, "%s/%s", c->parent, ZKE_NODE);
        /* a nested acquire by the holder: its own node is in the way */
        struct zk_hold *h = zk_hold_find(c, key);
        bool nested = h && h->gen == c->session_gen;

        int rc = zk_create(c, path, ZOO_EPHEMERAL, NULL, 0, c->env->fencing ? &made : NULL);
        *maybe_created = zk_transient(rc);
        if (rc == ZOK)
            break;
        if (rc == ZNODEEXISTS) {
            struct Stat st;
            uint64_t seen = zk_wakes(c);
            rc = zk_exists_watch(c, path, &st);
            if (rc == ZOK) {
                if (!nested && zke_ours(c, &st)) {
                    made = st;
                    break; /* our own create, whose reply a connection loss ate */
                }
                if (!zk_wait(c, seen, deadline))
                    return LOCK_TIMEOUT;
                continue;
            }
            if (rc == ZNONODE)
                continue; /* deleted between the create and the watch: try again */
        }
        if (!zk_transient(rc) && !zk_session_gone(rc)) {
            zk_fail(err, rc, "create", path);
            return LOCK_ERROR;
        }
        /* The session may still be there (and the create applied: the next
         * round finds the node carrying our session id), or it is gone and
         * the next round opens a new one. */
        r = zk_session_ready(c, deadline, err);
        if (r <= 0)
            return r < 0 ? LOCK_ERROR : LOCK_TIMEOUT;
    }
    if (zk_hold_push(c, key, path, made.czxid, err) != 0) {
        zk_delete(c, path);
        return LOCK_ERROR;
    }
    return LOCK_GRANTED;
}

static enum lock_status zke_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err)
{
    bool maybe_created = false;
    enum lock_status st = zke_try_acquire(c, key, wait_ns, &maybe_created, err);
    /* giving up right after a create whose outcome is unknown: the node may
     * exist, held by nobody; only closing the session is sure to remove it */
    if (st != LOCK_GRANTED && maybe_created)
        zk_session_drop(c);
    return st;
}

const struct lock_ops lock_zk_ephemeral = {
    .name = "zk-ephemeral",
    .backend = "zookeeper",
    .summary = "one ephemeral node, losers exists-watch it: every release wakes every waiter "
               "(herd); not reentrant",
    .caps = LOCK_CAP_NOTIFIES | LOCK_CAP_FENCING,
    .options = zk_option_rows,
    .options_size = sizeof(struct zk_options),
    .finish_options = zk_finish_options,
    .open = zk_lock_open,
    .acquire = zke_acquire,
    .release = zk_hold_release,
    .close = zk_lock_close,
    .async = &zk_ephemeral_async,
};
