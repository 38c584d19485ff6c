/*
 * redlock_async.c - redlock's asynchronous hooks (lock_ops.async), for
 * client groups: the algorithm of redlock.c on hiredis's asynchronous
 * contexts, one per master per logical client, watched by the group's
 * event loop (common/evloop_redis.c).
 *
 * A fan-out is what the blocking one is without the waiting: the command
 * is queued on every master's connection at once, the replies are counted
 * as they come, and the fan-out is decided when every master answered,
 * failed, or reached the round's deadline (REDLOCK_TIMEOUT_MS after the
 * commands went out; one loop timer per client). A master past the
 * deadline is dropped, as a timed-out blocking connection is, unless its
 * reply is already in its socket (a blocking read would find it there).
 * A master that is down is reconnected when the fan-out starts: its commands (the
 * script load first, then the command) go out once the connection is up,
 * and a connection that does not come up by the deadline is a "no". A
 * command whose connection, open before the fan-out, broke under it (the
 * server closed it) is sent once more on a new connection in a second
 * round with a deadline of its own. The random pause between attempts is
 * a second timer. Round trips are counted where the blocking side counts
 * them: one per master a command was written to (a reconnected master's
 * script load and command together are one).
 *
 * Differences in timing only: a connection to a killed master is seen
 * closed by the loop while idle and forgotten then, so the next fan-out
 * reconnects it at once (the blocking side learns it by sending on it and
 * resends, one round trip more); a master being reconnected shares the
 * fan-out's 50 ms deadline for its connect and its reply (the blocking
 * side gives its connect 50 ms of its own first). And when the run stops,
 * a fan-out under way still waits for its replies until its deadline (the
 * group makes every timer due then), so a release at the end of the run
 * still reaches the masters.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evloop_redis.h"
#include "lock_poll.h"
#include "redis_drive.h"
#include "redlock_common.h"

enum fan_kind {
    FAN_OPEN,   /* SCRIPT LOAD on fresh connections (the open) */
    FAN_SET,    /* SET key token NX PX ttl: an attempt */
    FAN_UNLOCK, /* the compare-and-delete after a failed attempt */
    FAN_RELEASE /* the compare-and-delete of the release */
};

struct amaster {
    struct lock_client *c;
    int idx;
    redisAsyncContext *ac; /* NULL while down: reconnected at the next fan-out */
    bool pending;          /* a fan-out waits for it */
    bool old;              /* its connection was open before this round */
    bool reloading;        /* the next reply is a SCRIPT LOAD's (reconnected) */
};

struct lock_client {
    const struct lock_env *env;
    struct evloop *L;
    struct redlock_params p;
    struct amaster *m;         /* p.n of them */
    char sha[41];              /* SHA1 of redlock_unlock_lua */
    char token[33];            /* the held lock's token */
    char try_token[33];        /* the current attempt's token */
    /* the fan-out under way */
    enum fan_kind kind;
    const char *argv[6];
    int argc;
    int pending;               /* masters it still waits for */
    int answered;              /* masters that answered */
    int yes;                   /* votes (SET), deletions (unlock), scripts loaded (open) */
    uint32_t again;            /* broken old connections: their command once more */
    int round;
    unsigned gen;              /* rounds decided so far */
    int64_t fan_deadline;
    struct ev_timer fan_timer; /* the round's deadline */
    /* the operation under way */
    const char *key;
    int64_t wait_deadline;     /* end of the wait budget */
    int64_t t0;                /* when the attempt's SETs went out */
    int attempt;               /* failed attempts of this acquire */
    int most;                  /* most masters that answered one attempt */
    int set_answered;          /* masters that answered the attempt's SETs */
    struct ev_timer pause;     /* the random pause, or an outcome delivered later */
    bool failed;               /* the pause timer delivers err (an error found while starting) */
    bool opening;
    struct lab_err last;       /* the last master failure */
    struct lab_err err;
    lock_opened_fn opened;
    lock_acquired_fn acquired;
    lock_released_fn released;
    void *arg;
};

static void round_done(struct lock_client *c);

/* ------------------------------------------------------------ masters */

