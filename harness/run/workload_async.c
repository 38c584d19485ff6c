/*
 * workload_async.c - the counter and stock workloads on an event loop
 * (see workload_async.h).
 *
 * Each unit is a chain of steps, every one the same request the blocking
 * workload (workload.c) sends, in the same order, each waiting for the
 * answer to the one before: the read, then the business time (a timer),
 * then the write(s). The counter is read and written with plain volatile
 * accesses, on purpose, as workload.c does.
 */
#include "workload_async.h"

#include <errno.h>
#include <hiredis/async.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evloop_redis.h"

enum wstep {
    W_OPEN,        /* the open's replies (SCRIPT LOAD, PING) */
    W_READ,        /* GET stock, or the fenced read */
    W_BUSINESS,    /* the business timer is running */
    W_WRITE,       /* SET stock, or the fenced write */
    W_SOLD,        /* INCR sold */
    W_OPTIMISTIC   /* an optimistic design's business (workload_async_business) */
};

struct workload_async {
    const struct scenario *s;
    volatile int64_t *counter;   /* the counter workload's value */
    struct evloop *L;
    redisAsyncContext *ac;       /* the stock store (stock workload) */
    bool fenced;
    char read_sha[41], write_sha[41];
    struct ev_timer timer;       /* business time, or an outcome delivered later */
    enum wstep step;
    int opening;                 /* open replies still due */
    int64_t token;
    long long stock;             /* what the read found */
    int64_t value;               /* the counter as read */
    bool failed;                 /* the timer delivers err */
    struct lab_err err;
    struct workload_trace tr;    /* the unit in progress (workload_async_traced) */
    lock_opened_fn opened;
    workload_done_fn done;
    void *arg;
};

static void on_reply(redisAsyncContext *ac, void *reply, void *priv);

/* An access to the resource was answered now (workload.h). */
static void traced_access(struct workload_async *w)
{
    w->tr.last_access_ns = lab_now_ns();
}

static void on_down(redisAsyncContext *ac)
{
    struct workload_async *w = ac->data;
    if (w && w->ac == ac)
        w->ac = NULL;
}

static void finish(struct workload_async *w, enum workload_step ws)
{
    workload_done_fn done = w->done;
    w->done = NULL;
    done(w->arg, ws, &w->err);
}

static void fail_later(struct workload_async *w)
{
    w->failed = true;
    evloop_timer_at(w->L, &w->timer, 0);
}

/* Send one command to the stock store; a failure is delivered later. */
static void send_argv(struct workload_async *w, int argc, const char **argv)
{
    if (!w->ac) {
        lab_err_set(&w->err, EIO, "stock store: the connection was lost");
        fail_later(w);
    } else if (redisAsyncCommandArgv(w->ac, on_reply, w, argc, argv, NULL) != REDIS_OK) {
        lab_err_set(&w->err, EIO, "stock store: %s", w->ac->errstr);
        fail_later(w);
    }
}

static void send_fenced(struct workload_async *w, bool write)
{
    char tok[24], val[24];
    snprintf(tok, sizeof tok, "%lld", (long long)w->token);
    snprintf(val, sizeof val, "%lld", w->stock - 1);
    const char *argv[10] = {"EVALSHA", write ? w->write_sha : w->read_sha, write ? "4" : "3",
                            STOCK_KEY};
    int argc = 4;
    if (write)
        argv[argc++] = SOLD_KEY;
    argv[argc++] = FENCE_KEY;
    argv[argc++] = write ? STALE_WRITES_KEY : STALE_READS_KEY;
    argv[argc++] = tok;
    argv[argc++] = write ? val : "0";
    send_argv(w, argc, argv);
}

static void write_step(struct workload_async *w)
{
    w->step = W_WRITE;
    if (w->fenced) {
        send_fenced(w, true);
        return;
    }
    char val[24];
    snprintf(val, sizeof val, "%lld", w->stock - 1);
    const char *argv[] = {"SET", STOCK_KEY, val};
    send_argv(w, 3, argv);
}

static void on_timer(struct ev_timer *t)
{
    struct workload_async *w =
        (struct workload_async *)((char *)t - offsetof(struct workload_async, timer));
    if (w->failed) {
        w->failed = false;
        if (w->step == W_OPEN)
            w->opened(w->arg, w->opening ? -1 : 0, &w->err);
        else
            finish(w, WORKLOAD_FAILED);
        return;
    }
    if (w->step == W_OPEN) { /* the counter: nothing to open */
        w->opened(w->arg, 0, &w->err);
        return;
    }
    if (w->step == W_OPTIMISTIC) { /* its business is over (or there was no stock) */
        finish(w, w->stock > 0 ? WORKLOAD_DONE : WORKLOAD_SOLD_OUT);
        return;
    }
    if (w->s->workload != WORKLOAD_STOCK) { /* the business time is over */
        *w->counter = w->value + 1;
        traced_access(w);
        finish(w, WORKLOAD_DONE);
        return;
    }
    write_step(w);
}

