/*
 * etcd_drive_group.c - the client groups' driver of the etcd state
 * machine (etcd_drive.h): the machine's acts on the group's event loop,
 * over libcurl's multi interface (common/etcd_aconn.h).
 *
 * CALL is one etcd_aconn_call (its answer fed back from the loop), STREAM
 * one etcd_aconn_stream with the step timer at the machine's deadline:
 * when it fires (or the run stops, which makes every timer due) the
 * stream is abandoned and fed as "deadline or stop"; SLEEP is the step
 * timer. An outcome found inside the hook that started the operation is
 * handed over from the loop, never from inside that call (lock.h); so is
 * the open's (there is no handshake: the first request connects).
 *
 * The keep-alive lane is a second connection and a timer on the loop:
 * the machine says when the next renewal is due, the timer sends it, its
 * answer is fed back. A paused group's process sends none, so its leases
 * run out as one process's would.
 *
 * Close cannot wait on the loop for one client's revoke at a time, so the
 * first close of a group's loop asks the machine of every session client
 * of that loop for its close at once (the session's revoke) and runs the
 * loop until they are answered or ETCD_GROUP_CLOSE_NS has passed; the
 * closes after it only free. A revoke not answered by then (etcd down,
 * slow) is abandoned: that lease, no longer kept alive, runs out after
 * its TTL and takes its keys with it, as a killed blocking client's does.
 * A client killed by a fault (etcd_group_crash) revokes nothing.
 *
 * Every timer and transfer of a client is its own on the loop (the shared
 * libcurl pool's sockets are nobody's, evloop_curl.h), so a fault that
 * holds one client holds its renewals and answers alone.
 */
#include "etcd_drive.h"

#include <errno.h>
#include <stdlib.h>

#include "etcd_aconn.h"
#include "lock_caller.h"

enum tkind {
    T_NONE,
    T_SLEEP,    /* the machine's SLEEP */
    T_DEADLINE  /* a stream's deadline (or the run's stop) */
};

struct etcd_group {
    struct lock_client *c;
    struct evloop *L;
    struct etcd_aconn *ec;   /* the client's requests (round trips) */
    struct etcd_aconn *kc;   /* the keep-alive's; NULL without one */
    struct ev_timer timer;   /* enum tkind */
    enum tkind tkind;
    struct ev_timer ka_timer;
    /* the session clients of this process, for close */
    struct etcd_group *next, *prev;
    bool listed, revoked;
    struct lock_caller k;    /* who waits for the operation */
};

static struct etcd_group *sessions; /* this process's grouped session clients */
static int revokes_pending;         /* close's revokes not answered yet */

static void run(struct lock_client *c, enum etcd_sm_act act);

static struct etcd_group *of_timer(struct ev_timer *t, size_t off)
{
    return (struct etcd_group *)((char *)t - off);
}

static void arm(struct etcd_group *g, enum tkind kind, int64_t at)
{
    g->tkind = kind;
    evloop_timer_at(g->L, &g->timer, at);
}

/* ------------------------------------------------------------ the keep-alive lane */

static void on_ka_reply(void *arg, json_t *resp, const struct lab_err *err);

static void ka_do(struct lock_client *c, enum etcd_ka_act act)
{
    struct etcd_group *g = c->gr;
    switch (act) {
    case ETCD_KA_SEND:
        etcd_aconn_call(g->kc, ETCD_KEEPALIVE, etcd_sm_ka_take(&c->sm), on_ka_reply, c);
        return;
    case ETCD_KA_WAIT:
        evloop_timer_at(g->L, &g->ka_timer, c->sm.ka.wake_at);
        return;
    case ETCD_KA_IDLE:
        evloop_timer_cancel(g->L, &g->ka_timer);
        return;
    }
}

/* After a call of the operation lane: it may have armed or disarmed the
 * keep-alive (a renewal under way schedules the next from its answer). */