static void master_fail(struct lock_client *c, struct amaster *m, const char *why)
{
    lab_err_set(&c->last, EIO, "redlock master %d (%s:%d): %s", m->idx,
                c->env->servers->node[m->idx].host, c->env->servers->node[m->idx].port, why);
}

/* Drop m's connection (still alive: hiredis frees it once the callback it
 * may be inside returns); its pending replies come back to nobody. */
static void master_drop(struct amaster *m)
{
    redisAsyncContext *ac = m->ac;
    m->ac = NULL;
    if (ac) {
        ac->data = NULL;
        redisAsyncFree(ac);
    }
}

/* m is done for this round (answered or failed). */
static void master_settled(struct lock_client *c, struct amaster *m)
{
    m->pending = false;
    if (--c->pending == 0)
        round_done(c);
}

/* hiredis is freeing ac (it could not connect, it broke, or we dropped it). */
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
        if (!m->reloading && m->old &&
            (ac->err == REDIS_ERR_EOF || ac->err == REDIS_ERR_IO))
            c->again |= 1u << m->idx;
        master_fail(c, m, ac->errstr[0] ? ac->errstr : "no reply");
        m->ac = NULL;
        ac->data = NULL;
        master_settled(c, m);
        return;
    }
    bool script = m->reloading || c->kind == FAN_OPEN;
    if (script && !(r->type == REDIS_REPLY_STRING && r->len == 40)) {
        master_fail(c, m, r->type == REDIS_REPLY_ERROR ? r->str : "SCRIPT LOAD returned no SHA1");
        master_drop(m);
        master_settled(c, m);
        return;
    }
    if (script && c->sha[0] == '\0')
        memcpy(c->sha, r->str, 41);
    if (m->reloading) {
        m->reloading = false; /* the command's reply comes next */
        return;
    }
    if (r->type == REDIS_REPLY_ERROR) { /* NOSCRIPT included: the reconnect reloads */
        master_fail(c, m, r->str);
        master_drop(m);
        master_settled(c, m);
        return;
    }
    c->answered++;
    if (c->kind == FAN_OPEN)
        c->yes++;
    else if (c->kind == FAN_SET)
        c->yes += r->type == REDIS_REPLY_STATUS;
    else
        c->yes += r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    master_settled(c, m);
}

/* Queue the fan-out's command (after a SCRIPT LOAD when reconnected) on
 * m's connection, counting its round trip. false when it cannot be. */
static bool master_send(struct lock_client *c, struct amaster *m)
{
    if (m->reloading &&
        redisAsyncCommand(m->ac, on_reply, m, "SCRIPT LOAD %s", redlock_unlock_lua) != REDIS_OK)
        return false;
    if (redisAsyncCommandArgv(m->ac, on_reply, m, c->argc, c->argv, NULL) != REDIS_OK)
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
        master_fail(c, m, cac->errstr[0] ? cac->errstr : "cannot connect");
        m->ac->data = NULL;
        m->ac = NULL;
        master_settled(c, m);
        return;
    }
    if (!master_send(c, m)) { /* it is going: hiredis frees it (no free inside this call) */
        master_fail(c, m, cac->errstr[0] ? cac->errstr : "cannot send");
        m->ac->data = NULL;
        m->ac = NULL;
        master_settled(c, m);
    }
}

/* ------------------------------------------------------------ fan-out */

/* Send the fan-out's command to the masters in mask (one round). */
static void round_start(struct lock_client *c, uint32_t mask, int64_t timeout_ns)
{
    c->again = 0;
    c->pending = 0;
    for (int i = 0; i < c->p.n; i++) {
        struct amaster *m = &c->m[i];
        m->pending = m->old = m->reloading = false;
        if ((mask & (1u << i)) && m->ac) {
            m->old = m->pending = true;
            c->pending++;
            if (!master_send(c, m)) {
                master_fail(c, m, m->ac->errstr[0] ? m->ac->errstr : "cannot send");
                master_drop(m);
                m->pending = false;
                c->pending--;
            }
        }
    }
    /* the masters that were down are reconnected only now, as on the
     * blocking side; their commands go out when they are up (on_connect) */
    for (int i = 0; i < c->p.n; i++) {
        struct amaster *m = &c->m[i];
        if (!(mask & (1u << i)) || m->old)
            continue;
        const struct lock_endpoint *ep = &c->env->servers->node[i];
        char what[32];
        snprintf(what, sizeof what, "redlock master %d", i);
        struct lab_err e = {0};
        m->ac = evloop_redis_connect(c->L, what, ep->host, ep->port, m, on_down, &e);
        if (!m->ac) {
            c->last = e;
            continue;
        }
        redisAsyncSetConnectCallback(m->ac, on_connect);
        m->reloading = c->kind != FAN_OPEN;
        m->pending = true;
        c->pending++;
    }
    /* decided by the last reply or the deadline; with nothing in flight,
     * on the loop's next turn (never inside the hook that started it) */
    c->fan_deadline = lab_now_ns() + timeout_ns;
    evloop_timer_at(c->L, &c->fan_timer, c->pending ? c->fan_deadline : 0);
}