static void business(struct workload_async *w)
{
    w->step = W_BUSINESS;
    evloop_timer_at(w->L, &w->timer, lab_now_ns() + w->s->business_ns);
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    (void)ac;
    struct workload_async *w = priv;
    redisReply *r = reply;
    if (!r || r->type == REDIS_REPLY_ERROR) {
        lab_err_set(&w->err, EIO, "stock store: %s",
                    r ? r->str : ac && ac->errstr[0] ? ac->errstr : "connection lost");
        if (w->step == W_OPEN) {
            w->opening = 0;
            w->opened(w->arg, -1, &w->err);
        } else if (w->done) {
            finish(w, WORKLOAD_FAILED);
        }
        return;
    }
    if (w->step == W_READ || w->step == W_SOLD || (w->step == W_WRITE && w->fenced))
        traced_access(w); /* the read, and the write (the unfenced one with its INCR) */
    switch (w->step) {
    case W_OPEN:
        if (r->type == REDIS_REPLY_STRING && r->len == 40)
            memcpy(w->opening == 2 ? w->read_sha : w->write_sha, r->str, 41);
        if (--w->opening == 0)
            w->opened(w->arg, 0, &w->err);
        return;
    case W_READ:
        if (w->fenced) {
            bool shaped = r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                          r->element[0]->type == REDIS_REPLY_INTEGER &&
                          r->element[1]->type == REDIS_REPLY_INTEGER;
            if (!shaped) {
                lab_err_set(&w->err, EPROTO, "stock store: unexpected reply to the fenced read");
                finish(w, WORKLOAD_FAILED);
                return;
            }
            if (r->element[0]->integer != 1) {
                finish(w, WORKLOAD_STALE);
                return;
            }
            w->stock = r->element[1]->integer;
        } else {
            w->stock = r->type == REDIS_REPLY_INTEGER ? r->integer
                       : r->type == REDIS_REPLY_STRING ? strtoll(r->str, NULL, 10)
                                                       : 0;
        }
        if (w->stock <= 0)
            finish(w, WORKLOAD_SOLD_OUT);
        else
            business(w);
        return;
    case W_WRITE:
        if (w->fenced) {
            finish(w, r->type == REDIS_REPLY_INTEGER && r->integer == 1 ? WORKLOAD_DONE
                                                                        : WORKLOAD_STALE);
            return;
        }
        w->step = W_SOLD;
        const char *argv[] = {"INCR", SOLD_KEY};
        send_argv(w, 2, argv);
        return;
    case W_SOLD:
        finish(w, WORKLOAD_DONE);
        return;
    case W_BUSINESS:
    case W_OPTIMISTIC:
        return;
    }
}

void workload_async_step(struct workload_async *w, int64_t token, workload_done_fn done,
                         void *arg)
{
    w->done = done;
    w->arg = arg;
    w->token = token;
    w->tr = (struct workload_trace){.fenced = w->fenced};
    if (w->s->workload != WORKLOAD_STOCK) {
        w->value = *w->counter;
        traced_access(w);
        business(w);
        return;
    }
    w->step = W_READ;
    if (!w->fenced) {
        const char *argv[] = {"GET", STOCK_KEY};
        send_argv(w, 2, argv);
    } else if (token <= 0) {
        lab_err_set(&w->err, EPROTO, "fencing: the grant carried no token");
        fail_later(w);
    } else {
        send_fenced(w, false);
    }
}

void workload_async_business(struct workload_async *w, int64_t stock, workload_done_fn done,
                             void *arg)
{
    w->done = done;
    w->arg = arg;
    w->stock = stock;
    w->tr = (struct workload_trace){0}; /* its store is the design's: no access of ours */
    w->step = W_OPTIMISTIC;
    evloop_timer_at(w->L, &w->timer, stock > 0 ? lab_now_ns() + w->s->business_ns : 0);
}

int workload_async_open(struct workload_async **out, const struct scenario *s, bool fenced,
                        const struct workload_target *t, volatile int64_t *counter,
                        struct evloop *loop, lock_opened_fn opened, void *arg,
                        struct lab_err *err)
{
    struct workload_async *w = calloc(1, sizeof *w);
    if (!w) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    w->s = s;
    w->counter = counter;
    w->L = loop;
    w->fenced = fenced;
    w->opened = opened;
    w->arg = arg;
    w->step = W_OPEN;
    evloop_timer_init(&w->timer, on_timer);
    if (s->workload != WORKLOAD_STOCK) {
        evloop_timer_at(loop, &w->timer, 0); /* opened, from the loop */
        *out = w;
        return 0;
    }
    w->ac = evloop_redis_connect(loop, "the stock store", t->host, t->port, w, on_down, err);
    if (!w->ac) {
        free(w);
        return -1;
    }
    if (fenced) {
        const char *rd[] = {"SCRIPT", "LOAD", workload_fenced_read_lua};
        const char *wr[] = {"SCRIPT", "LOAD", workload_fenced_write_lua};
        w->opening = 2;
        send_argv(w, 3, rd);
        send_argv(w, 3, wr);
    } else {
        const char *ping[] = {"PING"};
        w->opening = 1;
        send_argv(w, 1, ping);
    }
    *out = w;
    return 0;
}

const struct workload_trace *workload_async_traced(const struct workload_async *w)
{
    return &w->tr;
}

void workload_async_close(struct workload_async *w)
{
    if (!w)
        return;
    evloop_timer_cancel(w->L, &w->timer);
    w->done = NULL;
    w->step = W_BUSINESS; /* pending replies do nothing */
    if (w->ac) {
        redisAsyncContext *ac = w->ac;
        w->ac = NULL;
        ac->data = NULL;
        redisAsyncFree(ac);
    }
    free(w);
}
