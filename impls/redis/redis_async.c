/*
 * redis_async.c - the asynchronous side of the simple Redis designs (see
 * redis_async.h), for client groups.
 *
 * A client is a small state machine on the group's event loop: each step
 * sends one command and its reply decides the next (another command, a
 * retry timer, or the end of the operation). The acquire polls exactly as
 * lock_poll does (same pause, same counting of polls and of the lease
 * floor) with the pause as a timer instead of a sleep. Scripts are called
 * by SHA1, loaded once when the client opens; a server that lost them
 * (restarted empty) is sent the script's source instead (EVAL). A
 * connection that broke is replaced by a new one before the next command,
 * as redis_cmd replaces a blocking one; the command it broke under fails
 * (the operation is an error, counted by the client as the blocking path
 * counts it).
 */
#include "redis_async.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evloop_redis.h"
#include "failpoint.h"
#include "redis_common.h"

enum step {
    STEP_OPEN_RELEASE, /* SCRIPT LOAD of the release script */
    STEP_OPEN_FENCE,   /* SCRIPT LOAD of the granting script */
    STEP_OPEN_PING,    /* a design with no script: the connection answers */
    STEP_SET,          /* SET key value NX PX ttl */
    STEP_FENCED,       /* the granting script */
    STEP_SETNX,        /* SETNX key token */
    STEP_PEXPIRE,      /* PEXPIRE key ttl, after a SETNX that won */
    STEP_RELEASE_SCRIPT, /* the compare-and-delete script */
    STEP_DEL           /* DEL key */
};

struct redis_async {
    struct lock_client *client; /* whose side this is */
    struct evloop *L;
    redisAsyncContext *ac;     /* NULL when broken: a new one before the next command */
    enum redis_async_kind kind;
    struct ev_timer timer;     /* the retry pause, or an outcome delivered later */
    char release_sha[41];      /* SHA1 of the compare-and-delete script */
    char fence_sha[41];        /* SHA1 of the granting script (fencing) */
    char ttl[24];              /* the TTL in ms, as sent */
    const struct failpoint *fp_after_setnx;
    /* the operation under way */
    enum step step;
    bool eval_src;             /* the script goes as source (the server lost it) */
    const char *key;
    char fence_key[300];
    int64_t deadline;          /* end of the wait budget */
    int64_t sent;              /* when the current attempt was sent */
    int attempt;               /* attempts that found the lock taken */
    int opening;               /* replies the open still waits for */
    enum step open_steps[2];   /* what the open sent, in order (replies come so) */
    int open_next;             /* the open step the next reply answers */
    bool failed;               /* the timer delivers err (an error found while starting) */
    struct lab_err err;
    lock_opened_fn opened;
    lock_acquired_fn acquired;
    lock_released_fn released;
    void *arg;
};

static void on_reply(redisAsyncContext *ac, void *reply, void *priv);

static void on_down(redisAsyncContext *ac)
{
    struct lock_client *c = ac->data;
    if (c && c->as && c->as->ac == ac)
        c->as->ac = NULL;
}

static int conn_ready(struct lock_client *c, struct lab_err *err)
{
    struct redis_async *a = c->as;
    if (a->ac)
        return 0;
    const struct lock_endpoint *ep = &c->env->servers->node[0];
    a->ac = evloop_redis_connect(a->L, "Redis", ep->host, ep->port, c, on_down, err);
    c->reconnects++;
    return a->ac ? 0 : -1;
}

