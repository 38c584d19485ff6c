/*
 * redis_common.c - connection, token, scripts, watchdog and reply checking
 * for the single-instance Redis designs (see redis_common.h).
 *
 * Every command on the client's connection goes through redis_cmd() or
 * redis_script_argv() so that round trips are counted in one place and
 * every failure, whether the connection broke or Redis answered -ERR,
 * becomes a struct lab_err rather than a crash. The watchdog's renewals run
 * on their own connection and are not counted as round trips of the
 * client's loop (they show up as renewals, and in INFO commandstats).
 */
#include "redis_common.h"
#include "redis_conn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sentinel topology: how long a client looks for the master across a
 * failover (a few times the failover the lab tunes for), and how often it
 * asks the sentinels meanwhile. */
#define SENTINEL_SEARCH_NS (10000000000LL)
#define SENTINEL_RETRY_NS (20000000LL)

const char redis_compare_and_delete_lua[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('del', KEYS[1])\n"
    "end\n"
    "return 0\n";

const char redis_compare_and_pexpire_lua[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('pexpire', KEYS[1], ARGV[2])\n"
    "end\n"
    "return 0\n";

const char redis_fenced_set_nx_px_lua[] =
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
    "  return redis.call('incr', KEYS[2])\n"
    "end\n"
    "return 0\n";

/* Turn a missing or -ERR reply into err; returns r when it is usable. */
static redisReply *checked(redisContext *rc, redisReply *r, struct lab_err *err)
{
    if (!r) {
        lab_err_set(err, rc->err ? rc->err : EIO, "redis: %s", rc->errstr);
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        lab_err_set(err, EPROTO, "redis: %s", r->str);
        /* a master demoted by a failover answers writes with READONLY,
         * one cut off from its replicas (min-replicas-to-write) with
         * NOREPLICAS: drop the connection, so the next command asks the
         * sentinels */
        if ((strncmp(r->str, "READONLY", 8) == 0 || strncmp(r->str, "NOREPLICAS", 10) == 0) &&
            !rc->err)
            rc->err = REDIS_ERR_OTHER;
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

int redis_script_load(redisContext *rc, struct redis_script *s, struct lab_err *err)
{
    redisReply *r = checked(rc, redisCommand(rc, "SCRIPT LOAD %s", s->src), err);
    if (!r)
        return -1;
    int ok = r->type == REDIS_REPLY_STRING && r->len == 40;
    if (ok)
        memcpy(s->sha, r->str, 41);
    else
        lab_err_set(err, EPROTO, "SCRIPT LOAD returned no SHA1");
    freeReplyObject(r);
    return ok ? 0 : -1;
}

int redis_lock_open(struct lock_client **out, const struct lock_env *env, lock_try_fn attempt,
                    struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    c->attempt = attempt;
    int rc = lab_random_hex(c->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        free(c);
        return -1;
    }
    c->rc = redis_store_open("Redis", env, REDIS_TIMEOUT_MS, err);
    if (!c->rc) {
        redis_lock_close(c);
        return -1;
    }
    *out = c;
    return 0;
}

/* Does the server on c say it is a master (ROLE)? */
static bool says_master(redisContext *c)
{
    redisReply *r = redisCommand(c, "ROLE");
    bool yes = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
               r->element[0]->type == REDIS_REPLY_STRING && strcmp(r->element[0]->str, "master") == 0;
    if (r)
        freeReplyObject(r);
    return yes;
}

/* The sentinel topology: ask the sentinels which server is the master,
 * connect to it and check that it says so, as Redisson's and Jedis's
 * sentinel clients do. While a failover is under way the sentinels still
 * name the dead master, or a replica not yet promoted: ask again, until
 * SENTINEL_SEARCH_NS has passed or the run stops. */
static redisContext *sentinel_store_open(const char *what, const struct lock_env *env,
                                         int timeout_ms, struct lab_err *err)
{
    const struct lock_servers *sv = env->servers;
    int64_t deadline = lab_now_ns() + SENTINEL_SEARCH_NS;
    for (;;) {
        for (int i = 0; i < sv->n; i++) {
            char host[64];
            int port;
            if (redis_sentinel_ask(sv->node[i].host, sv->node[i].port, sv->sentinel_master,
                                   timeout_ms, host, sizeof host, &port, err) != 0)
                continue; /* this sentinel is down: ask the next */
            redisContext *c = redis_conn_open(what, host, port, timeout_ms, err);
            if (c && says_master(c))
                return c;
            if (c) {
                lab_err_set(err, EAGAIN, "%s:%d, named by the sentinels, is not a master", host,
                            port);
                redisFree(c);
            }
            break; /* the master they name is down or demoted: wait for the switch */
        }
        if (lab_now_ns() >= deadline || (env->stop && *env->stop))
            return NULL;
        lab_sleep_ns(SENTINEL_RETRY_NS, env->stop);
    }
}

redisContext *redis_store_open(const char *what, const struct lock_env *env, int timeout_ms,
                               struct lab_err *err)
{
    if (env->servers->sentinel_master[0])
        return sentinel_store_open(what, env, timeout_ms, err);
    const struct lock_endpoint *ep = &env->servers->node[0];
    return redis_conn_open(what, ep->host, ep->port, timeout_ms, err);
}

void redis_lock_close(struct lock_client *c)
{
    if (!c)
        return;
    watchdog_stop(c->wd);
    free(c->sm);
    if (c->wd_rc)
        redisFree(c->wd_rc);
    if (c->rc)
        redisFree(c->rc);
    free(c);
}

/* hiredis leaves a context that failed (I/O error, timeout, the server
 * closed it) unusable: replace it before the next command, so one failure
 * costs one operation, not every operation after it. */
static int reconnect_if_broken(struct lock_client *c, redisContext **rc,
                               struct lab_err *err)
{
    if (*rc && !(*rc)->err)
        return 0;
    if (*rc)
        redisFree(*rc);
    *rc = redis_store_open("Redis", c->env, REDIS_TIMEOUT_MS, err);
    if (rc == &c->rc)
        c->reconnects++;
    return *rc ? 0 : -1;
}

int redis_conn_ready(struct lock_client *c, struct lab_err *err)
{
    return reconnect_if_broken(c, &c->rc, err);
}

int redis_watchdog_conn_ready(struct lock_client *c, struct lab_err *err)
{
    return reconnect_if_broken(c, &c->wd_rc, err);
}

/* A command on the client's connection failed: was it the connection
 * (the server died, closed it, or turned out to be a demoted master)
 * rather than an answer? Then the command is sent once more on a new
 * connection, found through the sentinels when there are some, as
 * Redisson's client retries a command after a reconnect. */
static bool retry_on_new_connection(const struct lock_client *c, int tries)
{
    return tries == 0 && c->rc && c->rc->err;
}

redisReply *redis_cmd(struct lock_client *c, struct lab_err *err, const char *fmt, ...)
{
    for (int tries = 0;; tries++) {
        if (reconnect_if_broken(c, &c->rc, err) != 0)
            return NULL;
        va_list ap;
        va_start(ap, fmt);
        redisReply *r = checked(c->rc, redisvCommand(c->rc, fmt, ap), err);
        va_end(ap);
        c->env->stats->round_trips++;
        if (r || !retry_on_new_connection(c, tries))
            return r;
    }
}

redisReply *redis_client_script(struct lock_client *c, struct redis_script *s, int nkeys,
                                int argc, const char **argv, struct lab_err *err)
{
    for (int tries = 0;; tries++) {
        if (reconnect_if_broken(c, &c->rc, err) != 0)
            return NULL;
        redisReply *r = redis_script_argv(c->rc, c->env->stats, s, nkeys, argc, argv, err);
        if (r || !retry_on_new_connection(c, tries))
            return r;
    }
}

redisReply *redis_script_argv(redisContext *rc, struct lock_stats *stats, struct redis_script *s,
                              int nkeys, int argc, const char **argv, struct lab_err *err)
{
    const char *args[16];
    char nk[16];
    if (argc > 13) {
        lab_err_set(err, E2BIG, "too many script arguments");
        return NULL;
    }
    snprintf(nk, sizeof nk, "%d", nkeys);
    args[0] = "EVALSHA";
    args[1] = s->sha;
    args[2] = nk;
    for (int i = 0; i < argc; i++)
        args[3 + i] = argv[i];
    for (int tries = 0; tries < 2; tries++) {
        redisReply *r = redisCommandArgv(rc, argc + 3, args, NULL);
        if (stats)
            stats->round_trips++;
        r = checked(rc, r, err);
        if (r || strstr(err->msg, "NOSCRIPT") == NULL || redis_script_load(rc, s, err) != 0)
            return r;
    }
    return NULL;
}

long long redis_ttl_ms(const struct lock_client *c)
{
    long long ms = c->env->ttl_ns / 1000000;
    return ms > 0 ? ms : 1;
}

/* Run s with KEYS[1] = key, ARGV = token, ttl on the client's connection
 * (wd: on the watchdog's): integer result or -1. */
static long long script_key_token_ttl(struct lock_client *c, bool wd, struct redis_script *s,
                                      const char *key, struct lab_err *err)
{
    char ttl[32];
    snprintf(ttl, sizeof ttl, "%lld", redis_ttl_ms(c));
    const char *argv[] = {key, c->token, ttl};
    redisReply *r = wd ? redis_script_argv(c->wd_rc, NULL, s, 1, 3, argv, err)
                       : redis_client_script(c, s, 1, 3, argv, err);
    if (!r)
        return -1;
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    freeReplyObject(r);
    return v;
}

long long redis_script_call(struct lock_client *c, struct redis_script *s, const char *key,
                            struct lab_err *err)
{
    return script_key_token_ttl(c, false, s, key, err);
}

/* The watchdog's renewal: the renew script on the watchdog's connection. */
static int watchdog_renew(void *arg, const char *key)
{
    struct lock_client *c = arg;
    struct lab_err err = {0};
    if (redis_watchdog_conn_ready(c, &err) != 0)
        return -1;
    long long v = script_key_token_ttl(c, true, &c->renew, key, &err);
    return v < 0 ? -1 : v > 0;
}

int redis_watchdog_start(struct lock_client *c, int64_t lease_ns, struct lab_err *err)
{
    c->wd_rc = redis_store_open("Redis", c->env, REDIS_TIMEOUT_MS, err);
    if (!c->wd_rc || redis_script_load(c->wd_rc, &c->renew, err) != 0)
        return -1;
    c->wd = watchdog_start(lease_ns, watchdog_renew, c, c->env->stats, err);
    return c->wd ? 0 : -1;
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

enum release_status redis_release_script(struct lock_client *c, const char *key,
                                         struct lab_err *err)
{
    long long n = redis_script_call(c, &c->release, key, err);
    return n < 0 ? RELEASE_ERROR : n > 0 ? RELEASE_OK : RELEASE_NOT_OWNER;
}

int redis_fence_key(char *out, size_t len, const char *key, struct lab_err *err)
{
    int n = snprintf(out, len, "%s" REDIS_FENCE_SUFFIX, key);
    if (n < 0 || (size_t)n >= len) {
        lab_err_set(err, ENAMETOOLONG, "lock key too long for its fence counter");
        return -1;
    }
    return 0;
}

/* One fenced attempt: the script grants and counts in one step. */
static int fenced_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    char fence[300], ttl[32];
    if (redis_fence_key(fence, sizeof fence, key, err) != 0 || redis_conn_ready(c, err) != 0)
        return -1;
    snprintf(ttl, sizeof ttl, "%lld", redis_ttl_ms(c));
    const char *argv[] = {key, fence, c->token, ttl};
    redisReply *r = redis_script_argv(c->rc, c->env->stats, &c->acquire, 2, 4, argv, err);
    if (!r)
        return -1;
    int granted = r->type == REDIS_REPLY_INTEGER && r->integer > 0;
    if (granted)
        c->env->stats->fence_token = r->integer;
    freeReplyObject(r);
    return granted;
}

int redis_fencing_setup(struct lock_client *c, struct lab_err *err)
{
    if (!c->env->fencing)
        return 0;
    c->acquire.src = redis_fenced_set_nx_px_lua;
    c->attempt = fenced_try;
    return redis_script_load(c->rc, &c->acquire, err);
}