static void ka_sync(struct lock_client *c)
{
    struct etcd_group *g = c->gr;
    if (g->kc && !etcd_aconn_busy(g->kc))
        ka_do(c, etcd_sm_ka_state(&c->sm));
}

static void on_ka_reply(void *arg, json_t *resp, const struct lab_err *err)
{
    (void)err;
    struct lock_client *c = arg;
    ka_do(c, etcd_sm_ka_reply(&c->sm, resp, lab_now_ns()));
}

static void on_ka_timer(struct ev_timer *t)
{
    struct etcd_group *g = of_timer(t, offsetof(struct etcd_group, ka_timer));
    if (!etcd_aconn_busy(g->kc))
        ka_do(g->c, etcd_sm_ka_timer(&g->c->sm, lab_now_ns()));
}

/* ------------------------------------------------------------ the operation lane */

static void on_reply(void *arg, json_t *resp, const struct lab_err *err)
{
    struct lock_client *c = arg;
    run(c, etcd_sm_reply(&c->sm, resp, err, lab_now_ns()));
}

static int on_msg(void *arg, json_t *msg, struct lab_err *err)
{
    struct lock_client *c = arg;
    return etcd_sm_msg(&c->sm, msg, err);
}

static void on_stream_end(void *arg, int r, const struct lab_err *err)
{
    struct lock_client *c = arg;
    struct etcd_group *g = c->gr;
    evloop_timer_cancel(g->L, &g->timer);
    g->tkind = T_NONE;
    run(c, etcd_sm_stream_end(&c->sm, r, err, lab_now_ns()));
}

static void run(struct lock_client *c, enum etcd_sm_act act)
{
    struct etcd_group *g = c->gr;
    struct etcd_sm *m = &c->sm;
    ka_sync(c);
    switch (act) {
    case ETCD_SM_CALL:
        etcd_aconn_call(g->ec, m->path, etcd_sm_take(m), on_reply, c);
        return;
    case ETCD_SM_STREAM:
        etcd_aconn_stream(g->ec, m->path, etcd_sm_take(m), on_msg, on_stream_end, c);
        arm(g, T_DEADLINE, m->deadline);
        return;
    case ETCD_SM_SLEEP:
        if (m->next_member)
            etcd_aconn_next(g->ec);
        arm(g, T_SLEEP, m->wake_at);
        return;
    case ETCD_SM_DONE:
        lock_caller_done(&g->k, 0, m->status, m->release, &m->err);
        return;
    case ETCD_SM_IGNORED:
        return;
    }
}

static void on_timer(struct ev_timer *t)
{
    struct etcd_group *g = of_timer(t, offsetof(struct etcd_group, timer));
    struct lock_client *c = g->c;
    enum tkind kind = g->tkind;
    g->tkind = T_NONE;
    switch (kind) {
    case T_SLEEP:
        run(c, etcd_sm_timer(&c->sm, lab_now_ns()));
        break;
    case T_DEADLINE: /* the budget ran out, or the run stops: the stream is abandoned */
        etcd_aconn_cancel(g->ec);
        run(c, etcd_sm_stream_end(&c->sm, 0, NULL, lab_now_ns()));
        break;
    case T_NONE:
        break;
    }
}

/* ------------------------------------------------------------ close */

static void on_close_revoked(void *arg, json_t *resp, const struct lab_err *err)
{
    (void)arg, (void)resp, (void)err;
    revokes_pending--;
}

/* Close every session of loop L at once (their revokes), and wait (on the
 * loop, at most ETCD_GROUP_CLOSE_NS) for the answers. */
