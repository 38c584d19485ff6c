/*
 * redis_admin.c - the harness's own short conversations with a lock store
 * (see redis_admin.h). Each call opens and closes its own connection: they
 * happen once before and once after a run, never in a measured path.
 */
#include "redis_admin.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

static redisReply *admin_cmd(redisContext *c, struct lab_err *err, const char *fmt, const char *arg)
{
    redisReply *r = arg ? redisCommand(c, fmt, arg) : redisCommand(c, fmt);
    if (!r || r->type == REDIS_REPLY_ERROR) {
        lab_err_set(err, EIO, "redis: %s", r ? r->str : c->errstr);
        if (r)
            freeReplyObject(r);
        return NULL;
    }
    return r;
}

redisReply *redis_admin_command(const char *host, int port, int timeout_ms, const char *cmd,
                                struct lab_err *err)
{
    redisContext *c = redis_conn_open("Redis", host, port, timeout_ms, err);
    if (!c)
        return NULL;
    redisReply *r = admin_cmd(c, err, cmd, NULL);
    redisFree(c);
    return r;
}

int redis_admin_del(const char *host, int port, const char *key, struct lab_err *err)
{
    redisContext *c = redis_conn_open("Redis", host, port, 5000, err);
    if (!c)
        return -1;
    redisReply *r = admin_cmd(c, err, "DEL %s", key);
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return r ? 0 : -1;
}

/* Commands the harness sends itself between the two readings, not lock
 * traffic. (Its DEL of the lock keys comes before the first reading, so DEL
 * counts: it is how several designs release.) */
static int is_admin_command(const char *name, size_t len)
{
    static const char *const admin[] = {"info", "config", "ping", "command", "time"};
    for (size_t i = 0; i < sizeof admin / sizeof admin[0]; i++)
        if (strlen(admin[i]) == len && strncmp(name, admin[i], len) == 0)
            return 1;
    return 0;
}

int redis_admin_calls(const char *host, int port, int64_t *calls, struct lab_err *err)
{
    redisContext *c = redis_conn_open("Redis", host, port, 5000, err);
    if (!c)
        return -1;
    redisReply *r = admin_cmd(c, err, "INFO commandstats", NULL);
    redisFree(c);
    if (!r)
        return -1;
    int64_t total = 0;
    const char *p = r->type == REDIS_REPLY_STRING ? r->str : "";
    for (; (p = strstr(p, "cmdstat_")) != NULL; p++) {
        const char *name = p + 8, *colon = strchr(name, ':');
        const char *n = colon ? strstr(colon, "calls=") : NULL;
        if (!n)
            break;
        if (!is_admin_command(name, (size_t)(colon - name)))
            total += strtoll(n + 6, NULL, 10);
    }
    freeReplyObject(r);
    *calls = total;
    return 0;
}
