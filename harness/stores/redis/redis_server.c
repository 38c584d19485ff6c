/*
 * redis_server.c - embedded redis-server instances (see redis_server.h): the
 * command line every Redis of the lab gets (a loopback port, no RDB, no
 * AOF unless its owner adds one, no daemon), the wait until it answers PING
 * and the restart a fault asks for, on the generic process management of
 * proc/servers.c. A redis-server that exits during start-up (another process
 * took the free port first) is retried on a new port a few times.
 */
#include "redis_server.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_conn.h"

#define START_TIMEOUT_MS 10000
#define START_TRIES 3

static const char *redis_binary(void)
{
    const char *b = getenv("LOCKLAB_REDIS_SERVER");
    return b && *b ? b : "redis-server";
}

static pid_t spawn_redis(struct server *s, struct lab_err *err)
{
    char port[16], extra[sizeof s->extra];
    snprintf(port, sizeof port, "%d", s->port);
    char *argv[32] = {(char *)redis_binary(), "--port", port, "--bind", s->host,
                      "--save", "", "--appendonly", "no", "--dir", s->dir,
                      "--daemonize", "no", "--protected-mode", "no", "--maxclients", "16384"}; /* 10,000 clients and the lab */
    int n = 0;
    while (argv[n])
        n++;
    snprintf(extra, sizeof extra, "%s", s->extra);
    char *save;
    for (char *w = strtok_r(extra, " ", &save); w && n < 31; w = strtok_r(NULL, " ", &save))
        argv[n++] = w;
    /* the owner's arguments last: a later --appendonly overrides the one above */
    for (const char *const *a = s->more_args; a && *a && n < 31; a++)
        argv[n++] = (char *)*a;
    argv[n] = NULL;
    return servers_spawn(s, "redis.log", argv, err);
}

int servers_redis_ping(const char *host, int port, int timeout_ms, struct lab_err *err)
{
    redisContext *c = redis_conn_open("Redis", host, port, timeout_ms, err);
    if (!c)
        return -1;
    redisReply *r = redisCommand(c, "PING");
    int ok = r && r->type == REDIS_REPLY_STATUS;
    if (!ok)
        lab_err_set(err, EPROTO, "Redis at %s:%d did not answer PING: %s", host, port,
                    r && r->type == REDIS_REPLY_ERROR ? r->str : c->errstr);
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return ok ? 0 : -1;
}

int servers_wait_ping(struct server *s, const char *what, const char *logname,
                      struct lab_err *err)
{
    int64_t deadline = lab_now_ns() + (int64_t)START_TIMEOUT_MS * 1000000;
    while (lab_now_ns() < deadline) {
        if (servers_exited(s)) {
            lab_err_set(err, ECHILD, "%s exited during start-up (see %s/%s)", what, s->dir,
                        logname);
            return -1;
        }
        if (servers_redis_ping(s->host, s->port, 200, NULL) == 0)
            return 0;
        lab_sleep_ns(10 * 1000000, NULL);
    }
    lab_err_set(err, ETIMEDOUT, "%s on port %d did not answer within %d ms", what, s->port,
                START_TIMEOUT_MS);
    return -1;
}

static int wait_ready(struct server *s, struct lab_err *err)
{
    return servers_wait_ping(s, "redis-server", "redis.log", err);
}

static int respawn_redis(struct server *s, struct lab_err *err)
{
    return spawn_redis(s, err) == 0 ? wait_ready(s, err) : -1;
}

int servers_redis_start(struct server *s, const char *role, struct lab_err *err)
{
    return servers_redis_start_with(s, role, "", NULL, err);
}

int servers_redis_start_with(struct server *s, const char *role, const char *extra,
                             const char *preload, struct lab_err *err)
{
    servers_reset(s); /* its place kept */
    snprintf(s->extra, sizeof s->extra, "%s", extra);
    s->preload = preload;
    if (!servers_binary_exists(redis_binary())) {
        lab_err_set(err, ENOENT, "%s not found: install it (apt-get install redis-server, or "
                    "`make test`) or point --redis at a server", redis_binary());
        return -1;
    }
    for (int attempt = 0; attempt < START_TRIES; attempt++) {
        if (servers_prepare(s, role, err) != 0 || spawn_redis(s, err) != 0)
            return -1;
        s->respawn = respawn_redis;
        if (wait_ready(s, err) == 0)
            return 0;
        servers_stop(s);
    }
    return -1;
}

int servers_redis_version(char *out, size_t outlen)
{
    char *argv[] = {(char *)redis_binary(), "--version", NULL};
    return servers_version(argv, out, outlen);
}