static void revoke_all(struct evloop *L)
{
    revokes_pending = 0;
    for (struct etcd_group *g = sessions; g; g = g->next) {
        if (g->L != L || g->revoked)
            continue;
        g->revoked = true;
        evloop_timer_cancel(L, &g->ka_timer);
        evloop_timer_cancel(L, &g->timer);
        if (g->kc)
            etcd_aconn_cancel(g->kc); /* a renewal under way: given up */
        etcd_aconn_cancel(g->ec);     /* nothing should be under way: abandoned if so */
        struct etcd_sm *m = &g->c->sm;
        if (etcd_sm_close(m, lab_now_ns()) != ETCD_SM_CALL)
            continue;
        etcd_aconn_call(g->ec, m->path, etcd_sm_take(m), on_close_revoked, g->c);
        revokes_pending++;
    }
    int64_t until = lab_now_ns() + ETCD_GROUP_CLOSE_NS;
    for (int64_t now = lab_now_ns(); revokes_pending > 0 && now < until; now = lab_now_ns())
        if (evloop_run_once(L, until - now) < 0)
            break;
}

/* ------------------------------------------------------------ hooks */

int etcd_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                    const struct etcd_sm_design *d, bool keepalive, lock_opened_fn opened,
                    void *arg, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = etcd_client_new(env, d, keepalive, err);
    struct etcd_group *g = c ? calloc(1, sizeof *g) : NULL;
    if (!g) {
        free(c);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->gr = g;
    g->c = c;
    g->L = loop;
    lock_caller_init(&g->k, loop);
    evloop_timer_init(&g->timer, on_timer);
    evloop_timer_init(&g->ka_timer, on_ka_timer);
    g->ec = etcd_aconn_new(loop, env->servers->conn, ETCD_CALL_TIMEOUT_MS, err);
    if (g->ec && c->sm.keepalive)
        g->kc = etcd_aconn_new(loop, env->servers->conn, ETCD_CALL_TIMEOUT_MS, err);
    if (!g->ec || (c->sm.keepalive && !g->kc)) {
        etcd_group_close(c);
        return -1;
    }
    etcd_aconn_count(g->ec, &env->stats->round_trips);
    if (etcd_sm_has_session(&c->sm)) { /* a session to give back at close */
        g->next = sessions;
        if (sessions)
            sessions->prev = g;
        sessions = g;
        g->listed = true;
    }
    lock_caller_begin(&g->k, opened, NULL, NULL, arg);
    lock_caller_done(&g->k, 0, LOCK_GRANTED, RELEASE_OK, &(struct lab_err){0}); /* from the loop */
    lock_caller_end(&g->k);
    *out = c;
    return 0;
}

void etcd_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                        lock_acquired_fn done, void *arg)
{
    struct etcd_group *g = c->gr;
    lock_caller_begin(&g->k, NULL, done, NULL, arg);
    run(c, etcd_sm_acquire(&c->sm, key, wait_ns, lab_now_ns()));
    lock_caller_end(&g->k);
}

void etcd_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                        void *arg)
{
    struct etcd_group *g = c->gr;
    lock_caller_begin(&g->k, NULL, NULL, done, arg);
    run(c, etcd_sm_release(&c->sm, key, lab_now_ns()));
    lock_caller_end(&g->k);
}

/* Free c; revoke: give its session back first (with every other session
 * of its loop), else leave its lease to run out as a dead process's. */
static void group_free(struct lock_client *c, bool revoke)
{
    if (!c)
        return;
    struct etcd_group *g = c->gr;
    if (g->listed) {
        if (revoke && !g->revoked)
            revoke_all(g->L);
        if (g->prev)
            g->prev->next = g->next;
        else
            sessions = g->next;
        if (g->next)
            g->next->prev = g->prev;
    }
    evloop_timer_cancel(g->L, &g->timer);
    evloop_timer_cancel(g->L, &g->ka_timer);
    lock_caller_close(&g->k);
    etcd_aconn_free(g->kc);
    etcd_aconn_free(g->ec);
    etcd_sm_free(&c->sm);
    free(g);
    free(c);
}

void etcd_group_close(struct lock_client *c)
{
    group_free(c, true);
}

void etcd_group_crash(struct lock_client *c)
{
    group_free(c, false); /* its requests abandoned: their connections close */
}
