/*
 * redis_drive_group.c - the client groups' driver of the Redis state
 * machine (redis_drive.h): the machine's acts on hiredis's asynchronous
 * connections and the group's event loop.
 *
 * SEND queues one command (its reply, or NULL when the connection went,
 * is fed back from hiredis's callback) and arms a command timeout of
 * REDIS_TIMEOUT_MS, as the blocking connection has one; a timeout drops
 * the connection and is fed as a loss. SLEEP is a timer. RECONNECT runs on
 * the loop, never inside a hiredis callback: the old connection is freed,
 * then a new one found as the blocking driver finds it (redis_store_open),
 * by the group drivers' search (redis_drive_seek.c): the single server,
 * or the master the sentinels name.
 * An outcome found inside the hook that started the operation is handed
 * over from the loop, never from inside that call (lock.h).
 *
 * A connection and the machine on it are a lane: the client's commands go
 * on one; a design that renews its lock has a second for its renewals (a
 * second machine, redis_sm_init_renewal), run by a per-client timer on
 * watchdog.h's schedule, as the blocking driver's watchdog thread renews
 * on a connection of its own. Every socket and timer is the client's.
 */
#include "redis_drive.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "evloop_redis.h"
#include "redis_common.h"

#define CMD_TIMEOUT_NS ((int64_t)REDIS_TIMEOUT_MS * 1000000)

enum tkind {
    T_NONE,
    T_SLEEP,   /* the machine's SLEEP */
    T_DELIVER, /* an outcome found inside a hook */
    T_CONNECT  /* the machine's RECONNECT, from the loop */
};

/* A machine and its connection. */
struct lane {
    struct redis_async *a;
    struct redis_sm *m;
    struct redis_seek seek;  /* seek.ac: the connection, NULL when there is none */
    bool inflight;           /* the machine's command awaits its reply on seek.ac */
    struct ev_timer timer;   /* enum tkind */
    enum tkind tkind;
    struct ev_timer cmd_timer; /* the command timeout */
    int64_t cmd_deadline;
};

struct redis_async {
    struct lock_client *client;
    struct evloop *L;
    struct lane cmd;         /* the client's commands */
    struct lane renew;       /* its renewals (renew.m NULL: a design that renews not) */
    struct redis_sm renewal;
    struct watch_plan plan;  /* the renewals' schedule */
    struct ev_timer watch_timer;
    bool armed, renewing;    /* a hold to renew; a renewal under way */
    unsigned gen, renew_gen; /* bumped by every arm and disarm; the renewal's */
    int64_t armed_at, renew_sent;
    char watch_key[256];
    bool in_hook;            /* inside acquire/release/open: deliver from the loop */
    lock_opened_fn opened;
    lock_acquired_fn acquired;
    lock_released_fn released;
    void *arg;
};

static void run(struct lane *l, enum redis_sm_act act);
static void on_reply(redisAsyncContext *ac, void *reply, void *priv);

static void arm(struct lane *l, enum tkind kind, int64_t at)
{
    l->tkind = kind;
    evloop_timer_at(l->a->L, &l->timer, at);
}

static void on_down(redisAsyncContext *ac)
{
    struct lane *l = ac->data;
    if (l)
        redis_seek_down(&l->seek, ac);
}

/* ------------------------------------------------------------ outcomes */

static void deliver(struct redis_async *a)
{
    struct redis_sm *m = a->cmd.m;
    if (a->opened) {
        lock_opened_fn done = a->opened;
        a->opened = NULL;
        if (m->open_rc == 0 && a->renew.m) /* the open loaded the renewal's script */
            redis_sm_init_renewal(&a->renewal, m);
        done(a->arg, m->open_rc, &m->err);
    } else if (a->acquired) {
        lock_deliver_acquired(&a->acquired, a->arg, m->status, &m->err);
    } else if (a->released) {
        lock_deliver_released(&a->released, a->arg, m->release, &m->err);
    }
}

/* ------------------------------------------------------------ renewals */

static void watch_next(struct redis_async *a)
{
    if (a->armed && !a->renewing)
        evloop_timer_at(a->L, &a->watch_timer, watch_plan_next(&a->plan, lab_now_ns()));
}

