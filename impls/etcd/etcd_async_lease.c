/*
 * etcd_async_lease.c - etcd-lease in client groups: the acquire and the
 * release of etcd_lease.c as a state machine on the group's loop, sending
 * the same requests in the same order (etcd_lease.h).
 *
 * Acquire: (a lease older than half its TTL revoked,) a lease granted,
 * the transaction; taken, a watch of the key's deletion from the revision
 * read, then the top again. The wait budget is the step timer while the
 * watch runs: when it fires (or the run stops, which makes every timer
 * due) the watch is abandoned, the lease revoked and the acquire ends in
 * LOCK_TIMEOUT. A watch cut by its member is sent again to the next one
 * after 20 ms, from the same revision; one etcd canceled is an error. An
 * error revokes the lease first, as the blocking hook does. With
 * etcd_keepalive the lease is renewed on the loop while held.
 */
#include "etcd_lease.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "etcd_async.h"

enum el_step {
    EL_IDLE,
    EL_WATCH,   /* the watch runs; the timer is the wait budget */
    EL_PAUSE,   /* a cut watch: the timer is the pause before the next one */
    EL_RELEASE  /* a release with no hold: the timer delivers NOT_OWNER */
};

static void el_top(struct lock_client *c);

/* The acquire ends after the lease is revoked (best effort). */
static void on_revoked_end(void *arg, json_t *resp, const struct lab_err *err)
{
    (void)resp, (void)err;
    struct lock_client *c = arg;
    etcd_async_acquired(c, (enum lock_status)c->as->outcome);
}

static void end_with(struct lock_client *c, enum lock_status st)
{
    struct etcd_async *a = c->as;
    a->step = EL_IDLE;
    a->outcome = st;
    if (!a->lease) {
        etcd_async_acquired(c, st);
        return;
    }
    int64_t lease = a->lease;
    a->lease = 0;
    etcd_aconn_call(a->ec, ETCD_REVOKE, etcd_lease_id_req(lease), on_revoked_end, c);
}

static void fail_with(struct lock_client *c, const struct lab_err *err)
{
    c->as->err = *err;
    end_with(c, LOCK_ERROR);
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
    if (r == 1) {
        a->step = EL_IDLE;
        el_top(c);
        return;
    }
    if (a->canceled || lab_now_ns() >= a->deadline) {
        fail_with(c, err);
        return;
    }
    /* the member went away under the watch: the next one, from the same
     * revision, after a pause */
    a->step = EL_PAUSE;
    etcd_async_pause_next(c);
}

static void watch(struct lock_client *c)
{
    struct etcd_async *a = c->as;
    const volatile int *stop = c->env->stop;
    if ((stop && *stop) || lab_now_ns() >= a->deadline) {
        end_with(c, LOCK_TIMEOUT);
        return;
    }
    a->step = EL_WATCH;
    a->canceled = false;
    etcd_aconn_stream(a->ec, ETCD_WATCH, etcd_watch_delete_req(a->ekey, a->rev), on_watch_msg,
                      on_watch_end, c);
    evloop_timer_at(a->L, &a->timer, a->deadline);
}

static void on_tried(void *arg, json_t *resp, const struct lab_err *err)
{
    struct lock_client *c = arg;
    struct etcd_async *a = c->as;
    if (!resp) {
        fail_with(c, err);
        return;
    }
    if (!etcd_lease_try_answer(resp, &a->rev)) {
        watch(c);
        return;
    }
    if (etcd_hold_push(c, a->key, a->ekey, a->rev, a->lease, &a->err) != 0) {
        end_with(c, LOCK_ERROR);
        return;
    }
    snprintf(c->held[c->n_held - 1].value, sizeof c->held[0].value, "%s", a->value);
    c->env->stats->lease_floor_ns = a->granted + c->ttl_s * 1000000000LL;
    etcd_async_ka_arm(c, a->lease); /* with etcd_keepalive only */
    a->lease = 0;                   /* the hold's now */
    etcd_async_acquired(c, LOCK_GRANTED);
}

