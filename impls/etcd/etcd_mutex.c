/*
 * etcd_mutex.c - the recipe of etcd's Go client (clientv3/concurrency's
 * Mutex over a Session): a key per waiter under the lock's prefix, served
 * in the order of their create revisions.
 *
 * The client's session is a lease of lock.ttl, kept alive every ttl/3 by a
 * thread (Session's keep-alive) and revoked on close. Acquire puts
 * "<prefix><lease in hex>" with that lease in a transaction only if it
 * does not exist yet (compare create_revision == 0), reading in the same
 * transaction the key with the lowest create revision under the prefix
 * (the holder); our create revision is the transaction's revision, or,
 * when the key existed, the one read. When ours is the lowest we hold it.
 * Otherwise we wait for the deletion of the key with the next lower
 * create revision only (a range under the prefix with max_create_revision
 * = ours - 1, the last by create revision), on a watch from the revision
 * read, and look again: one waiter woken per release, as Curator's
 * InterProcessMutex. Once no lower key is left, our own key is read again,
 * as current clients do, so a session that expired while we waited is an
 * error rather than a grant. A waiter whose budget runs out deletes its
 * key. Release deletes our key (Unlock): RELEASE_NOT_OWNER when it was
 * gone already.
 *
 * How it breaks: a holder paused longer than the TTL stops its keep-alive
 * too, the lease expires with the key, the next waiter holds the lock and
 * the paused one resumes inside its critical section (Jepsen's etcd 3.4.3
 * finding). The same session asking again for a lock it holds finds its
 * own key and is granted at once, with no count (as Go's Mutex): the
 * inner release deletes the key and frees the lock under the outer hold,
 * so the design is not reentrant.
 *
 * Fencing token: our key's create revision. Keys are granted in create
 * revision order, so tokens rise from holder to holder.
 */
#include "etcd_mutex.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

static int em_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return etcd_lock_open(out, env, true, err);
}

/* A range under the prefix pfx ("locklab/<key>/"): the first by create
 * revision, or (max_rev > 0) the last one created at or before max_rev. */
static json_t *range_under(const char *pfx, int64_t max_rev)
{
    json_t *r = json_pack("{s:o, s:o, s:i, s:s, s:s}", "key", etcd_b64s(pfx), "range_end",
                          etcd_prefix_end(pfx), "limit", 1, "sort_target", "CREATE",
                          "sort_order", max_rev > 0 ? "DESCEND" : "ASCEND");
    if (max_rev > 0)
        json_object_set_new(r, "max_create_revision", json_integer((json_int_t)max_rev));
    return r;
}

void etcd_mutex_names(const char *key, int64_t lease, char pfx[ETCD_KEY_MAX + 16],
                      char mine[ETCD_KEY_MAX + 32])
{
    snprintf(pfx, ETCD_KEY_MAX + 16, ETCD_KEY_PREFIX "%s/", key);
    snprintf(mine, ETCD_KEY_MAX + 32, "%s%" PRIx64, pfx, (uint64_t)lease);
}

json_t *etcd_mutex_enter_req(const char *pfx, const char *mine, int64_t lease)
{
    return json_pack(
        "{s:[{s:o, s:s, s:s, s:i}], s:[{s:{s:o, s:s, s:I}}, {s:o}], s:[{s:{s:o}}, {s:o}]}",
        "compare", "key", etcd_b64s(mine), "target", "CREATE", "result", "EQUAL",
        "create_revision", 0, "success", "request_put", "key", etcd_b64s(mine), "value", "",
        "lease", (json_int_t)lease, "request_range", range_under(pfx, 0), "failure",
        "request_range", "key", etcd_b64s(mine), "request_range", range_under(pfx, 0));
}

int etcd_mutex_enter_answer(const json_t *resp, int64_t *my_rev)
{
    const json_t *rs = json_object_get(resp, "responses");
    if (json_is_true(json_object_get(resp, "succeeded")))
        *my_rev = etcd_num(resp, "header", "revision", NULL);
    else
        *my_rev = etcd_num(etcd_first_kv(json_object_get(json_array_get(rs, 0), "response_range")),
                           "create_revision", NULL);
    int64_t owner = etcd_num(etcd_first_kv(json_object_get(json_array_get(rs, 1),
                                                           "response_range")),
                             "create_revision", NULL);
    return owner == *my_rev;
}

