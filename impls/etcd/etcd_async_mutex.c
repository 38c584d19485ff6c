/*
 * etcd_async_mutex.c - etcd-mutex in client groups: the acquire and the
 * release of etcd_mutex.c as a state machine on the group's loop, sending
 * the same requests in the same order (etcd_mutex.h).
 *
 * Acquire: the session (granted once, kept alive by the loop's timer:
 * etcd_async.h), the entering transaction; another holds: the range of
 * the last key created before ours, a watch of its deletion from the
 * revision read, the range again; none left: our own key read again (a
 * session that expired while we waited is an error, not a grant). The
 * wait budget is the step timer while a watch runs: when it fires (or the
 * run stops, which makes every timer due) the watch is abandoned, our key
 * deleted and the acquire ends in LOCK_TIMEOUT, as the blocking hook's
 * Lock clean-up. A watch cut by its member is sent again to the next one
 * after 20 ms, from the same revision; one etcd canceled is an error.
 * Release deletes our key; a delete that could not be sent ends the
 * session (its lease revoked), as the blocking hook does.
 */
#include "etcd_mutex.h"

#include <errno.h>

#include "etcd_async.h"

enum em_step {
    EM_IDLE,
    EM_WATCH,   /* the watch runs; the timer is the wait budget */
    EM_PAUSE,   /* a cut watch: the timer is the pause before the next one */
    EM_RELEASE  /* a release with no hold: the timer delivers NOT_OWNER */
};

static void lower(struct lock_client *c);

static void grant(struct lock_client *c)
{
    struct etcd_async *a = c->as;
    if (etcd_hold_push(c, a->key, a->ekey, a->my_rev, c->lease, &a->err) != 0) {
        etcd_async_acquired(c, LOCK_ERROR);
        return;
    }
    etcd_async_acquired(c, LOCK_GRANTED);
}

static void on_gave_up(void *arg, json_t *resp, const struct lab_err *err)
{
    (void)resp, (void)err;
    etcd_async_acquired(arg, LOCK_TIMEOUT);
}

/* The budget ran out or the run stops: our key goes (Lock's clean-up on a
 * cancelled wait), then LOCK_TIMEOUT. */
static void give_up(struct lock_client *c)
{
    struct etcd_async *a = c->as;
    a->step = EM_IDLE;
    etcd_aconn_call(a->ec, ETCD_DELETE, etcd_key_req(a->ekey), on_gave_up, c);
}

static int on_watch_msg(void *arg, json_t *msg, struct lab_err *err)
{
    struct lock_client *c = arg;
    return etcd_watch_msg(c, msg, &c->as->canceled, err);
}

static void on_watch_end(void *arg, int r, const struct lab_err *err)
{
    struct lock_client *c = arg;
    struct etcd_async *a = c->as;
    evloop_timer_cancel(a->L, &a->timer);
    a->step = EM_IDLE;
    if (r == 1) {
        lower(c);
        return;
    }
    if (a->canceled || lab_now_ns() >= a->deadline) {
        etcd_async_session_error(c, err);
        return;
    }
    /* the member went away under the watch: the next one, from the same
     * revision, after a pause */
    a->step = EM_PAUSE;
    etcd_async_pause_next(c);
}

static void watch(struct lock_client *c)
{
    struct etcd_async *a = c->as;
    const volatile int *stop = c->env->stop;
    if ((stop && *stop) || lab_now_ns() >= a->deadline) {
        give_up(c);
        return;
    }
    a->step = EM_WATCH;
    a->canceled = false;
    etcd_aconn_stream(a->ec, ETCD_WATCH, etcd_watch_delete_req(a->other, a->rev), on_watch_msg,
                      on_watch_end, c);
    evloop_timer_at(a->L, &a->timer, a->deadline);
}

