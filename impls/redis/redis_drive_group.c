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

struct redis_async {
    struct lock_client *client;
    struct evloop *L;
    struct redis_seek seek;  /* seek.ac: the store's connection, NULL when there is none */
    bool inflight;           /* the machine's command awaits its reply on seek.ac */
    bool in_hook;            /* inside acquire/release/open: deliver from the loop */
    struct ev_timer timer;   /* enum tkind */
    enum tkind tkind;
    struct ev_timer cmd_timer; /* the command timeout */
    int64_t cmd_deadline;
    lock_opened_fn opened;
    lock_acquired_fn acquired;
    lock_released_fn released;
    void *arg;
};

static void run(struct lock_client *c, enum redis_sm_act act);
static void on_reply(redisAsyncContext *ac, void *reply, void *priv);

static struct redis_async *of_timer(struct ev_timer *t, size_t off)
{
    return (struct redis_async *)((char *)t - off);
}

static void arm(struct redis_async *a, enum tkind kind, int64_t at)
{
    a->tkind = kind;
    evloop_timer_at(a->L, &a->timer, at);
}

static void on_down(redisAsyncContext *ac)
{
    struct lock_client *c = ac->data;
    if (c && c->as)
        redis_seek_down(&c->as->seek, ac);
}

/* ------------------------------------------------------------ outcomes */

static void deliver(struct lock_client *c)
{
    struct redis_async *a = c->as;
    struct redis_sm *m = c->sm;
    if (a->opened) {
        lock_opened_fn done = a->opened;
        a->opened = NULL;
        done(a->arg, m->open_rc, &m->err);
    } else if (a->acquired) {
        lock_deliver_acquired(&a->acquired, a->arg, m->status, &m->err);
    } else if (a->released) {
        lock_deliver_released(&a->released, a->arg, m->release, &m->err);
    }
}

/* ------------------------------------------------------------ finding the store */

static void found(struct redis_seek *s, bool ok, const struct lab_err *err)
{
    struct redis_async *a = (struct redis_async *)((char *)s - offsetof(struct redis_async, seek));
    run(a->client, redis_sm_reconnected(a->client->sm, ok, err, lab_now_ns()));
}

/* ------------------------------------------------------------ the acts */

static void send_cmd(struct lock_client *c)
{
    struct redis_async *a = c->as;
    struct redis_sm *m = c->sm;
    redisAsyncContext *ac = a->seek.ac;
    if (!ac || redisAsyncCommandArgv(ac, on_reply, c, m->argc, m->argv, NULL) != REDIS_OK) {
        run(c, redis_sm_lost(m, ac ? ac->errstr : "connection lost", lab_now_ns()));
        return;
    }
    a->inflight = true;
    a->cmd_deadline = lab_now_ns() + CMD_TIMEOUT_NS;
    evloop_timer_at(a->L, &a->cmd_timer, a->cmd_deadline);
}

static void run(struct lock_client *c, enum redis_sm_act act)
{
    struct redis_async *a = c->as;
    struct redis_sm *m = c->sm;
    for (;;) {
        switch (act) {
        case REDIS_SM_SEND:
            send_cmd(c);
            return;
        case REDIS_SM_RECONNECT:
            arm(a, T_CONNECT, 0);
            return;
        case REDIS_SM_SLEEP:
            arm(a, T_SLEEP, m->wake_at);
            return;
        case REDIS_SM_FAILPOINT: /* its action stops the whole group */
            failpoint_hit(m->fp, c->env->stop);
            act = redis_sm_resume(m, lab_now_ns());
            continue;
        case REDIS_SM_DONE:
            if (a->in_hook)
                arm(a, T_DELIVER, 0);
            else
                deliver(c);
            return;
        }
    }
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    struct lock_client *c = priv;
    struct redis_async *a = c ? c->as : NULL;
    if (!a || ac != a->seek.ac || !a->inflight || a->seek.checking)
        return; /* a connection dropped on purpose, or a ROLE check's */
    a->inflight = false;
    evloop_timer_cancel(a->L, &a->cmd_timer);
    redisReply *r = reply;
    if (!r) {
        a->seek.ac = NULL; /* hiredis frees it after this */
        run(c, redis_sm_lost(c->sm, ac->errstr[0] ? ac->errstr : "connection lost",
                             lab_now_ns()));
        return;
    }
    struct redis_sm_reply rr;
    redis_sm_from_hiredis(r, &rr);
    run(c, redis_sm_reply(c->sm, &rr, lab_now_ns()));
}

static void on_timer(struct ev_timer *t)
{
    struct redis_async *a = of_timer(t, offsetof(struct redis_async, timer));
    struct lock_client *c = a->client;
    enum tkind kind = a->tkind;
    a->tkind = T_NONE;
    switch (kind) {
    case T_SLEEP:
        run(c, redis_sm_timer(c->sm, lab_now_ns()));
        break;
    case T_DELIVER:
        deliver(c);
        break;
    case T_CONNECT: /* a new connection to the store */
        if (a->seek.ac)
            c->reconnects++;
        redis_seek_start(&a->seek);
        break;
    case T_NONE:
        break;
    }
}

/* The command timed out: drop the connection, fed as a loss. The run's
 * stop makes every timer due: a command not yet late is left to answer. */
static void on_cmd_timeout(struct ev_timer *t)
{
    struct redis_async *a = of_timer(t, offsetof(struct redis_async, cmd_timer));
    struct lock_client *c = a->client;
    if (!a->inflight)
        return;
    if (lab_now_ns() < a->cmd_deadline) {
        evloop_timer_at(a->L, &a->cmd_timer, a->cmd_deadline);
        return;
    }
    a->inflight = false;
    redis_seek_drop(&a->seek.ac);
    run(c, redis_sm_lost(c->sm, "command timed out", lab_now_ns()));
}

/* ---------------------------------------------------------------- hooks */

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
    evloop_timer_init(&a->timer, on_timer);
    evloop_timer_init(&a->cmd_timer, on_cmd_timeout);
    redis_seek_init(&a->seek, loop, env, "Redis", c, on_down, found);
    int rc = lab_random_hex(c->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        redis_group_close(c);
        return -1;
    }
    redis_sm_init(m, d, env, c->token);
    a->opened = opened;
    a->arg = arg;
    a->in_hook = true;
    run(c, redis_sm_open(m, lab_now_ns()));
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
    run(c, redis_sm_acquire(c->sm, key, wait_ns, lab_now_ns()));
    a->in_hook = false;
}

void redis_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                         void *arg)
{
    struct redis_async *a = c->as;
    a->released = done;
    a->arg = arg;
    a->in_hook = true;
    run(c, redis_sm_release(c->sm, key, lab_now_ns()));
    a->in_hook = false;
}

void redis_group_close(struct lock_client *c)
{
    if (!c)
        return;
    struct redis_async *a = c->as;
    evloop_timer_cancel(a->L, &a->timer);
    evloop_timer_cancel(a->L, &a->cmd_timer);
    a->opened = NULL;
    a->acquired = NULL;
    a->released = NULL;
    a->inflight = false;
    redis_seek_close(&a->seek);
    free(a);
    c->as = NULL;
    free(c->sm);
    free(c);
}
