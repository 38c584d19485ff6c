/*
 * redis_common.c - connection, token, reply checking and script calls for
 * the single-instance Redis designs (see redis_common.h).
 *
 * Every command goes through redis_cmd() so that round trips are counted in
 * one place and every failure, whether the connection broke or Redis
 * answered -ERR, becomes a struct lab_err rather than a crash.
 */
#include "redis_common.h"
#include "redis_admin.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Connect and command timeout: long enough for a loaded 2-core machine,
 * short enough that a dead lock store ends a client's loop. */
#define REDIS_TIMEOUT_MS 10000

static int script_load(struct lock_client *c, struct lab_err *err)
{
    redisReply *r = redis_cmd(c, err, "SCRIPT LOAD %s", c->script);
    if (!r)
        return -1;
    int ok = r->type == REDIS_REPLY_STRING && r->len == 40;
    if (ok)
        memcpy(c->sha, r->str, 41);
    else
        lab_err_set(err, EPROTO, "SCRIPT LOAD returned no SHA1");
    freeReplyObject(r);
    return ok ? 0 : -1;
}

int redis_lock_open(struct lock_client **out, const struct lock_env *env, const char *script,
                    lock_try_fn attempt, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    c->script = script;
    c->attempt = attempt;
    int rc = lab_random_hex(c->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        free(c);
        return -1;
    }
    c->rc = redis_admin_connect("Redis", env->redis_host, env->redis_port, REDIS_TIMEOUT_MS, err);
    if (!c->rc) {
        redis_lock_close(c);
        return -1;
    }
    if (script && script_load(c, err) != 0) {
        redis_lock_close(c);
        return -1;
    }
    *out = c;
    return 0;
}

void redis_lock_close(struct lock_client *c)
{
    if (!c)
        return;
    if (c->rc)
        redisFree(c->rc);
    free(c);
}

redisReply *redis_cmd(struct lock_client *c, struct lab_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c->rc, fmt, ap);
    va_end(ap);
    c->env->stats->round_trips++;
    if (!r) {
        lab_err_set(err, c->rc->err ? c->rc->err : EIO, "redis: %s", c->rc->errstr);
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        lab_err_set(err, EPROTO, "redis: %s", r->str);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

long long redis_ttl_ms(const struct lock_client *c)
{
    long long ms = c->env->ttl_ns / 1000000;
    return ms > 0 ? ms : 1;
}

long long redis_script_call(struct lock_client *c, const char *key, struct lab_err *err)
{
    for (int tries = 0; tries < 2; tries++) {
        redisReply *r = redis_cmd(c, err, "EVALSHA %s 1 %s %s %lld", c->sha, key, c->token,
                                  redis_ttl_ms(c));
        if (r) {
            long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
            freeReplyObject(r);
            return v;
        }
        if (strstr(err->msg, "NOSCRIPT") == NULL || script_load(c, err) != 0)
            break;
    }
    return -1;
}

int redis_set_nx_px(struct lock_client *c, const char *key, const char *value, struct lab_err *err)
{
    redisReply *r = redis_cmd(c, err, "SET %s %s NX PX %lld", key, value, redis_ttl_ms(c));
    if (!r)
        return -1;
    int granted = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    return granted;
}

int redis_del(struct lock_client *c, const char *key, struct lab_err *err)
{
    redisReply *r = redis_cmd(c, err, "DEL %s", key);
    if (!r)
        return -1;
    int deleted = r->type == REDIS_REPLY_INTEGER && r->integer > 0;
    freeReplyObject(r);
    return deleted;
}

enum lock_status redis_poll_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err)
{
    return lock_poll(c->env, c->attempt, c, key, wait_ns, err);
}

enum release_status redis_release_del(struct lock_client *c, const char *key, struct lab_err *err)
{
    int deleted = redis_del(c, key, err);
    return deleted < 0 ? RELEASE_ERROR : deleted ? RELEASE_OK : RELEASE_NOT_OWNER;
}
