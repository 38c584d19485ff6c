/*
 * workload.c - the counter and stock workloads (see workload.h).
 *
 * The counter lives in the run's shared memory and is read and written
 * with plain (non-atomic) volatile accesses on purpose: the lock under test
 * is the only thing that may serialise them. The stock lives in a separate
 * embedded Redis, so that a lock's failure shows up as real oversold units
 * in a real store, exactly as in the seeds' seckill example.
 *
 * Fencing makes the stock store the resource that protects itself, the way
 * Kleppmann's fenced storage does: it keeps the highest token it has seen
 * ("fence") and runs the read and the write as Lua scripts that refuse a
 * token below it. The read raises the mark too, not only the write: a
 * holder back from a pause must not overwrite the stock a later holder has
 * already read, or its late write is a lost update although every write
 * carried a token no older than the last write's. A unit refused at the
 * read ends there, one refused at the write leaves the stock as it was;
 * the store counts both (stale_reads, stale_writes).
 *
 * A design may say, during the business time, that its lock may be lost
 * (lock_env.lost: a ZooKeeper session suspended, with lock.on_disconnect:
 * abort): the sleep ends at once and the unit is abandoned before its
 * write, as Curator's tech note 14 asks of a lock holder.
 */
#include "workload.h"
#include "redis_conn.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock.h"

const char workload_fenced_read_lua[] =
    "local mark = tonumber(redis.call('get', KEYS[2]) or '0')\n"
    "local t = tonumber(ARGV[1])\n"
    "if t < mark then\n"
    "  redis.call('incr', KEYS[3])\n"
    "  return {0, mark}\n"
    "end\n"
    "if t > mark then redis.call('set', KEYS[2], ARGV[1]) end\n"
    "return {1, tonumber(redis.call('get', KEYS[1]) or '0')}\n";

/* KEYS stock, sold, fence, stale_writes; ARGV token, new stock. 1 written
 * (stock set, sold counted), 0 refused. */
const char workload_fenced_write_lua[] =
    "local t = tonumber(ARGV[1])\n"
    "if t < tonumber(redis.call('get', KEYS[3]) or '0') then\n"
    "  redis.call('incr', KEYS[4])\n"
    "  return 0\n"
    "end\n"
    "redis.call('set', KEYS[3], ARGV[1])\n"
    "redis.call('set', KEYS[1], ARGV[2])\n"
    "redis.call('incr', KEYS[2])\n"
    "return 1\n";

struct workload_client {
    const struct scenario *s;  /* business time, kind */
    volatile int64_t *counter; /* shared counter (counter workload) */
    const volatile int *stop;  /* interrupts the business time */
    volatile int *lost;        /* the design's lost flag: abandons the unit before its write */
    redisContext *rc;          /* stock store connection (stock workload) */
    bool fenced;               /* reads and writes carry the grant's token */
    char read_sha[41];         /* workload_fenced_read_lua, loaded */
    char write_sha[41];        /* workload_fenced_write_lua, loaded */
    struct workload_trace tr;  /* the unit in progress (workload_traced) */
};

/* An access to the resource was answered now. */
static void traced_access(struct workload_client *w)
{
    w->tr.last_access_ns = lab_now_ns();
}

static redisContext *stock_connect(const struct workload_target *t, struct lab_err *err)
{
    return redis_conn_open("the stock store", t->host, t->port, 5000, err);
}

/* A missing or -ERR reply becomes err (and NULL); else r itself. */
static redisReply *stock_checked(redisContext *c, redisReply *r, struct lab_err *err)
{
    if (r && r->type != REDIS_REPLY_ERROR)
        return r;
    lab_err_set(err, EIO, "stock store: %s", r ? r->str : c->errstr);
    if (r)
        freeReplyObject(r);
    return NULL;
}

/* Run one command; returns its integer (or parsed string) value in *v. */
static int stock_cmd(redisContext *c, long long *v, struct lab_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = stock_checked(c, redisvCommand(c, fmt, ap), err);
    va_end(ap);
    if (!r)
        return -1;
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
    int rc = stock_cmd(c, NULL, err, "SET " STOCK_KEY " %lld", (long long)s->stock);
    if (rc == 0)
        rc = stock_cmd(c, NULL, err, "SET " SOLD_KEY " 0");
    if (rc == 0)
        rc = stock_cmd(c, NULL, err, "DEL " FENCE_KEY " " STALE_WRITES_KEY " " STALE_READS_KEY);
    redisFree(c);
    return rc;
}