json_t *etcd_mutex_lower_req(const char *pfx, int64_t my_rev)
{
    return range_under(pfx, my_rev - 1);
}

int etcd_mutex_lower_answer(const json_t *resp, char last[ETCD_KEY_MAX + 32], int64_t *rev)
{
    const json_t *kv = etcd_first_kv(resp);
    *rev = etcd_num(resp, "header", "revision", NULL);
    return kv && etcd_unb64(json_object_get(kv, "key"), last, ETCD_KEY_MAX + 32) >= 0;
}

/* Put our key if it is not there and read the holder's: 1 ours holds,
 * 0 another does, -1 with err; *my_rev our key's create revision. */
static int em_enter(struct lock_client *c, const char *pfx, const char *mine, int64_t lease,
                    int64_t *my_rev, struct lab_err *err)
{
    json_t *resp;
    if (etcd_call(c->ec, ETCD_TXN, etcd_mutex_enter_req(pfx, mine, lease), &resp, err) != 0)
        return -1;
    int r = etcd_mutex_enter_answer(resp, my_rev);
    json_decref(resp);
    return r;
}

/* Wait until no key under pfx was created before my_rev (waitDeletes).
 * 1 none is left, 0 deadline or stop, -1 with err. */
static int em_wait_lower(struct lock_client *c, const char *pfx, int64_t my_rev,
                         int64_t deadline, struct lab_err *err)
{
    char last[ETCD_KEY_MAX + 32];
    for (;;) {
        json_t *resp;
        int64_t rev;
        if (etcd_call(c->ec, ETCD_RANGE, etcd_mutex_lower_req(pfx, my_rev), &resp, err) != 0)
            return -1;
        int have = etcd_mutex_lower_answer(resp, last, &rev);
        json_decref(resp);
        if (!have)
            return 1;
        int r = etcd_wait_delete(c, last, rev, deadline, err);
        if (r <= 0)
            return r;
    }
}

static enum lock_status em_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                   struct lab_err *err)
{
    char pfx[ETCD_KEY_MAX + 16], mine[ETCD_KEY_MAX + 32];
    int64_t deadline = lab_now_ns() + wait_ns, my_rev;
    int64_t lease = etcd_session(c, err);
    if (!lease)
        return LOCK_ERROR;
    etcd_mutex_names(key, lease, pfx, mine);
    int r = em_enter(c, pfx, mine, lease, &my_rev, err);
    if (r == 0) {
        r = em_wait_lower(c, pfx, my_rev, deadline, err);
        if (r == 0) {
            etcd_delete(c, mine, err); /* Lock's clean-up on a cancelled wait */
            return LOCK_TIMEOUT;
        }
        if (r == 1) { /* our key must still be there: the session may have expired */
            json_t *resp;
            if (etcd_call(c->ec, ETCD_RANGE, etcd_key_req(mine), &resp, err) != 0)
                return LOCK_ERROR;
            r = etcd_first_kv(resp) ? 1 : -1;
            json_decref(resp);
            if (r < 0) {
                lab_err_set(err, EIO, "etcd session expired while waiting for %s", key);
                atomic_store(&c->lease_lost, 1);
            }
        }
    }
    if (r < 0) {
        etcd_session_failed(c, err);
        return LOCK_ERROR;
    }
    return etcd_hold_push(c, key, mine, my_rev, lease, err) == 0 ? LOCK_GRANTED : LOCK_ERROR;
}

static enum release_status em_release(struct lock_client *c, const char *key, struct lab_err *err)
{
    struct etcd_hold h;
    if (!etcd_hold_pop(c, key, &h))
        return RELEASE_NOT_OWNER;
    int r = etcd_delete(c, h.ekey, err);
    if (r < 0)
        etcd_session_drop(c); /* a key left behind would block everyone */
    return r < 0 ? RELEASE_ERROR : r ? RELEASE_OK : RELEASE_NOT_OWNER;
}

const struct lock_ops lock_etcd_mutex = {
    .name = "etcd-mutex",
    .backend = "etcd",
    .summary = "etcd concurrency.Mutex: a key per waiter under the prefix with the session's "
               "lease, wait for the next lower create revision; a paused holder's lease expires",
    .caps = LOCK_CAP_FENCING | LOCK_CAP_NOTIFIES,
    .open = em_open,
    .acquire = em_acquire,
    .release = em_release,
    .close = etcd_lock_close,
    .async = &etcd_mutex_async,
};
