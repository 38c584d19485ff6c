/*
 * etcd_lock_api.c - etcd's own Lock service (v3lock, the gRPC Lock call;
 * etcdctl 3.4's `lock` runs the recipe itself instead, as etcd-mutex): the
 * server runs the concurrency recipe for the client.
 *
 * The client's session is a lease of lock.ttl kept alive every ttl/3 and
 * revoked on close, as etcdctl's. Acquire is one blocking call,
 * /v3/lock/lock {name: "locklab/<key>", lease}: the member puts
 * "<name>/<lease in hex>" and answers only once every key created before
 * it under that prefix is deleted, with the owner key. A budget that runs
 * out abandons the call; the member then deletes the waiter's key. With
 * fencing, one range of the owner key reads its create revision (the Lock
 * answer's header revision is the revision of the last wait, not the
 * key's). Release is /v3/lock/unlock {key}, a plain delete that says
 * nothing of whether the key was still ours: RELEASE_UNCHECKED.
 *
 * How it breaks, as etcd-mutex: a holder paused past its TTL loses its
 * lease and key, the next waiter is answered, and the paused one resumes
 * inside its critical section. Asking again with the same lease for a
 * lock the session holds answers at once (the key exists): no count, the
 * inner unlock frees the outer hold; not reentrant.
 *
 * Fencing token: the owner key's create revision, rising from holder to
 * holder since keys are granted in create revision order.
 *
 * A leader killed: the member runs the recipe with a client of its own,
 * whose writes are raft proposals; one it forwarded to the leader just
 * before that leader died is lost, and the member answers the Lock call
 * only when its request timeout runs out (5 s + 2 election timeouts: 6 s
 * embedded), "etcdserver: request timed out, possibly due to previous
 * leader failure". A budget shorter than that times out (blocked). The
 * call is not sent again to another member: from the client a lost call
 * looks like a long wait, and abandoning a call gives up the waiter's
 * place in the queue (docs/benchmarks.md, the leader killed on 3 members).
 */
#include "etcd_lock_api.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int ela_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return etcd_lock_open(out, env, true, err);
}

json_t *etcd_lock_api_req(const char *key, int64_t lease)
{
    char name[ETCD_KEY_MAX + 16];
    snprintf(name, sizeof name, ETCD_KEY_PREFIX "%s", key);
    return json_pack("{s:o, s:I}", "name", etcd_b64s(name), "lease", (json_int_t)lease);
}

int etcd_lock_api_owner(const json_t *msg, char owner[ETCD_KEY_MAX + 32], struct lab_err *err)
{
    if (etcd_unb64(json_object_get(msg, "key"), owner, ETCD_KEY_MAX + 32) <= 0) {
        lab_err_set(err, EIO, "etcd Lock answered no key");
        return -1;
    }
    return 1;
}

int64_t etcd_lock_api_token(const json_t *range, struct lab_err *err)
{
    int64_t rev = etcd_num(etcd_first_kv(range), "create_revision", NULL);
    if (rev <= 0) { /* deleted since the answer: not ours to hold */
        lab_err_set(err, EIO, "etcd Lock: the owner key was gone before its token was read");
        return 0;
    }
    return rev;
}

/* The Lock answer: its owner key into the caller's buffer. */
static int on_locked(void *arg, json_t *msg, struct lab_err *err)
{
    return etcd_lock_api_owner(msg, arg, err);
}

static enum lock_status ela_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err)
{
    char owner[ETCD_KEY_MAX + 32];
    int64_t lease = etcd_session(c, err), rev = 0;
    if (!lease)
        return LOCK_ERROR;
    int r = etcd_stream(c->ec, ETCD_LOCK, etcd_lock_api_req(key, lease), on_locked, owner,
                        lab_now_ns() + wait_ns, c->env->stop, err);
    if (r == 0)
        return LOCK_TIMEOUT;
    if (r < 0) {
        etcd_session_failed(c, err);
        return LOCK_ERROR;
    }
    if (c->env->fencing) {
        json_t *resp;
        if (etcd_call(c->ec, ETCD_RANGE, etcd_key_req(owner), &resp, err) != 0)
            return LOCK_ERROR;
        rev = etcd_lock_api_token(resp, err);
        json_decref(resp);
        if (!rev)
            return LOCK_ERROR;
    }
    return etcd_hold_push(c, key, owner, rev, lease, err) == 0 ? LOCK_GRANTED : LOCK_ERROR;
}

static enum release_status ela_release(struct lock_client *c, const char *key,
                                       struct lab_err *err)
{
    struct etcd_hold h;
    json_t *resp;
    if (!etcd_hold_pop(c, key, &h))
        return RELEASE_NOT_OWNER;
    if (etcd_call(c->ec, ETCD_UNLOCK, etcd_key_req(h.ekey), &resp, err) != 0) {
        etcd_session_drop(c); /* a key left behind would block everyone */
        return RELEASE_ERROR;
    }
    json_decref(resp);
    return RELEASE_UNCHECKED; /* Unlock deletes whatever is there, and says nothing */
}

const struct lock_ops lock_etcd_lock_api = {
    .name = "etcd-lock-api",
    .backend = "etcd",
    .summary = "etcd's Lock service (v3lock): one blocking call per grant with the "
               "session's lease; a paused holder's lease expires",
    .caps = LOCK_CAP_FENCING | LOCK_CAP_NOTIFIES,
    .open = ela_open,
    .acquire = ela_acquire,
    .release = ela_release,
    .close = etcd_lock_close,
    .async = &etcd_lock_api_async,
};