static void on_granted(void *arg, json_t *resp, const struct lab_err *err)
{
    struct lock_client *c = arg;
    struct etcd_async *a = c->as;
    if (!resp) {
        a->err = *err;
        etcd_async_acquired(c, LOCK_ERROR); /* no lease to revoke */
        return;
    }
    a->lease = etcd_num(resp, "ID", NULL);
    if (!a->lease) {
        lab_err_set(&a->err, EIO, "etcd granted no lease");
        etcd_async_acquired(c, LOCK_ERROR);
        return;
    }
    etcd_aconn_call(a->ec, ETCD_TXN, etcd_lease_try_req(a->ekey, a->value, a->lease), on_tried, c);
}

static void grant(struct lock_client *c)
{
    struct etcd_async *a = c->as;
    a->granted = lab_now_ns();
    etcd_aconn_call(a->ec, ETCD_GRANT, etcd_grant_req(c), on_granted, c);
}

static void on_stale_revoked(void *arg, json_t *resp, const struct lab_err *err)
{
    (void)resp, (void)err;
    grant(arg);
}

/* The top of the blocking loop: a fresh lease when the one we have is
 * half gone, then the transaction. */
static void el_top(struct lock_client *c)
{
    struct etcd_async *a = c->as;
    if (a->lease && etcd_lease_stale(c, a->granted)) {
        int64_t lease = a->lease;
        a->lease = 0;
        etcd_aconn_call(a->ec, ETCD_REVOKE, etcd_lease_id_req(lease), on_stale_revoked, c);
        return;
    }
    if (!a->lease) {
        grant(c);
        return;
    }
    etcd_aconn_call(a->ec, ETCD_TXN, etcd_lease_try_req(a->ekey, a->value, a->lease), on_tried, c);
}

static void on_timer(struct ev_timer *t)
{
    struct lock_client *c = etcd_async_of(t);
    struct etcd_async *a = c->as;
    if (etcd_async_opening(c))
        return;
    switch ((enum el_step)a->step) {
    case EL_WATCH: /* the budget ran out, or the run stops */
        etcd_aconn_cancel(a->ec);
        end_with(c, LOCK_TIMEOUT);
        return;
    case EL_PAUSE:
        watch(c);
        return;
    case EL_RELEASE:
        a->step = EL_IDLE;
        etcd_async_released(c, RELEASE_NOT_OWNER);
        return;
    case EL_IDLE:
        return;
    }
}

static int el_async_open(struct lock_client **out, const struct lock_env *env,
                         struct evloop *loop, lock_opened_fn opened, void *arg,
                         struct lab_err *err)
{
    const struct el_options *o = env->options;
    return etcd_async_open(out, env, loop, o && o->keepalive, on_timer, opened, arg, err);
}

static void el_async_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                             lock_acquired_fn done, void *arg)
{
    struct etcd_async *a = c->as;
    etcd_async_begin(c, key, wait_ns, done, arg);
    a->lease = 0;
    etcd_lease_names(c, key, a->ekey, a->value);
    el_top(c);
}

static void on_release_answer(void *arg, json_t *resp, const struct lab_err *err)
{
    struct lock_client *c = arg;
    if (!resp) {
        c->as->err = *err;
        etcd_async_released(c, RELEASE_ERROR);
        return;
    }
    etcd_async_released(c, json_is_true(json_object_get(resp, "succeeded")) ? RELEASE_OK
                                                                          : RELEASE_NOT_OWNER);
}

static void el_async_release(struct lock_client *c, const char *key, lock_released_fn done,
                             void *arg)
{
    struct etcd_async *a = c->as;
    struct etcd_hold h;
    a->released = done;
    a->arg = arg;
    etcd_async_ka_disarm(c);
    if (!etcd_hold_pop(c, key, &h)) {
        a->step = EL_RELEASE; /* from the loop, not from inside this call */
        evloop_timer_at(a->L, &a->timer, 0);
        return;
    }
    etcd_aconn_call(a->ec, ETCD_TXN, etcd_lease_release_req(h.ekey, h.value), on_release_answer,
                    c);
}

const struct lock_async_ops etcd_lease_async = {
    .open = el_async_open,
    .acquire = el_async_acquire,
    .release = el_async_release,
    .close = etcd_async_close,
};