static void fanout_start(struct lock_client *c, enum fan_kind kind, int argc,
                         const char *const *argv)
{
    c->kind = kind;
    c->argc = argc;
    for (int i = 0; i < argc; i++)
        c->argv[i] = argv[i];
    c->answered = c->yes = 0;
    c->round = 0;
    int64_t timeout = kind == FAN_OPEN ? 2 * REDLOCK_OPEN_TIMEOUT_MS * 1000000LL
                                       : REDLOCK_TIMEOUT_MS * 1000000LL;
    round_start(c, redlock_all_masters(&c->p), timeout);
}

/* The deadline: the masters that have not answered are dropped, a "no".
 * A reply already in a master's socket still counts, as a blocking read
 * finds it there however late it looks: the loop fires its due timers
 * before it reads its sockets, and after the group's process was kept off
 * the CPU for a while, replies that came in time would otherwise be
 * thrown away with their connections. */
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
    for (int i = 0; i < c->p.n; i++) {
        struct amaster *m = &c->m[i];
        if (!m->pending || !m->ac || !(m->ac->c.flags & REDIS_CONNECTED))
            continue;
        redisAsyncHandleRead(m->ac);
        if (c->gen != gen)
            return; /* those replies decided the round */
    }
    for (int i = 0; i < c->p.n; i++) {
        struct amaster *m = &c->m[i];
        if (!m->pending)
            continue;
        m->pending = false;
        master_fail(c, m, m->ac && (m->ac->c.flags & REDIS_CONNECTED) ? "no reply in time"
                                                                       : "no connection in time");
        master_drop(m);
    }
    c->pending = 0;
    round_done(c);
}

/* ------------------------------------------------------------ the lock */

static void acquire_done(struct lock_client *c, enum lock_status st)
{
    lock_deliver_acquired(&c->acquired, c->arg, st, &c->err);
}

/* Send an attempt's SETs (its fresh token drawn already: a failed attempt
 * must not overwrite the token of a lock this client holds). */
static void attempt(struct lock_client *c)
{
    c->t0 = lab_now_ns();
    const char *argv[] = {"SET", c->key, c->try_token, "NX", "PX", c->p.ttl_arg};
    fanout_start(c, FAN_SET, 6, argv);
}

static void on_pause(struct ev_timer *t)
{
    struct lock_client *c = (struct lock_client *)((char *)t - offsetof(struct lock_client,
                                                                          pause));
    if (c->failed) {
        c->failed = false;
        acquire_done(c, LOCK_ERROR);
    } else if (*c->env->stop) {
        acquire_done(c, LOCK_TIMEOUT);
    } else if (redlock_new_token(c->try_token, &c->err) != 0) {
        acquire_done(c, LOCK_ERROR);
    } else {
        attempt(c);
    }
}

/* The attempt's SETs are in: granted, or unlock every master. */
static void set_done(struct lock_client *c)
{
    if (redlock_granted(&c->p, c->yes, c->t0, lab_now_ns())) {
        memcpy(c->token, c->try_token, sizeof c->token);
        c->env->stats->lease_floor_ns = redlock_lease_floor(&c->p, c->t0);
        acquire_done(c, LOCK_GRANTED);
        return;
    }
    c->set_answered = c->answered; /* reachability is judged on the SETs */
    const char *argv[] = {"EVALSHA", c->sha, "1", c->key, c->try_token};
    fanout_start(c, FAN_UNLOCK, 5, argv);
}