static void watch(struct redis_async *a)
{
    struct redis_sm *m = a->cmd.m;
    if (m->watch == RSM_WATCH_ARM && a->renew.m) {
        snprintf(a->watch_key, sizeof a->watch_key, "%s", m->key);
        a->armed = true;
        a->gen++;
        a->armed_at = lab_now_ns();
        watch_plan_arm(&a->plan, a->armed_at);
        watch_next(a);
    } else if (m->watch == RSM_WATCH_DISARM) {
        a->armed = false;
        a->gen++;
        evloop_timer_cancel(a->L, &a->watch_timer);
    }
    m->watch = RSM_WATCH_NONE;
}

static void on_watch_timer(struct ev_timer *t)
{
    struct redis_async *a = (struct redis_async *)((char *)t - offsetof(struct redis_async,
                                                                         watch_timer));
    if (!a->armed || a->renewing || *a->client->env->stop)
        return;
    a->renewing = true;
    a->renew_gen = a->gen;
    a->renew_sent = lab_now_ns();
    run(&a->renew, redis_sm_renew(&a->renewal, a->watch_key, a->renew_sent));
}

static void renewed(struct redis_async *a)
{
    a->renewing = false;
    bool keep = watch_plan_renewed(&a->plan, a->renewal.renewed, a->renew_sent, lab_now_ns(),
                                   a->client->env->stats);
    if (a->renew_gen != a->gen) /* a hold that ended meanwhile: the new one's plan */
        watch_plan_arm(&a->plan, a->armed_at);
    else if (!keep)
        a->armed = false;
    watch_next(a);
}

/* ------------------------------------------------------------ finding the store */

static void found(struct redis_seek *s, bool ok, const struct lab_err *err)
{
    struct lane *l = (struct lane *)((char *)s - offsetof(struct lane, seek));
    run(l, redis_sm_reconnected(l->m, ok, err, lab_now_ns()));
}

/* ------------------------------------------------------------ the acts */

static void send_cmd(struct lane *l)
{
    struct redis_sm *m = l->m;
    redisAsyncContext *ac = l->seek.ac;
    if (!ac || redisAsyncCommandArgv(ac, on_reply, l, m->argc, m->argv, NULL) != REDIS_OK) {
        run(l, redis_sm_lost(m, ac ? ac->errstr : "connection lost", lab_now_ns()));
        return;
    }
    l->inflight = true;
    l->cmd_deadline = lab_now_ns() + CMD_TIMEOUT_NS;
    evloop_timer_at(l->a->L, &l->cmd_timer, l->cmd_deadline);
}

static void run(struct lane *l, enum redis_sm_act act)
{
    struct redis_async *a = l->a;
    struct redis_sm *m = l->m;
    for (;;) {
        watch(a);
        switch (act) {
        case REDIS_SM_SEND:
            send_cmd(l);
            return;
        case REDIS_SM_RECONNECT:
            arm(l, T_CONNECT, 0);
            return;
        case REDIS_SM_SLEEP:
            arm(l, T_SLEEP, m->wake_at);
            return;
        case REDIS_SM_FAILPOINT: /* its action stops the whole group */
            failpoint_hit(m->fp, a->client->env->stop);
            act = redis_sm_resume(m, lab_now_ns());
            continue;
        case REDIS_SM_DONE:
            if (l == &a->renew)
                renewed(a);
            else if (a->in_hook)
                arm(l, T_DELIVER, 0);
            else
                deliver(a);
            return;
        }
    }
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    struct lane *l = priv;
    if (!ac->data || ac != l->seek.ac || !l->inflight || l->seek.checking)
        return; /* a connection dropped on purpose, or a ROLE check's */
    l->inflight = false;
    evloop_timer_cancel(l->a->L, &l->cmd_timer);
    redisReply *r = reply;
    if (!r) {
        l->seek.ac = NULL; /* hiredis frees it after this */
        run(l, redis_sm_lost(l->m, ac->errstr[0] ? ac->errstr : "connection lost",
                             lab_now_ns()));
        return;
    }
    struct redis_sm_reply rr;
    redis_sm_from_hiredis(r, &rr);
    run(l, redis_sm_reply(l->m, &rr, lab_now_ns()));
}

