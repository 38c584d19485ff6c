/*
 * redlock_drive_group.c - the client groups' driver of redlock's state
 * machine (redlock_machine.h): its fan-outs on hiredis's asynchronous
 * contexts, one per master per logical client, on the group's event loop.
 *
 * A round queues the command on every master's connection in the mask
 * at once, and feeds each master's answer to the machine as it comes; the
 * round ends when every master answered, failed, or reached the round's
 * deadline (one loop timer per client). A master past the deadline is
 * dropped, as a timed-out blocking connection is, unless its reply is
 * already in its socket (a blocking read would find it there). A master
 * that is down is reconnected when the round starts: its commands (the
 * script load first, then the command) go out once the connection is up,
 * and a connection that does not come up by the deadline is a "no". A
 * connection open before the round that breaks under the command (EOF or
 * an I/O error) is reported RL_BROKEN. SLEEP is a second timer. Round
 * trips count one per master a command was written to (a reconnected
 * master's script load and command together are one).
 *
 * Differences from the blocking driver in timing only: a connection to a
 * killed master is seen closed by the loop while idle and forgotten then,
 * so the next round reconnects it at once (the blocking side learns it by
 * sending on it and resends, one round trip more); a master being
 * reconnected shares the round's 50 ms for its connect and its reply. When
 * the run stops, a round under way still waits for its replies until its
 * deadline (the group makes every timer due then), so a release at the end
 * of the run still reaches the masters. An outcome found inside the hook
 * that started an operation is delivered from the loop.
 */
#include "redis_drive.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evloop_redis.h"
#include "lock_caller.h"
#include "redis_link.h"

struct amaster {
    struct lock_client *c;
    int idx;
    redisAsyncContext *ac; /* NULL while down: reconnected at the next round */
    bool pending;          /* the round waits for it */
    bool old;              /* its connection was open before this round */
    bool reloading;        /* the next reply is a SCRIPT LOAD's (reconnected) */
};

struct lock_client {
    const struct lock_env *env;
    struct evloop *L;
    struct rl_sm sm;
    struct amaster m[REDLOCK_MAX_MASTERS]; /* sm.p.n of them */
    int pending;               /* masters the round still waits for */
    unsigned gen;              /* rounds ended so far */
    int64_t fan_deadline;
    struct ev_timer fan_timer; /* the round's deadline */
    struct ev_timer pause;     /* SLEEP */
    struct lock_caller k;
};

static void run(struct lock_client *c, enum rl_act act);

/* ------------------------------------------------------------ masters */

/* Drop m's connection (hiredis frees it once the callback it may be
 * inside returns); its pending replies come back to nobody. */
static void master_drop(struct amaster *m)
{
    redisAsyncContext *ac = m->ac;
    m->ac = NULL;
    if (ac) {
        ac->data = NULL;
        redisAsyncFree(ac);
    }
}

static void round_end(struct lock_client *c)
{
    c->gen++;
    evloop_timer_cancel(c->L, &c->fan_timer);
    run(c, rl_sm_round_done(&c->sm, lab_now_ns()));
}

/* m is done for this round (answered or failed). */
static void master_settled(struct lock_client *c, struct amaster *m)
{
    m->pending = false;
    if (--c->pending == 0)
        round_end(c);
}

/* m failed this round: the machine hears it, the connection goes. When
 * hiredis is already freeing it (broke, could not connect), only forget it. */
static void master_failed(struct lock_client *c, struct amaster *m, enum rl_result res,
                          const char *why, bool freeing)
{
    rl_sm_master(&c->sm, m->idx, res, NULL, why);
    if (freeing) {
        if (m->ac)
            m->ac->data = NULL;
        m->ac = NULL;
    } else {
        master_drop(m);
    }
    master_settled(c, m);
}