bool workload_fenced(const struct scenario *s, unsigned caps)
{
    return s->workload == WORKLOAD_STOCK && s->fencing && (caps & LOCK_CAP_FENCING);
}

/* SCRIPT LOAD src into sha (41 bytes). 0 or -1 with err filled. */
static int stock_script_load(redisContext *c, const char *src, char *sha, struct lab_err *err)
{
    redisReply *r = stock_checked(c, redisCommand(c, "SCRIPT LOAD %s", src), err);
    if (!r)
        return -1;
    int ok = r->type == REDIS_REPLY_STRING && r->len == 40;
    if (ok)
        memcpy(sha, r->str, 41);
    else
        lab_err_set(err, EPROTO, "stock store: SCRIPT LOAD returned no SHA1");
    freeReplyObject(r);
    return ok ? 0 : -1;
}

int workload_open(struct workload_client **out, const struct scenario *s, bool fenced,
                  const struct workload_target *t, volatile int64_t *counter,
                  const volatile int *stop, volatile int *lost, struct lab_err *err)
{
    struct workload_client *w = calloc(1, sizeof *w);
    if (!w) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    w->s = s;
    w->counter = counter;
    w->stop = stop;
    w->lost = lost;
    w->fenced = fenced;
    if (s->workload == WORKLOAD_STOCK && !(w->rc = stock_connect(t, err))) {
        free(w);
        return -1;
    }
    if (fenced && (stock_script_load(w->rc, workload_fenced_read_lua, w->read_sha, err) != 0 ||
                   stock_script_load(w->rc, workload_fenced_write_lua, w->write_sha, err) != 0)) {
        workload_close(w);
        return -1;
    }
    *out = w;
    return 0;
}

/* The business time, inside the critical section; true when the design
 * raised its lost flag meanwhile (or before): the write must not follow. */
static bool business_lost(struct workload_client *w)
{
    if (!lab_sleep_or_flag(w->s->business_ns, w->stop, w->lost))
        return false;
    w->tr.notice_ns = lab_now_ns();
    return true;
}

/* Run a fenced script (by SHA) with token as its first argument: the
 * reply, or NULL with err filled. */
static redisReply *stock_fenced(redisContext *c, const char *sha, int nkeys, const char **keys,
                                long long token, long long value, struct lab_err *err)
{
    char tok[24], val[24], nk[8];
    snprintf(tok, sizeof tok, "%lld", token);
    snprintf(val, sizeof val, "%lld", value);
    snprintf(nk, sizeof nk, "%d", nkeys);
    const char *argv[10] = {"EVALSHA", sha, nk};
    int argc = 3;
    for (int i = 0; i < nkeys; i++)
        argv[argc++] = keys[i];
    argv[argc++] = tok;
    argv[argc++] = val;
    return stock_checked(c, redisCommandArgv(c, argc, argv, NULL), err);
}

/* The fenced unit: read with the token, business time, write with it. */
static enum workload_step stock_step_fenced(struct workload_client *w, int64_t token,
                                            struct lab_err *err)
{
    if (token <= 0) {
        lab_err_set(err, EPROTO, "fencing: the grant carried no token");
        return WORKLOAD_FAILED;
    }
    static const char *const read_keys[] = {STOCK_KEY, FENCE_KEY, STALE_READS_KEY};
    redisReply *r = stock_fenced(w->rc, w->read_sha, 3, (const char **)read_keys, token, 0, err);
    if (!r)
        return WORKLOAD_FAILED;
    traced_access(w);
    bool shaped = r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                  r->element[0]->type == REDIS_REPLY_INTEGER &&
                  r->element[1]->type == REDIS_REPLY_INTEGER;
    bool admitted = shaped && r->element[0]->integer == 1;
    long long stock = shaped ? r->element[1]->integer : 0;
    freeReplyObject(r);
    if (!shaped) {
        lab_err_set(err, EPROTO, "stock store: unexpected reply to the fenced read");
        return WORKLOAD_FAILED;
    }
    if (!admitted)
        return WORKLOAD_STALE;
    if (stock <= 0)
        return WORKLOAD_SOLD_OUT;
    if (business_lost(w))
        return WORKLOAD_ABORTED;
    static const char *const write_keys[] = {STOCK_KEY, SOLD_KEY, FENCE_KEY, STALE_WRITES_KEY};
    r = stock_fenced(w->rc, w->write_sha, 4, (const char **)write_keys, token, stock - 1, err);
    if (!r)
        return WORKLOAD_FAILED;
    traced_access(w);
    bool written = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    return written ? WORKLOAD_DONE : WORKLOAD_STALE;
}

