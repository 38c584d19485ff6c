/*
 * etcd_async.c - a grouped etcd client: its connections, its step timer
 * and its keep-alive on the loop (see etcd_async.h).
 */
#include "etcd_async.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define KA_RETRY_NS (50 * 1000000LL) /* a failed keep-alive is sent again so soon */

static struct etcd_async *sessions; /* this process's grouped session clients */
static int revokes_pending;         /* close's revokes not answered yet */

static int64_t ka_period(const struct lock_client *c)
{
    return c->ttl_s * 1000000000LL / 3;
}

static void ka_send(struct lock_client *c);

static void on_ka_reply(void *arg, json_t *resp, const struct lab_err *err)
{
    (void)err;
    struct lock_client *c = arg;
    struct etcd_async *a = c->as;
    bool current = a->ka_armed && a->ka_gen == a->ka_gen_sent;
    const volatile int *stop = c->env->stop;
    if (!resp && current && lab_now_ns() < a->ka_give_up && !(stop && *stop)) {
        a->ka_retry = true; /* no member answered: again, over the next one */
        evloop_timer_at(a->L, &a->ka_timer, lab_now_ns() + KA_RETRY_NS);
        return;
    }
    int64_t ttl = resp ? etcd_num(resp, "result", "TTL", NULL) : 0;
    a->ka_retry = false;
    if (ttl > 0) {
        c->env->stats->renewals++;
    } else {
        c->env->stats->renewal_failures++;
        if (a->ka_id == c->lease)
            atomic_store(&c->lease_lost, 1); /* the session is over */
        if (current)
            a->ka_armed = false;
    }
    if (a->ka_armed) /* renewed, or armed anew meanwhile */
        evloop_timer_at(a->L, &a->ka_timer, lab_now_ns() + ka_period(c));
}

static void ka_send(struct lock_client *c)
{
    struct etcd_async *a = c->as;
    if (!a->ka_retry)
        a->ka_give_up = lab_now_ns() + c->ttl_s * 1000000000LL;
    a->ka_gen_sent = a->ka_gen;
    etcd_aconn_call(a->kc, ETCD_KEEPALIVE, etcd_lease_id_req(a->ka_id), on_ka_reply, c);
}

static void on_ka_timer(struct ev_timer *t)
{
    struct etcd_async *a = (struct etcd_async *)((char *)t - offsetof(struct etcd_async, ka_timer));
    if (a->ka_armed && !etcd_aconn_busy(a->kc))
        ka_send(a->c); /* busy: its answer schedules the next */
}

void etcd_async_ka_arm(struct lock_client *c, int64_t id)
{
    struct etcd_async *a = c->as;
    if (!a->kc)
        return;
    a->ka_id = id;
    a->ka_armed = true;
    a->ka_retry = false;
    a->ka_gen++;
    if (!etcd_aconn_busy(a->kc))
        evloop_timer_at(a->L, &a->ka_timer, lab_now_ns() + ka_period(c));
}

void etcd_async_ka_disarm(struct lock_client *c)
{
    struct etcd_async *a = c->as;
    a->ka_armed = false;
    a->ka_retry = false;
    a->ka_gen++;
    evloop_timer_cancel(a->L, &a->ka_timer);
}

struct lock_client *etcd_async_of(struct ev_timer *t)
{
    return ((struct etcd_async *)((char *)t - offsetof(struct etcd_async, timer)))->c;
}

bool etcd_async_opening(struct lock_client *c)
{
    struct etcd_async *a = c->as;
    if (!a->opened)
        return false;
    lock_deliver_opened(&a->opened, a->arg, 0, &a->err);
    return true;
}

void etcd_async_begin(struct lock_client *c, const char *key, int64_t wait_ns,
                      lock_acquired_fn done, void *arg)
{
    struct etcd_async *a = c->as;
    a->key = key;
    a->acquired = done;
    a->arg = arg;
    a->deadline = lab_now_ns() + wait_ns;
}

static void release_dropped(struct lock_client *c, int64_t lease)
{
    (void)lease;
    etcd_async_released(c, RELEASE_ERROR);
}

void etcd_async_release_failed(struct lock_client *c, const struct lab_err *err)
{
    c->as->err = *err;
    etcd_async_session_drop(c, release_dropped);
}

void etcd_async_pause_next(struct lock_client *c)
{
    struct etcd_async *a = c->as;
    etcd_aconn_next(a->ec);
    evloop_timer_at(a->L, &a->timer, lab_now_ns() + 20 * 1000000LL);
}

void etcd_async_acquired(struct lock_client *c, enum lock_status st)
{
    struct etcd_async *a = c->as;
    lock_deliver_acquired(&a->acquired, a->arg, st, &a->err);
}

void etcd_async_released(struct lock_client *c, enum release_status rs)
{
    struct etcd_async *a = c->as;
    lock_deliver_released(&a->released, a->arg, rs, &a->err);
}