static void on_down(redisAsyncContext *ac)
{
    struct amaster *m = ac->data;
    if (m && m->ac == ac)
        m->ac = NULL;
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    struct amaster *m = priv;
    struct lock_client *c = m->c;
    redisReply *r = reply;
    if (m->ac != ac || !m->pending)
        return; /* a dropped connection's late answer */
    if (!r) { /* the connection broke: hiredis frees it after this */
        bool broken = !m->reloading && m->old &&
                      (ac->err == REDIS_ERR_EOF || ac->err == REDIS_ERR_IO);
        master_failed(c, m, broken ? RL_BROKEN : RL_FAILED,
                      ac->errstr[0] ? ac->errstr : "no reply", true);
        return;
    }
    struct redis_sm_reply rr;
    redis_sm_from_hiredis(r, &rr);
    if (m->reloading) {
        m->reloading = false; /* the command's reply comes next */
        if (!rl_sm_loaded(&c->sm, m->idx, &rr, NULL)) {
            master_drop(m);
            master_settled(c, m);
        }
        return;
    }
    if (rl_sm_master(&c->sm, m->idx, RL_ANSWERED, &rr, NULL))
        master_drop(m);
    master_settled(c, m);
}

/* Queue the round's command (after a SCRIPT LOAD when reconnected) on
 * m's connection, counting its round trip. false when it cannot be. */
static bool master_send(struct lock_client *c, struct amaster *m)
{
    if (m->reloading &&
        redisAsyncCommand(m->ac, on_reply, m, "SCRIPT LOAD %s", redlock_unlock_lua) != REDIS_OK)
        return false;
    if (redisAsyncCommandArgv(m->ac, on_reply, m, c->sm.argc, c->sm.argv, NULL) != REDIS_OK)
        return false;
    c->env->stats->round_trips++;
    return true;
}

/* A reconnected master is up (or not): its commands go out now. */
static void on_connect(const redisAsyncContext *cac, int status)
{
    struct amaster *m = cac->data;
    if (!m || m->ac != cac || !m->pending)
        return;
    struct lock_client *c = m->c;
    if (status != REDIS_OK) { /* hiredis frees it after this: not here */
        master_failed(c, m, RL_FAILED, cac->errstr[0] ? cac->errstr : "cannot connect", true);
        return;
    }
    if (!master_send(c, m)) /* it is going: hiredis frees it (no free inside this call) */
        master_failed(c, m, RL_FAILED, cac->errstr[0] ? cac->errstr : "cannot send", true);
}

/* ------------------------------------------------------------ rounds */

static void round_start(struct lock_client *c)
{
    struct rl_sm *sm = &c->sm;
    c->pending = 0;
    for (int i = 0; i < sm->p.n; i++) {
        struct amaster *m = &c->m[i];
        m->pending = m->old = m->reloading = false;
        if ((sm->mask & (1u << i)) && m->ac) {
            m->old = true;
            if (master_send(c, m)) {
                m->pending = true;
                c->pending++;
            } else {
                rl_sm_master(sm, i, RL_FAILED, NULL,
                             m->ac->errstr[0] ? m->ac->errstr : "cannot send");
                master_drop(m);
            }
        }
    }
    /* the masters that were down are reconnected only now, as on the
     * blocking side; their commands go out when they are up (on_connect) */
    for (int i = 0; i < sm->p.n; i++) {
        struct amaster *m = &c->m[i];
        if (!(sm->mask & (1u << i)) || m->old)
            continue;
        const struct lock_endpoint *ep = &c->env->servers->node[i];
        char what[32];
        snprintf(what, sizeof what, "redlock master %d", i);
        struct lab_err e = {0};
        m->ac = evloop_redis_connect(c->L, what, ep->host, ep->port, m, on_down, &e);
        if (!m->ac) {
            sm->last = e;
            continue;
        }
        redisAsyncSetConnectCallback(m->ac, on_connect);
        m->reloading = sm->kind != RL_OPEN;
        m->pending = true;
        c->pending++;
    }
    /* ended by the last reply or the deadline; with nothing in flight,
     * on the loop's next turn (never inside the hook that started it) */
    c->fan_deadline = lab_now_ns() + sm->timeout_ns;
    evloop_timer_at(c->L, &c->fan_timer, c->pending ? c->fan_deadline : 0);
}

/* The deadline: the masters that have not answered are dropped, a "no".
 * A reply already in a master's socket still counts, as a blocking read
 * finds it there however late it looks: the loop fires its due timers
 * before it reads its sockets. */