static void on_own(void *arg, json_t *resp, const struct lab_err *err)
{
    struct lock_client *c = arg;
    struct etcd_async *a = c->as;
    if (!resp) {
        a->err = *err;
        etcd_async_acquired(c, LOCK_ERROR);
        return;
    }
    if (etcd_first_kv(resp)) {
        grant(c);
        return;
    }
    struct lab_err gone;
    lab_err_set(&gone, EIO, "etcd session expired while waiting for %s", a->key);
    atomic_store(&c->lease_lost, 1);
    etcd_async_session_error(c, &gone);
}

static void on_lower(void *arg, json_t *resp, const struct lab_err *err)
{
    struct lock_client *c = arg;
    struct etcd_async *a = c->as;
    if (!resp) {
        etcd_async_session_error(c, err);
        return;
    }
    if (etcd_mutex_lower_answer(resp, a->other, &a->rev)) {
        watch(c);
        return;
    }
    /* none left before ours: our own key must still be there */
    etcd_aconn_call(a->ec, ETCD_RANGE, etcd_key_req(a->ekey), on_own, c);
}

static void lower(struct lock_client *c)
{
    struct etcd_async *a = c->as;
    etcd_aconn_call(a->ec, ETCD_RANGE, etcd_mutex_lower_req(a->pfx, a->my_rev), on_lower, c);
}

static void on_entered(void *arg, json_t *resp, const struct lab_err *err)
{
    struct lock_client *c = arg;
    struct etcd_async *a = c->as;
    if (!resp) {
        etcd_async_session_error(c, err);
        return;
    }
    if (etcd_mutex_enter_answer(resp, &a->my_rev))
        grant(c);
    else
        lower(c);
}

static void on_session(struct lock_client *c, int64_t lease)
{
    struct etcd_async *a = c->as;
    if (!lease) {
        etcd_async_acquired(c, LOCK_ERROR);
        return;
    }
    etcd_mutex_names(a->key, lease, a->pfx, a->ekey);
    etcd_aconn_call(a->ec, ETCD_TXN, etcd_mutex_enter_req(a->pfx, a->ekey, lease), on_entered, c);
}

static void on_timer(struct ev_timer *t)
{
    struct lock_client *c = etcd_async_of(t);
    struct etcd_async *a = c->as;
    if (etcd_async_opening(c))
        return;
    switch ((enum em_step)a->step) {
    case EM_WATCH: /* the budget ran out, or the run stops */
        etcd_aconn_cancel(a->ec);
        give_up(c);
        return;
    case EM_PAUSE:
        watch(c);
        return;
    case EM_RELEASE:
        a->step = EM_IDLE;
        etcd_async_released(c, RELEASE_NOT_OWNER);
        return;
    case EM_IDLE:
        return;
    }
}

static int em_async_open(struct lock_client **out, const struct lock_env *env,
                         struct evloop *loop, lock_opened_fn opened, void *arg,
                         struct lab_err *err)
{
    return etcd_async_open(out, env, loop, true, on_timer, opened, arg, err);
}

static void em_async_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                             lock_acquired_fn done, void *arg)
{
    etcd_async_begin(c, key, wait_ns, done, arg);
    etcd_async_session(c, on_session);
}

static void on_deleted(void *arg, json_t *resp, const struct lab_err *err)
{
    struct lock_client *c = arg;
    if (!resp) {
        etcd_async_release_failed(c, err);
        return;
    }
    etcd_async_released(c, etcd_num(resp, "deleted", NULL) > 0 ? RELEASE_OK : RELEASE_NOT_OWNER);
}

static void em_async_release(struct lock_client *c, const char *key, lock_released_fn done,
                             void *arg)
{
    struct etcd_async *a = c->as;
    struct etcd_hold h;
    a->released = done;
    a->arg = arg;
    if (!etcd_hold_pop(c, key, &h)) {
        a->step = EM_RELEASE; /* from the loop, not from inside this call */
        evloop_timer_at(a->L, &a->timer, 0);
        return;
    }
    etcd_aconn_call(a->ec, ETCD_DELETE, etcd_key_req(h.ekey), on_deleted, c);
}

const struct lock_async_ops etcd_mutex_async = {
    .open = em_async_open,
    .acquire = em_async_acquire,
    .release = em_async_release,
    .close = etcd_async_close,
};
