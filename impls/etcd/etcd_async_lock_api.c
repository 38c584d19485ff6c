/*
 * etcd_async_lock_api.c - etcd-lock-api in client groups: the acquire and
 * the release of etcd_lock_api.c on the group's loop, sending the same
 * requests in the same order (etcd_lock_api.h).
 *
 * Acquire: the session (granted once, kept alive by the loop's timer:
 * etcd_async.h), then the Lock call as a stream on the loop, which etcd
 * answers once the lock is ours; with fencing, one range of the owner key
 * for its token. The wait budget is the step timer while the call runs:
 * when it fires (or the run stops, which makes every timer due) the call
 * is abandoned (its connection closes, and the member deletes the
 * waiter's key, as for the blocking hook's abandoned call) and the
 * acquire ends in LOCK_TIMEOUT. Release is the Unlock call
 * (RELEASE_UNCHECKED); one that could not be sent ends the session (its
 * lease revoked), as the blocking hook does.
 */
#include "etcd_lock_api.h"

#include "etcd_async.h"

enum ela_step {
    ELA_IDLE,
    ELA_LOCK,    /* the Lock call runs; the timer is the wait budget */
    ELA_RELEASE  /* a release with no hold: the timer delivers NOT_OWNER */
};

static void grant(struct lock_client *c, int64_t rev)
{
    struct etcd_async *a = c->as;
    if (etcd_hold_push(c, a->key, a->ekey, rev, c->lease, &a->err) != 0) {
        etcd_async_acquired(c, LOCK_ERROR);
        return;
    }
    etcd_async_acquired(c, LOCK_GRANTED);
}

static void on_token(void *arg, json_t *resp, const struct lab_err *err)
{
    struct lock_client *c = arg;
    struct etcd_async *a = c->as;
    int64_t rev = 0;
    if (!resp)
        a->err = *err;
    else
        rev = etcd_lock_api_token(resp, &a->err);
    if (!rev) {
        etcd_async_acquired(c, LOCK_ERROR);
        return;
    }
    grant(c, rev);
}

static int on_lock_msg(void *arg, json_t *msg, struct lab_err *err)
{
    struct lock_client *c = arg;
    return etcd_lock_api_owner(msg, c->as->ekey, err);
}

static void on_lock_end(void *arg, int r, const struct lab_err *err)
{
    struct lock_client *c = arg;
    struct etcd_async *a = c->as;
    evloop_timer_cancel(a->L, &a->timer);
    a->step = ELA_IDLE;
    if (r != 1) {
        etcd_async_session_error(c, err);
        return;
    }
    if (c->env->fencing)
        etcd_aconn_call(a->ec, ETCD_RANGE, etcd_key_req(a->ekey), on_token, c);
    else
        grant(c, 0);
}

static void on_session(struct lock_client *c, int64_t lease)
{
    struct etcd_async *a = c->as;
    const volatile int *stop = c->env->stop;
    if (!lease) {
        etcd_async_acquired(c, LOCK_ERROR);
        return;
    }
    if (stop && *stop) {
        etcd_async_acquired(c, LOCK_TIMEOUT);
        return;
    }
    a->step = ELA_LOCK;
    etcd_aconn_stream(a->ec, ETCD_LOCK, etcd_lock_api_req(a->key, lease), on_lock_msg,
                      on_lock_end, c);
    evloop_timer_at(a->L, &a->timer, a->deadline);
}

static void on_timer(struct ev_timer *t)
{
    struct lock_client *c = etcd_async_of(t);
    struct etcd_async *a = c->as;
    if (etcd_async_opening(c))
        return;
    switch ((enum ela_step)a->step) {
    case ELA_LOCK: /* the budget ran out, or the run stops: the call is abandoned */
        etcd_aconn_cancel(a->ec);
        a->step = ELA_IDLE;
        etcd_async_acquired(c, LOCK_TIMEOUT);
        return;
    case ELA_RELEASE:
        a->step = ELA_IDLE;
        etcd_async_released(c, RELEASE_NOT_OWNER);
        return;
    case ELA_IDLE:
        return;
    }
}

static int ela_async_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    return etcd_async_open(out, env, loop, true, on_timer, opened, arg, err);
}

static void ela_async_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                              lock_acquired_fn done, void *arg)
{
    etcd_async_begin(c, key, wait_ns, done, arg);
    etcd_async_session(c, on_session);
}

static void on_unlocked(void *arg, json_t *resp, const struct lab_err *err)
{
    struct lock_client *c = arg;
    if (!resp) {
        etcd_async_release_failed(c, err);
        return;
    }
    etcd_async_released(c, RELEASE_UNCHECKED); /* Unlock deletes whatever is there */
}

static void ela_async_release(struct lock_client *c, const char *key, lock_released_fn done,
                              void *arg)
{
    struct etcd_async *a = c->as;
    struct etcd_hold h;
    a->released = done;
    a->arg = arg;
    if (!etcd_hold_pop(c, key, &h)) {
        a->step = ELA_RELEASE; /* from the loop, not from inside this call */
        evloop_timer_at(a->L, &a->timer, 0);
        return;
    }
    etcd_aconn_call(a->ec, ETCD_UNLOCK, etcd_key_req(h.ekey), on_unlocked, c);
}

const struct lock_async_ops etcd_lock_api_async = {
    .open = ela_async_open,
    .acquire = ela_async_acquire,
    .release = ela_async_release,
    .close = etcd_async_close,
};