static void on_fan_timer(struct ev_timer *t)
{
    struct lock_client *c = (struct lock_client *)((char *)t - offsetof(struct lock_client,
                                                                          fan_timer));
    if (c->pending && lab_now_ns() < c->fan_deadline) {
        /* made due by a stopping run: the replies are still awaited */
        evloop_timer_at(c->L, &c->fan_timer, c->fan_deadline);
        return;
    }
    unsigned gen = c->gen;
    for (int i = 0; i < c->sm.p.n; i++) {
        struct amaster *m = &c->m[i];
        if (!m->pending || !m->ac || !(m->ac->c.flags & REDIS_CONNECTED))
            continue;
        redisAsyncHandleRead(m->ac);
        if (c->gen != gen)
            return; /* those replies ended the round */
    }
    for (int i = 0; i < c->sm.p.n; i++) {
        struct amaster *m = &c->m[i];
        if (!m->pending)
            continue;
        m->pending = false;
        rl_sm_master(&c->sm, i, RL_FAILED, NULL,
                     m->ac && (m->ac->c.flags & REDIS_CONNECTED) ? "no reply in time"
                                                                 : "no connection in time");
        master_drop(m);
    }
    c->pending = 0;
    round_end(c);
}

/* ------------------------------------------------------------ the acts */

static void run(struct lock_client *c, enum rl_act act)
{
    switch (act) {
    case RL_FANOUT:
        round_start(c);
        return;
    case RL_SLEEP:
        evloop_timer_at(c->L, &c->pause, c->sm.wake_at);
        return;
    case RL_DONE:
        lock_caller_done(&c->k, c->sm.open_rc, c->sm.status, c->sm.release, &c->sm.err);
        return;
    }
}

static void on_pause(struct ev_timer *t)
{
    struct lock_client *c = (struct lock_client *)((char *)t - offsetof(struct lock_client,
                                                                          pause));
    run(c, rl_sm_timer(&c->sm, lab_now_ns()));
}

/* ------------------------------------------------------------ hooks */

static void rl_group_close(struct lock_client *c)
{
    if (!c)
        return;
    evloop_timer_cancel(c->L, &c->fan_timer);
    evloop_timer_cancel(c->L, &c->pause);
    lock_caller_close(&c->k);
    for (int i = 0; i < c->sm.p.n; i++) {
        c->m[i].pending = false;
        master_drop(&c->m[i]);
    }
    free(c);
}

static int rl_group_open(struct lock_client **out, const struct lock_env *env,
                         struct evloop *loop, lock_opened_fn opened, void *arg,
                         struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    if (rl_sm_init(&c->sm, env, NULL, err) != 0) {
        free(c);
        return -1;
    }
    c->env = env;
    c->L = loop;
    lock_caller_init(&c->k, loop);
    evloop_timer_init(&c->fan_timer, on_fan_timer);
    evloop_timer_init(&c->pause, on_pause);
    for (int i = 0; i < c->sm.p.n; i++) {
        c->m[i].c = c;
        c->m[i].idx = i;
    }
    lock_caller_begin(&c->k, opened, NULL, NULL, arg);
    run(c, rl_sm_open(&c->sm, lab_now_ns()));
    lock_caller_end(&c->k);
    *out = c;
    return 0;
}

static void rl_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                             lock_acquired_fn done, void *arg)
{
    lock_caller_begin(&c->k, NULL, done, NULL, arg);
    run(c, rl_sm_acquire(&c->sm, key, wait_ns, lab_now_ns()));
    lock_caller_end(&c->k);
}

static void rl_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                             void *arg)
{
    lock_caller_begin(&c->k, NULL, NULL, done, arg);
    run(c, rl_sm_release(&c->sm, key, lab_now_ns()));
    lock_caller_end(&c->k);
}

const struct lock_async_ops rl_group_ops = {
    .client_faults = true, /* a connection per master per client, its own timer */
    .open = rl_group_open,
    .acquire = rl_group_acquire,
    .release = rl_group_release,
    .close = rl_group_close,
};