enum workload_step workload_step(struct workload_client *w, int64_t token, struct lab_err *err)
{
    w->tr = (struct workload_trace){.fenced = w->fenced};
    if (w->s->workload != WORKLOAD_STOCK) {
        int64_t v = *w->counter;
        traced_access(w);
        if (business_lost(w))
            return WORKLOAD_ABORTED;
        *w->counter = v + 1;
        traced_access(w);
        return WORKLOAD_DONE;
    }
    if (w->fenced)
        return stock_step_fenced(w, token, err);
    long long stock;
    if (stock_cmd(w->rc, &stock, err, "GET " STOCK_KEY) != 0)
        return WORKLOAD_FAILED;
    traced_access(w);
    if (stock <= 0)
        return WORKLOAD_SOLD_OUT;
    if (business_lost(w))
        return WORKLOAD_ABORTED;
    /* the SET is the write; the INCR after it is the same unit's: the last
     * access is answered with it */
    if (stock_cmd(w->rc, NULL, err, "SET " STOCK_KEY " %lld", stock - 1) != 0 ||
        stock_cmd(w->rc, NULL, err, "INCR " SOLD_KEY) != 0)
        return WORKLOAD_FAILED;
    traced_access(w);
    return WORKLOAD_DONE;
}

enum workload_step workload_business(struct workload_client *w, int64_t stock)
{
    w->tr = (struct workload_trace){0}; /* its store is the design's: no access of ours */
    if (stock <= 0)
        return WORKLOAD_SOLD_OUT;
    lab_sleep_ns(w->s->business_ns, w->stop);
    return WORKLOAD_DONE;
}

const struct workload_trace *workload_traced(const struct workload_client *w)
{
    return &w->tr;
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
    long long stock = 0, sold = 0, stale_w = 0, stale_r = 0;
    int rc = stock_cmd(c, &stock, err, "GET " STOCK_KEY);
    if (rc == 0)
        rc = stock_cmd(c, &sold, err, "GET " SOLD_KEY);
    if (rc == 0)
        rc = stock_cmd(c, &stale_w, err, "GET " STALE_WRITES_KEY);
    if (rc == 0)
        rc = stock_cmd(c, &stale_r, err, "GET " STALE_READS_KEY);
    redisFree(c);
    if (rc != 0)
        return -1;
    out->units_done = sold;
    out->final_value = stock;
    out->stale_writes_rejected = stale_w;
    out->stale_reads_rejected = stale_r;
    out->oversold = sold > s->stock ? sold - s->stock : 0;
    out->lost_updates = sold - (s->stock - stock);
    if (out->lost_updates < 0)
        out->lost_updates = 0;
    return 0;
}

void workload_outcome_kept(const struct scenario *s, int64_t left, int64_t units_reported,
                           struct workload_outcome *out)
{
    *out = (struct workload_outcome){0};
    out->units_done = units_reported;
    out->final_value = left;
    int64_t over = units_reported - s->stock;
    out->oversold = over > 0 ? over : 0;
    if (left < 0 && -left > out->oversold)
        out->oversold = -left;
    /* a client killed between its write and its count leaves the stock
     * ahead of the reports: that is not a lost update */
    out->lost_updates = units_reported - (s->stock - left);
    if (out->lost_updates < 0)
        out->lost_updates = 0;
}
