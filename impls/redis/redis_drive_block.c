/*
 * redis_drive_block.c - the per-process driver of the Redis state machine
 * (redis_drive.h): the machine's acts on one blocking hiredis connection.
 *
 * SEND is one redisCommandArgv (a NULL reply: the connection broke or the
 * command timed out, fed as a loss), RECONNECT a new connection found as
 * redis_store_open finds one (asking the sentinels when there are some),
 * SLEEP a sleep cut short by the run's stop, FAILPOINT the failpoint's own
 * action. The loop ends when the machine says DONE. A design that renews
 * its lock gets the watchdog thread (watchdog.h), armed and disarmed as
 * the machine says; its renewals are a second machine's, on a connection
 * of the thread's own (c->wd_rc), opened with the client.
 */
#include "redis_drive.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "redis_common.h"

void redis_sm_from_hiredis(const struct redisReply *r, struct redis_sm_reply *out)
{
    memset(out, 0, sizeof *out);
    switch (r->type) {
    case REDIS_REPLY_STATUS:
        out->type = RSM_STATUS;
        break;
    case REDIS_REPLY_INTEGER:
        out->type = RSM_INTEGER;
        out->integer = r->integer;
        return;
    case REDIS_REPLY_STRING:
        out->type = RSM_STRING;
        break;
    case REDIS_REPLY_NIL:
        out->type = RSM_NIL;
        return;
    case REDIS_REPLY_ERROR:
        out->type = RSM_ERROR;
        break;
    default:
        out->type = RSM_OTHER;
        return;
    }
    out->str = r->str;
    out->len = r->len;
}

static void watch(struct lock_client *c, struct redis_sm *m)
{
    if (m->watch == RSM_WATCH_ARM && c->wd)
        watchdog_arm(c->wd, m->key);
    else if (m->watch == RSM_WATCH_DISARM && c->wd)
        watchdog_disarm(c->wd);
    m->watch = RSM_WATCH_NONE;
}

/* Do m's acts on *rc until it is done. */
static void run(struct lock_client *c, redisContext **rc, struct redis_sm *m,
                enum redis_sm_act act)
{
    for (watch(c, m); act != REDIS_SM_DONE; watch(c, m)) {
        switch (act) {
        case REDIS_SM_SEND: {
            redisReply *r = redisCommandArgv(*rc, m->argc, m->argv, NULL);
            if (!r) {
                act = redis_sm_lost(m, (*rc)->errstr, lab_now_ns());
                break;
            }
            struct redis_sm_reply rr;
            redis_sm_from_hiredis(r, &rr);
            act = redis_sm_reply(m, &rr, lab_now_ns());
            freeReplyObject(r);
            break;
        }
        case REDIS_SM_RECONNECT: {
            struct lab_err err = {0};
            if (*rc) {
                redisFree(*rc);
                c->reconnects += rc == &c->rc;
            }
            *rc = redis_store_open("Redis", c->env, REDIS_TIMEOUT_MS, &err);
            act = redis_sm_reconnected(m, *rc != NULL, &err, lab_now_ns());
            break;
        }
        case REDIS_SM_SLEEP: {
            int64_t left = m->wake_at - lab_now_ns();
            if (left > 0)
                lab_sleep_ns(left, c->env->stop);
            act = redis_sm_timer(m, lab_now_ns());
            break;
        }
        case REDIS_SM_FAILPOINT:
            failpoint_hit(m->fp, c->env->stop);
            act = redis_sm_resume(m, lab_now_ns());
            break;
        case REDIS_SM_DONE:
            break;
        }
    }
}

/* The watchdog thread's renewal: 1 extended, 0 no longer ours, -1 failed. */
static int renew(void *arg, const char *key)
{
    struct lock_client *c = arg;
    run(c, &c->wd_rc, c->renewal, redis_sm_renew(c->renewal, key, lab_now_ns()));
    return c->renewal->renewed;
}

void redis_block_close(struct lock_client *c)
{
    if (!c)
        return;
    watchdog_stop(c->wd); /* first: its renewals use c->renewal */
    free(c->renewal);
    free(c->sm);
    if (c->wd_rc)
        redisFree(c->wd_rc);
    if (c->rc)
        redisFree(c->rc);
    free(c);
}

int redis_block_open(struct lock_client **out, const struct lock_env *env,
                     const struct redis_sm_design *d, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    struct redis_sm *m = calloc(1, sizeof *m);
    if (!c || !m) {
        free(c);
        free(m);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    c->sm = m;
    int rc = lab_random_hex(c->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        redis_block_close(c);
        return -1;
    }
    redis_sm_init(m, d, env, c->token);
    run(c, &c->rc, m, redis_sm_open(m, lab_now_ns()));
    if (m->open_rc != 0) {
        *err = m->err;
        redis_block_close(c);
        return -1;
    }
    if (redis_sm_renews(m)) {
        c->renewal = malloc(sizeof *c->renewal);
        if (c->renewal)
            redis_sm_init_renewal(c->renewal, m);
        else
            lab_err_set(err, ENOMEM, "out of memory");
        if (c->renewal) { /* the watchdog's connection from the start, as one opened */
            run(c, &c->wd_rc, c->renewal, redis_sm_open(c->renewal, lab_now_ns()));
            if (c->renewal->open_rc != 0)
                *err = c->renewal->err;
        }
        if (!c->renewal || c->renewal->open_rc != 0 ||
            !(c->wd = watchdog_start(env->ttl_ns, renew, c, env->stats, err))) {
            redis_block_close(c);
            return -1;
        }
    }
    *out = c;
    return 0;
}

enum lock_status redis_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err)
{
    run(c, &c->rc, c->sm, redis_sm_acquire(c->sm, key, wait_ns, lab_now_ns()));
    if (c->sm->status == LOCK_ERROR)
        *err = c->sm->err;
    return c->sm->status;
}

enum release_status redis_block_release(struct lock_client *c, const char *key,
                                        struct lab_err *err)
{
    run(c, &c->rc, c->sm, redis_sm_release(c->sm, key, lab_now_ns()));
    if (c->sm->release == RELEASE_ERROR)
        *err = c->sm->err;
    return c->sm->release;
}
