/*
 * workload.c - the counter and stock workloads (see workload.h).
 *
 * The counter lives in the run's shared memory and is read and written
 * with plain (non-atomic) volatile accesses on purpose: the lock under test
 * is the only thing that may serialise them. The stock lives in a separate
 * embedded Redis, so that a lock's failure shows up as real oversold units
 * in a real store, exactly as in the seeds' seckill example.
 */
#include "workload.h"
#include "redis_conn.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdlib.h>

struct workload_client {
    const struct scenario *s;  /* business time, kind */
    volatile int64_t *counter; /* shared counter (counter workload) */
    const volatile int *stop;  /* interrupts the business time */
    redisContext *rc;          /* stock store connection (stock workload) */
};

static redisContext *stock_connect(const struct workload_target *t, struct lab_err *err)
{
    return redis_conn_open("the stock store", t->host, t->port, 5000, err);
}

/* Run one command; returns its integer (or parsed string) value in *v. */
static int stock_cmd(redisContext *c, long long *v, struct lab_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (!r || r->type == REDIS_REPLY_ERROR) {
        lab_err_set(err, EIO, "stock store: %s", r ? r->str : c->errstr);
        if (r)
            freeReplyObject(r);
        return -1;
    }
    if (v) {
        if (r->type == REDIS_REPLY_INTEGER)
            *v = r->integer;
        else if (r->type == REDIS_REPLY_STRING)
            *v = strtoll(r->str, NULL, 10);
        else
            *v = 0;
    }
    freeReplyObject(r);
    return 0;
}

int workload_reset(const struct scenario *s, const struct workload_target *t,
                   volatile int64_t *counter, struct lab_err *err)
{
    *counter = 0;
    if (s->workload != WORKLOAD_STOCK)
        return 0;
    redisContext *c = stock_connect(t, err);
    if (!c)
        return -1;
    int rc = stock_cmd(c, NULL, err, "SET stock %lld", (long long)s->stock);
    if (rc == 0)
        rc = stock_cmd(c, NULL, err, "SET sold 0");
    redisFree(c);
    return rc;
}

int workload_open(struct workload_client **out, const struct scenario *s,
                  const struct workload_target *t, volatile int64_t *counter,
                  const volatile int *stop, struct lab_err *err)
{
    struct workload_client *w = calloc(1, sizeof *w);
    if (!w) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    w->s = s;
    w->counter = counter;
    w->stop = stop;
    if (s->workload == WORKLOAD_STOCK && !(w->rc = stock_connect(t, err))) {
        free(w);
        return -1;
    }
    *out = w;
    return 0;
}

enum workload_step workload_step(struct workload_client *w, struct lab_err *err)
{
    if (w->s->workload != WORKLOAD_STOCK) {
        int64_t v = *w->counter;
        lab_sleep_ns(w->s->business_ns, w->stop);
        *w->counter = v + 1;
        return WORKLOAD_DONE;
    }
    long long stock;
    if (stock_cmd(w->rc, &stock, err, "GET stock") != 0)
        return WORKLOAD_FAILED;
    if (stock <= 0)
        return WORKLOAD_SOLD_OUT;
    lab_sleep_ns(w->s->business_ns, w->stop);
    if (stock_cmd(w->rc, NULL, err, "SET stock %lld", stock - 1) != 0 ||
        stock_cmd(w->rc, NULL, err, "INCR sold") != 0)
        return WORKLOAD_FAILED;
    return WORKLOAD_DONE;
}

void workload_close(struct workload_client *w)
{
    if (!w)
        return;
    if (w->rc)
        redisFree(w->rc);
    free(w);
}

int workload_outcome(const struct scenario *s, const struct workload_target *t,
                     volatile int64_t *counter, int64_t units_reported,
                     struct workload_outcome *out, struct lab_err *err)
{
    *out = (struct workload_outcome){0};
    if (s->workload != WORKLOAD_STOCK) {
        out->units_done = units_reported;
        out->final_value = *counter;
        /* a client killed between its write and its count can make the
         * counter run ahead of the reports; that is not a lost update */
        out->lost_updates = units_reported > *counter ? units_reported - *counter : 0;
        return 0;
    }
    redisContext *c = stock_connect(t, err);
    if (!c)
        return -1;
    long long stock = 0, sold = 0;
    int rc = stock_cmd(c, &stock, err, "GET stock");
    if (rc == 0)
        rc = stock_cmd(c, &sold, err, "GET sold");
    redisFree(c);
    if (rc != 0)
        return -1;
    out->units_done = sold;
    out->final_value = stock;
    out->oversold = sold > s->stock ? sold - s->stock : 0;
    out->lost_updates = sold - (s->stock - stock);
    if (out->lost_updates < 0)
        out->lost_updates = 0;
    return 0;
}