/* The failed attempt's unlock is in: pause, or give up. */
static void unlock_done(struct lock_client *c)
{
    if (c->set_answered > c->most)
        c->most = c->set_answered;
    c->env->stats->polls++;
    int64_t next = lock_poll_next(c->env, c->attempt++, c->wait_deadline, true);
    if (next > 0) {
        evloop_timer_at(c->L, &c->pause, lab_now_ns() + next);
        return;
    }
    acquire_done(c, redlock_gave_up(&c->p, next, c->most, c->last.msg, &c->err));
}

static void round_done(struct lock_client *c)
{
    c->gen++;
    evloop_timer_cancel(c->L, &c->fan_timer);
    if (c->again && c->round == 0) { /* restarted masters: once more, on new connections */
        c->round = 1;
        round_start(c, c->again, REDLOCK_TIMEOUT_MS * 1000000LL);
        return;
    }
    switch (c->kind) {
    case FAN_OPEN:
        c->opening = false;
        c->opened(c->arg, redlock_open_outcome(&c->p, c->yes, c->last.msg, &c->err), &c->err);
        return;
    case FAN_SET:
        set_done(c);
        return;
    case FAN_UNLOCK:
        unlock_done(c);
        return;
    case FAN_RELEASE: {
        lock_deliver_released(&c->released, c->arg,
                              redlock_release_outcome(&c->p, c->yes, c->answered), &c->err);
        return;
    }
    }
}

/* ------------------------------------------------------------ hooks */

static void redlock_async_close(struct lock_client *c)
{
    if (!c)
        return;
    evloop_timer_cancel(c->L, &c->fan_timer);
    evloop_timer_cancel(c->L, &c->pause);
    for (int i = 0; c->m && i < c->p.n; i++) {
        c->m[i].pending = false;
        master_drop(&c->m[i]);
    }
    free(c->m);
    free(c);
}

static int redlock_async_open(struct lock_client **out, const struct lock_env *env,
                              struct evloop *loop, lock_opened_fn opened, void *arg,
                              struct lab_err *err)
{
    *out = NULL;
    struct redlock_params p;
    if (redis_async_refuse_sentinel(env, err) != 0 || redlock_params_init(&p, env, err) != 0)
        return -1;
    struct lock_client *c = calloc(1, sizeof *c);
    if (c)
        c->m = calloc((size_t)p.n, sizeof *c->m);
    if (!c || !c->m) {
        free(c);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    c->L = loop;
    c->p = p;
    c->opened = opened;
    c->arg = arg;
    c->opening = true;
    evloop_timer_init(&c->fan_timer, on_fan_timer);
    evloop_timer_init(&c->pause, on_pause);
    for (int i = 0; i < p.n; i++) {
        c->m[i].c = c;
        c->m[i].idx = i;
    }
    /* every master connects and loads the script at once; the open's
     * deadline is a connect and a command timeout, as the blocking open
     * gives each master */
    const char *argv[] = {"SCRIPT", "LOAD", redlock_unlock_lua};
    fanout_start(c, FAN_OPEN, 3, argv);
    *out = c;
    return 0;
}

static void redlock_async_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                  lock_acquired_fn done, void *arg)
{
    c->key = key;
    c->acquired = done;
    c->arg = arg;
    c->attempt = 0;
    c->most = 0;
    c->wait_deadline = lab_now_ns() + wait_ns;
    if (redlock_new_token(c->try_token, &c->err) != 0) { /* reported from the loop */
        c->failed = true;
        evloop_timer_at(c->L, &c->pause, 0);
        return;
    }
    attempt(c);
}

static void redlock_async_release(struct lock_client *c, const char *key, lock_released_fn done,
                                  void *arg)
{
    c->key = key;
    c->released = done;
    c->arg = arg;
    const char *argv[] = {"EVALSHA", c->sha, "1", key, c->token};
    fanout_start(c, FAN_RELEASE, 5, argv);
}

const struct lock_async_ops redlock_async_ops = {
    .open = redlock_async_open,
    .acquire = redlock_async_acquire,
    .release = redlock_async_release,
    .close = redlock_async_close,
};