static void on_timer(struct ev_timer *t)
{
    struct lane *l = (struct lane *)((char *)t - offsetof(struct lane, timer));
    enum tkind kind = l->tkind;
    l->tkind = T_NONE;
    switch (kind) {
    case T_SLEEP:
        run(l, redis_sm_timer(l->m, lab_now_ns()));
        break;
    case T_DELIVER:
        deliver(l->a);
        break;
    case T_CONNECT: /* a new connection to the store */
        if (l->seek.ac && l == &l->a->cmd)
            l->a->client->reconnects++;
        redis_seek_start(&l->seek);
        break;
    case T_NONE:
        break;
    }
}

/* The command timed out: drop the connection, fed as a loss. The run's
 * stop makes every timer due: a command not yet late is left to answer. */
static void on_cmd_timeout(struct ev_timer *t)
{
    struct lane *l = (struct lane *)((char *)t - offsetof(struct lane, cmd_timer));
    if (!l->inflight)
        return;
    if (lab_now_ns() < l->cmd_deadline) {
        evloop_timer_at(l->a->L, &l->cmd_timer, l->cmd_deadline);
        return;
    }
    l->inflight = false;
    redis_seek_drop(&l->seek.ac);
    run(l, redis_sm_lost(l->m, "command timed out", lab_now_ns()));
}

/* ---------------------------------------------------------------- hooks */

static void lane_init(struct lane *l, struct redis_async *a, struct redis_sm *m)
{
    l->a = a;
    l->m = m;
    evloop_timer_init(&l->timer, on_timer);
    evloop_timer_init(&l->cmd_timer, on_cmd_timeout);
    redis_seek_init(&l->seek, a->L, a->client->env, "Redis", l, on_down, found);
}

static void lane_close(struct lane *l)
{
    if (!l->m)
        return;
    evloop_timer_cancel(l->a->L, &l->timer);
    evloop_timer_cancel(l->a->L, &l->cmd_timer);
    l->inflight = false;
    redis_seek_close(&l->seek);
}

int redis_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                     const struct redis_sm_design *d, lock_opened_fn opened, void *arg,
                     struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    struct redis_async *a = calloc(1, sizeof *a);
    struct redis_sm *m = calloc(1, sizeof *m);
    if (!c || !a || !m) {
        free(c);
        free(a);
        free(m);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    c->as = a;
    c->sm = m;
    a->L = loop;
    a->client = c;
    evloop_timer_init(&a->watch_timer, on_watch_timer);
    lane_init(&a->cmd, a, m);
    int rc = lab_random_hex(c->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        redis_group_close(c);
        return -1;
    }
    redis_sm_init(m, d, env, c->token);
    if (redis_sm_renews(m)) {
        lane_init(&a->renew, a, &a->renewal);
        watch_plan_init(&a->plan, env->ttl_ns);
    }
    a->opened = opened;
    a->arg = arg;
    a->in_hook = true;
    run(&a->cmd, redis_sm_open(m, lab_now_ns()));
    a->in_hook = false;
    *out = c;
    return 0;
}

void redis_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                         lock_acquired_fn done, void *arg)
{
    struct redis_async *a = c->as;
    a->acquired = done;
    a->arg = arg;
    a->in_hook = true;
    run(&a->cmd, redis_sm_acquire(c->sm, key, wait_ns, lab_now_ns()));
    a->in_hook = false;
}

void redis_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                         void *arg)
{
    struct redis_async *a = c->as;
    a->released = done;
    a->arg = arg;
    a->in_hook = true;
    run(&a->cmd, redis_sm_release(c->sm, key, lab_now_ns()));
    a->in_hook = false;
}

void redis_group_close(struct lock_client *c)
{
    if (!c)
        return;
    struct redis_async *a = c->as;
    evloop_timer_cancel(a->L, &a->watch_timer);
    a->opened = NULL;
    a->acquired = NULL;
    a->released = NULL;
    lane_close(&a->cmd);
    lane_close(&a->renew);
    free(a);
    c->as = NULL;
    free(c->sm);
    free(c);
}