static void on_session_granted(void *arg, json_t *resp, const struct lab_err *err)
{
    struct lock_client *c = arg;
    struct etcd_async *a = c->as;
    int64_t id = resp ? etcd_num(resp, "ID", NULL) : 0;
    if (!resp)
        a->err = *err;
    else if (!id)
        lab_err_set(&a->err, EIO, "etcd granted no lease");
    if (id) {
        c->lease = id;
        atomic_store(&c->lease_lost, 0);
        etcd_async_ka_arm(c, id);
    }
    a->then(c, id);
}

void etcd_async_session(struct lock_client *c,
                        void (*then)(struct lock_client *c, int64_t lease))
{
    struct etcd_async *a = c->as;
    if (c->lease && !atomic_load(&c->lease_lost)) {
        then(c, c->lease);
        return;
    }
    etcd_async_ka_disarm(c);
    a->then = then;
    etcd_aconn_call(a->ec, ETCD_GRANT, etcd_grant_req(c), on_session_granted, c);
}

static void on_session_dropped(void *arg, json_t *resp, const struct lab_err *err)
{
    (void)resp, (void)err;
    struct lock_client *c = arg;
    atomic_store(&c->lease_lost, 1);
    c->as->then(c, 0);
}

void etcd_async_session_drop(struct lock_client *c,
                             void (*then)(struct lock_client *c, int64_t lease))
{
    struct etcd_async *a = c->as;
    etcd_async_ka_disarm(c);
    a->then = then;
    if (c->lease)
        etcd_aconn_call(a->ec, ETCD_REVOKE, etcd_lease_id_req(c->lease), on_session_dropped, c);
    else
        on_session_dropped(c, NULL, NULL);
}

void etcd_async_session_error(struct lock_client *c, const struct lab_err *err)
{
    c->as->err = *err;
    etcd_session_failed(c, err);
    etcd_async_acquired(c, LOCK_ERROR);
}

static void on_close_revoked(void *arg, json_t *resp, const struct lab_err *err)
{
    (void)arg, (void)resp, (void)err;
    revokes_pending--;
}

/* Revoke every session of loop L at once, and wait (on the loop, at most
 * ETCD_ASYNC_CLOSE_NS) for the answers. */
static void revoke_all(struct evloop *L)
{
    revokes_pending = 0;
    for (struct etcd_async *a = sessions; a; a = a->next) {
        if (a->L != L || a->revoked)
            continue;
        a->revoked = true;
        etcd_async_ka_disarm(a->c);
        if (a->kc)
            etcd_aconn_cancel(a->kc); /* a renewal under way: given up, as watchdog_stop */
        evloop_timer_cancel(L, &a->timer);
        if (!a->c->lease)
            continue;
        etcd_aconn_cancel(a->ec); /* nothing should be under way: abandoned if so */
        etcd_aconn_call(a->ec, ETCD_REVOKE, etcd_lease_id_req(a->c->lease), on_close_revoked,
                        a->c);
        revokes_pending++;
    }
    int64_t until = lab_now_ns() + ETCD_ASYNC_CLOSE_NS;
    for (int64_t now = lab_now_ns(); revokes_pending > 0 && now < until; now = lab_now_ns())
        if (evloop_run_once(L, until - now) < 0)
            break;
}

int etcd_async_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                    bool keepalive, void (*on_timer)(struct ev_timer *t), lock_opened_fn opened,
                    void *arg, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = etcd_client_new(env, err);
    if (!c)
        return -1;
    struct etcd_async *a = calloc(1, sizeof *a);
    if (!a) {
        free(c);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->as = a;
    a->c = c;
    a->L = loop;
    a->opened = opened;
    a->arg = arg;
    evloop_timer_init(&a->timer, on_timer);
    evloop_timer_init(&a->ka_timer, on_ka_timer);
    a->ec = etcd_aconn_new(loop, env->servers->conn, ETCD_CALL_TIMEOUT_MS, err);
    if (a->ec && keepalive)
        a->kc = etcd_aconn_new(loop, env->servers->conn, ETCD_CALL_TIMEOUT_MS, err);
    if (!a->ec || (keepalive && !a->kc)) {
        etcd_async_close(c);
        return -1;
    }
    etcd_aconn_count(a->ec, &env->stats->round_trips);
    evloop_timer_at(loop, &a->timer, 0); /* opened, from the loop */
    if (keepalive) { /* a session to give back at close */
        a->next = sessions;
        if (sessions)
            sessions->prev = a;
        sessions = a;
        a->listed = true;
    }
    *out = c;
    return 0;
}

void etcd_async_close(struct lock_client *c)
{
    if (!c)
        return;
    struct etcd_async *a = c->as;
    if (a->listed) {
        if (!a->revoked)
            revoke_all(a->L);
        if (a->prev)
            a->prev->next = a->next;
        else
            sessions = a->next;
        if (a->next)
            a->next->prev = a->prev;
    }
    evloop_timer_cancel(a->L, &a->timer);
    evloop_timer_cancel(a->L, &a->ka_timer);
    etcd_aconn_free(a->kc);
    etcd_aconn_free(a->ec);
    free(a);
    free(c);
}
