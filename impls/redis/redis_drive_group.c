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
 * then a new one opened to the single server, or, with sentinels, found
 * as the blocking driver finds it (redis_store_open): ask each sentinel for
 * the master, connect to the one named and check with ROLE that it says
 * master; while a failover is under way, ask again every
 * SENTINEL_RETRY_NS until SENTINEL_SEARCH_NS has passed or the run stops.
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

/* The sentinel topology: how long a client looks for the master, and how
 * often it asks the sentinels meanwhile (as redis_common.c's blocking
 * search does). */
#define SENTINEL_SEARCH_NS (10000000000LL)
#define SENTINEL_RETRY_NS (20000000LL)
#define CMD_TIMEOUT_NS ((int64_t)REDIS_TIMEOUT_MS * 1000000)

enum tkind {
    T_NONE,
    T_SLEEP,   /* the machine's SLEEP */
    T_DELIVER, /* an outcome found inside a hook */
    T_CONNECT, /* the machine's RECONNECT, from the loop */
    T_SEARCH   /* a sentinel search's next round */
};

struct redis_async {
    struct lock_client *client;
    struct evloop *L;
    redisAsyncContext *ac;   /* the store's connection, NULL when there is none */
    redisAsyncContext *sac;  /* a sentinel asked where the master is */
    bool checking;           /* ac is a master candidate its ROLE is asked of */
    bool inflight;           /* the machine's command awaits its reply on ac */
    bool in_hook;            /* inside acquire/release/open: deliver from the loop */
    int sentinel;            /* the sentinel being asked */
    int64_t search_deadline; /* the end of a sentinel search */
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

/* Forget a connection on purpose: its pending replies go to nobody. */
static void drop(redisAsyncContext **slot)
{
    redisAsyncContext *ac = *slot;
    *slot = NULL;
    if (!ac)
        return;
    ac->data = NULL;
    redisAsyncFree(ac);
}

static void on_down(redisAsyncContext *ac)
{
    struct lock_client *c = ac->data;
    if (!c || !c->as)
        return;
    if (c->as->ac == ac)
        c->as->ac = NULL;
    if (c->as->sac == ac)
        c->as->sac = NULL;
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

static void connected(struct lock_client *c, bool ok, const struct lab_err *err)
{
    struct redis_async *a = c->as;
    a->checking = false;
    if (!ok)
        drop(&a->ac);
    run(c, redis_sm_reconnected(c->sm, ok, err, lab_now_ns()));
}

/* A sentinel search found nothing this round: again shortly, or give up. */
static void search_again(struct lock_client *c, const struct lab_err *err)
{
    struct redis_async *a = c->as;
    drop(&a->sac);
    drop(&a->ac);
    a->checking = false;
    if (lab_now_ns() + SENTINEL_RETRY_NS >= a->search_deadline || *c->env->stop) {
        connected(c, false, err);
        return;
    }
    a->sentinel = 0;
    arm(a, T_SEARCH, lab_now_ns() + SENTINEL_RETRY_NS);
}

static void ask_sentinel(struct lock_client *c);

static void on_role(redisAsyncContext *ac, void *reply, void *priv)
{
    struct lock_client *c = priv;
    struct redis_async *a = c ? c->as : NULL;
    if (!a || ac != a->ac || !a->checking)
        return;
    redisReply *r = reply;
    bool master = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
                  r->element[0]->type == REDIS_REPLY_STRING &&
                  strcmp(r->element[0]->str, "master") == 0;
    if (master) {
        connected(c, true, NULL);
        return;
    }
    struct lab_err err;
    lab_err_set(&err, EAGAIN, "the server the sentinels name is not a master");
    search_again(c, &err); /* the master they name is down or demoted: wait for the switch */
}

static void on_sentinel(redisAsyncContext *ac, void *reply, void *priv)
{
    struct lock_client *c = priv;
    struct redis_async *a = c ? c->as : NULL;
    if (!a || ac != a->sac)
        return;
    redisReply *r = reply;
    struct lab_err err = {0};
    bool named = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                 r->element[0]->type == REDIS_REPLY_STRING &&
                 r->element[1]->type == REDIS_REPLY_STRING;
    char host[64] = "";
    int port = 0;
    if (named) {
        snprintf(host, sizeof host, "%s", r->element[0]->str);
        port = atoi(r->element[1]->str);
    }
    /* this sentinel is done with, from the loop (not inside its callback) */
    a->sac = NULL;
    ac->data = NULL;
    redisAsyncFree(ac);
    if (!named) { /* down, or it knows no such master: ask the next */
        a->sentinel++;
        ask_sentinel(c);
        return;
    }
    a->ac = evloop_redis_connect(a->L, "Redis", host, port, c, on_down, &err);
    if (!a->ac || redisAsyncCommand(a->ac, on_role, c, "ROLE") != REDIS_OK) {
        search_again(c, &err);
        return;
    }
    a->checking = true;
}

static void ask_sentinel(struct lock_client *c)
{
    struct redis_async *a = c->as;
    const struct lock_servers *sv = c->env->servers;
    struct lab_err err = {0};
    while (a->sentinel < sv->n) {
        const struct lock_endpoint *ep = &sv->node[a->sentinel];
        a->sac = evloop_redis_connect(a->L, "Redis sentinel", ep->host, ep->port, c, on_down,
                                      &err);
        if (a->sac && redisAsyncCommand(a->sac, on_sentinel, c,
                                        "SENTINEL get-master-addr-by-name %s",
                                        sv->sentinel_master) == REDIS_OK)
            return;
        drop(&a->sac);
        a->sentinel++;
    }
    lab_err_set(&err, EHOSTUNREACH, "no sentinel named a master for %s", sv->sentinel_master);
    search_again(c, &err);
}

/* RECONNECT, from the loop: a new connection to the store. */
static void reconnect(struct lock_client *c)
{
    struct redis_async *a = c->as;
    struct lab_err err = {0};
    if (a->ac)
        c->reconnects++;
    drop(&a->ac);
    drop(&a->sac);
    if (*c->env->stop) {
        lab_err_set(&err, ECANCELED, "redis: the run is stopping");
        connected(c, false, &err);
        return;
    }
    const struct lock_servers *sv = c->env->servers;
    if (sv->sentinel_master[0]) {
        ask_sentinel(c);
        return;
    }
    const struct lock_endpoint *ep = &sv->node[0];
    a->ac = evloop_redis_connect(a->L, "Redis", ep->host, ep->port, c, on_down, &err);
    connected(c, a->ac != NULL, &err);
}

/* ------------------------------------------------------------ the acts */

static void send_cmd(struct lock_client *c)
{
    struct redis_async *a = c->as;
    struct redis_sm *m = c->sm;
    if (!a->ac || redisAsyncCommandArgv(a->ac, on_reply, c, m->argc, m->argv, NULL) != REDIS_OK) {
        run(c, redis_sm_lost(m, a->ac ? a->ac->errstr : "connection lost", lab_now_ns()));
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
    if (!a || ac != a->ac || !a->inflight || a->checking)
        return; /* a connection dropped on purpose, or a ROLE check's */
    a->inflight = false;
    evloop_timer_cancel(a->L, &a->cmd_timer);
    redisReply *r = reply;
    if (!r) {
        a->ac = NULL; /* hiredis frees it after this */
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
    case T_CONNECT:
        a->search_deadline = lab_now_ns() + SENTINEL_SEARCH_NS;
        a->sentinel = 0;
        reconnect(c);
        break;
    case T_SEARCH:
        if (*c->env->stop) {
            struct lab_err err;
            lab_err_set(&err, ECANCELED, "redis: the run is stopping");
            connected(c, false, &err);
        } else {
            ask_sentinel(c);
        }
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
    drop(&a->ac);
    run(c, redis_sm_lost(c->sm, "command timed out", lab_now_ns()));
}

/* ---------------------------------------------------------------- hooks */

int redis_async_refuse_sentinel(const struct lock_env *env, struct lab_err *err)
{
    if (!env->servers->sentinel_master[0])
        return 0;
    lab_err_set(err, ENOTSUP, "client groups do not follow Redis sentinels: use one "
                "process per client with topology sentinel");
    return -1;
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
    evloop_timer_init(&a->timer, on_timer);
    evloop_timer_init(&a->cmd_timer, on_cmd_timeout);
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
    drop(&a->ac);
    drop(&a->sac);
    free(a);
    c->as = NULL;
    free(c->sm);
    free(c);
}