/* Send the command of a->step (counting its round trip). 0 or -1. */
static int send_step(struct lock_client *c)
{
    struct redis_async *a = c->as;
    if (conn_ready(c, &a->err) != 0)
        return -1;
    const char *argv[8];
    int argc = 0;
    const char *val = a->kind == REDIS_ASYNC_SET_DEL ? "locked" : c->token;
    switch (a->step) {
    case STEP_OPEN_RELEASE:
    case STEP_OPEN_FENCE:
        argv[0] = "SCRIPT", argv[1] = "LOAD";
        argv[2] = a->step == STEP_OPEN_FENCE ? redis_fenced_set_nx_px_lua
                                             : redis_compare_and_delete_lua;
        argc = 3;
        break;
    case STEP_OPEN_PING:
        argv[argc++] = "PING";
        break;
    case STEP_SET:
        argv[0] = "SET", argv[1] = a->key, argv[2] = val, argv[3] = "NX", argv[4] = "PX";
        argv[5] = a->ttl;
        argc = 6;
        break;
    case STEP_FENCED:
        argv[0] = a->eval_src ? "EVAL" : "EVALSHA";
        argv[1] = a->eval_src ? redis_fenced_set_nx_px_lua : a->fence_sha;
        argv[2] = "2", argv[3] = a->key, argv[4] = a->fence_key, argv[5] = c->token;
        argv[6] = a->ttl;
        argc = 7;
        break;
    case STEP_SETNX:
        argv[0] = "SETNX", argv[1] = a->key, argv[2] = c->token;
        argc = 3;
        break;
    case STEP_PEXPIRE:
        argv[0] = "PEXPIRE", argv[1] = a->key, argv[2] = a->ttl;
        argc = 3;
        break;
    case STEP_RELEASE_SCRIPT:
        argv[0] = a->eval_src ? "EVAL" : "EVALSHA";
        argv[1] = a->eval_src ? redis_compare_and_delete_lua : a->release_sha;
        argv[2] = "1", argv[3] = a->key, argv[4] = c->token, argv[5] = a->ttl;
        argc = 6;
        break;
    case STEP_DEL:
        argv[0] = "DEL", argv[1] = a->key;
        argc = 2;
        break;
    }
    if (a->step >= STEP_SET)
        c->env->stats->round_trips++;
    if (redisAsyncCommandArgv(a->ac, on_reply, c, argc, argv, NULL) != REDIS_OK) {
        lab_err_set(&a->err, EIO, "redis: cannot send (%s)", a->ac->errstr);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ outcomes */

static void open_done(struct lock_client *c, int rc)
{
    struct redis_async *a = c->as;
    a->opening = 0;
    a->opened(a->arg, rc, &a->err);
}

static void acquire_done(struct lock_client *c, enum lock_status st)
{
    struct redis_async *a = c->as;
    if (st == LOCK_GRANTED) /* the TTL starts at or after sent, in whole ms */
        c->env->stats->lease_floor_ns = a->sent + c->env->ttl_ns / 1000000 * 1000000;
    lock_deliver_acquired(&a->acquired, a->arg, st, &a->err);
}

static void release_done(struct lock_client *c, enum release_status rs)
{
    struct redis_async *a = c->as;
    lock_deliver_released(&a->released, a->arg, rs, &a->err);
}

/* The operation under way failed. */
static void op_failed(struct lock_client *c)
{
    struct redis_async *a = c->as;
    if (a->opening)
        open_done(c, -1);
    else if (a->acquired)
        acquire_done(c, LOCK_ERROR);
    else if (a->released)
        release_done(c, RELEASE_ERROR);
}

/* Send a->step; a failure to send is delivered from the loop, not from
 * inside the hook that started the operation. */
static void send_or_fail_later(struct lock_client *c)
{
    struct redis_async *a = c->as;
    if (send_step(c) == 0)
        return;
    a->failed = true;
    evloop_timer_at(a->L, &a->timer, 0);
}

static void attempt(struct lock_client *c)
{
    struct redis_async *a = c->as;
    a->sent = lab_now_ns();
    a->eval_src = false;
    a->step = a->kind == REDIS_ASYNC_SETNX_EXPIRE ? STEP_SETNX
              : c->env->fencing && a->kind == REDIS_ASYNC_LUA ? STEP_FENCED
                                                             : STEP_SET;
    send_or_fail_later(c);
}

static void on_timer(struct ev_timer *t)
{
    struct redis_async *a = (struct redis_async *)((char *)t - offsetof(struct redis_async, timer));
    struct lock_client *c = a->client;
    if (a->failed) {
        a->failed = false;
        op_failed(c);
    } else if (*c->env->stop) {
        acquire_done(c, LOCK_TIMEOUT);
    } else {
        attempt(c);
    }
}

/* The lock was taken: pause, or give up when the budget is spent. */
static void taken(struct lock_client *c)
{
    struct redis_async *a = c->as;
    c->env->stats->polls++;
    int64_t pause = lock_poll_next(c->env, a->attempt++, a->deadline, false);
    if (pause <= 0)
        acquire_done(c, LOCK_TIMEOUT);
    else
        evloop_timer_at(a->L, &a->timer, lab_now_ns() + pause);
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    struct lock_client *c = priv;
    struct redis_async *a = c->as;
    redisReply *r = reply;
    if (!r) {
        lab_err_set(&a->err, EIO, "redis: %s", ac && ac->errstr[0] ? ac->errstr
                                                                   : "connection lost");
        op_failed(c);
        return;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        if (strncmp(r->str, "NOSCRIPT", 8) == 0 && !a->eval_src) {
            a->eval_src = true; /* the server lost it: its source this once */
            send_or_fail_later(c);
            return;
        }
        lab_err_set(&a->err, EPROTO, "redis: %s", r->str);
        op_failed(c);
        return;
    }
    enum step step = a->opening ? a->open_steps[a->open_next++] : a->step;
    switch (step) {
    case STEP_OPEN_RELEASE:
    case STEP_OPEN_FENCE:
        if (r->type != REDIS_REPLY_STRING || r->len != 40) {
            lab_err_set(&a->err, EPROTO, "SCRIPT LOAD returned no SHA1");
            open_done(c, -1);
            return;
        }
        memcpy(step == STEP_OPEN_FENCE ? a->fence_sha : a->release_sha, r->str, 41);
        /* fallthrough */
    case STEP_OPEN_PING:
        if (--a->opening == 0)
            open_done(c, 0);
        return;
    case STEP_SET:
        if (r->type == REDIS_REPLY_STATUS)
            acquire_done(c, LOCK_GRANTED);
        else
            taken(c);
        return;
    case STEP_FENCED:
        if (r->type == REDIS_REPLY_INTEGER && r->integer > 0) {
            c->env->stats->fence_token = r->integer;
            acquire_done(c, LOCK_GRANTED);
        } else {
            taken(c);
        }
        return;
    case STEP_SETNX:
        if (!(r->type == REDIS_REPLY_INTEGER && r->integer == 1)) {
            taken(c);
            return;
        }
        failpoint_hit(a->fp_after_setnx, c->env->stop); /* stops the whole group */
        a->step = STEP_PEXPIRE;
        send_or_fail_later(c);
        return;
    case STEP_PEXPIRE:
        acquire_done(c, LOCK_GRANTED);
        return;
    case STEP_RELEASE_SCRIPT:
    case STEP_DEL:
        release_done(c, r->type == REDIS_REPLY_INTEGER && r->integer > 0 ? RELEASE_OK
                                                                          : RELEASE_NOT_OWNER);
        return;
    }
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

int redis_async_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                     enum redis_async_kind kind, lock_opened_fn opened, void *arg,
                     struct lab_err *err)
{
    *out = NULL;
    if (redis_async_refuse_sentinel(env, err) != 0)
        return -1;
    struct lock_client *c = calloc(1, sizeof *c);
    struct redis_async *a = calloc(1, sizeof *a);
    if (!c || !a) {
        free(c);
        free(a);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    c->as = a;
    a->L = loop;
    a->kind = kind;
    a->client = c;
    a->opened = opened;
    a->arg = arg;
    evloop_timer_init(&a->timer, on_timer);
    snprintf(a->ttl, sizeof a->ttl, "%lld", redis_ttl_ms(c));
    if (kind == REDIS_ASYNC_SETNX_EXPIRE)
        a->fp_after_setnx = failpoint_find("redis-setnx-expire", "after-setnx");
    int rc = lab_random_hex(c->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        redis_async_close(c);
        return -1;
    }
    /* the scripts its operations call, loaded once (no script: a PING) */
    enum step *steps = a->open_steps;
    int n = 0;
    if (kind == REDIS_ASYNC_LUA)
        steps[n++] = STEP_OPEN_RELEASE;
    if (kind == REDIS_ASYNC_LUA && env->fencing)
        steps[n++] = STEP_OPEN_FENCE;
    if (n == 0)
        steps[n++] = STEP_OPEN_PING;
    a->opening = n;
    for (int i = 0; i < n; i++) {
        a->step = steps[i];
        if (send_step(c) != 0) {
            *err = a->err;
            redis_async_close(c);
            return -1;
        }
    }
    *out = c;
    return 0;
}

void redis_async_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                         lock_acquired_fn done, void *arg)
{
    struct redis_async *a = c->as;
    a->key = key;
    a->acquired = done;
    a->arg = arg;
    a->attempt = 0;
    a->deadline = lab_now_ns() + wait_ns;
    if (c->env->fencing && a->kind == REDIS_ASYNC_LUA &&
        redis_fence_key(a->fence_key, sizeof a->fence_key, key, &a->err) != 0) {
        a->failed = true;
        evloop_timer_at(a->L, &a->timer, 0);
        return;
    }
    attempt(c);
}

void redis_async_release(struct lock_client *c, const char *key, lock_released_fn done,
                         void *arg)
{
    struct redis_async *a = c->as;
    a->key = key;
    a->released = done;
    a->arg = arg;
    a->eval_src = false;
    a->step = a->kind == REDIS_ASYNC_LUA ? STEP_RELEASE_SCRIPT : STEP_DEL;
    send_or_fail_later(c);
}

void redis_async_close(struct lock_client *c)
{
    if (!c)
        return;
    struct redis_async *a = c->as;
    evloop_timer_cancel(a->L, &a->timer);
    a->opening = 0;
    a->acquired = NULL;
    a->released = NULL;
    if (a->ac) {
        redisAsyncContext *ac = a->ac;
        a->ac = NULL;
        ac->data = NULL; /* its pending replies come back to nobody */
        redisAsyncFree(ac);
    }
    free(a);
    free(c);
}
