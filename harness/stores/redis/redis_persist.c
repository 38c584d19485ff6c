/*
 * redis_persist.c - apply a Redis persistence setting (see redis_persist.h).
 *
 * An embedded Redis starts with nothing to keep (no RDB, no AOF): a
 * restart brings it back empty, Kleppmann's case against Redlock. Servers
 * are started once per invocation and serve several scenarios, so the
 * setting is applied to the running server before each run, and a restart
 * fault starts it again with the same setting (the AOF lives in the
 * server's own directory, which a restart keeps): with aof-always every
 * write is on disk before the client hears OK, so a lock survives the
 * restart; with aof-everysec the last second of writes may not.
 *
 * Turning the AOF on in a running Redis 7 writes a base file in the
 * background first; the run waits until that is done, so that what the
 * run writes lands in a complete AOF.
 */
#include "redis_persist.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

#include "redis_conn.h"

#define PERSIST_TIMEOUT_MS 5000
#define REWRITE_WAIT_NS (10 * 1000000000LL)

/* More redis-server arguments for each setting, as a restart uses them. */
static const char *const aof_everysec[] = {"--appendonly", "yes", "--appendfsync", "everysec",
                                           NULL};
static const char *const aof_always[] = {"--appendonly", "yes", "--appendfsync", "always", NULL};

/* Send one command; 0 when it succeeded, -1 with err filled. */
static int command(redisContext *c, const struct server *s, struct lab_err *err,
                   const char *fmt, const char *arg)
{
    redisReply *r = redisCommand(c, fmt, arg);
    int ok = r && r->type != REDIS_REPLY_ERROR;
    if (!ok)
        lab_err_set(err, EIO, "%s (port %d): %s: %s", s->role, s->port, fmt,
                    r ? r->str : c->errstr);
    if (r)
        freeReplyObject(r);
    return ok ? 0 : -1;
}

/* The integer after "name:" in an INFO text, -1 when absent. */
static long long info_field(const char *info, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = info; (p = strstr(p, name)) != NULL; p += n)
        if ((p == info || p[-1] == '\n') && p[n] == ':')
            return strtoll(p + n + 1, NULL, 10);
    return -1;
}

/* Wait until no AOF rewrite is running or scheduled. 0 or -1. */
static int wait_rewritten(redisContext *c, const struct server *s, struct lab_err *err)
{
    int64_t deadline = lab_now_ns() + REWRITE_WAIT_NS;
    for (;;) {
        redisReply *r = redisCommand(c, "INFO persistence");
        if (!r || r->type != REDIS_REPLY_STRING) {
            lab_err_set(err, EIO, "%s (port %d): INFO persistence: %s", s->role, s->port,
                        r && r->type == REDIS_REPLY_ERROR ? r->str : c->errstr);
            if (r)
                freeReplyObject(r);
            return -1;
        }
        bool done = info_field(r->str, "aof_enabled") == 1 &&
                    info_field(r->str, "aof_rewrite_in_progress") == 0 &&
                    info_field(r->str, "aof_rewrite_scheduled") == 0;
        freeReplyObject(r);
        if (done)
            return 0;
        if (lab_now_ns() > deadline) {
            lab_err_set(err, ETIMEDOUT, "%s (port %d): the AOF was not written within %lld s",
                        s->role, s->port, REWRITE_WAIT_NS / 1000000000);
            return -1;
        }
        lab_sleep_ns(5 * 1000000, NULL);
    }
}

const char *redis_persist_name(enum redis_persistence p)
{
    return p == PERSIST_AOF_ALWAYS ? "aof-always" : p == PERSIST_AOF_EVERYSEC ? "aof-everysec"
                                                                            : "none";
}

int redis_persist_apply(struct server *s, enum redis_persistence p, struct lab_err *err)
{
    redisContext *c = redis_conn_open(s->role, s->host, s->port, PERSIST_TIMEOUT_MS, err);
    if (!c)
        return -1;
    int rc;
    if (p == PERSIST_NONE) {
        rc = command(c, s, err, "CONFIG SET appendonly %s", "no");
        s->more_args = NULL;
    } else {
        bool always = p == PERSIST_AOF_ALWAYS;
        rc = command(c, s, err, "CONFIG SET appendfsync %s", always ? "always" : "everysec");
        if (rc == 0)
            rc = command(c, s, err, "CONFIG SET appendonly %s", "yes");
        if (rc == 0)
            rc = wait_rewritten(c, s, err);
        s->more_args = always ? aof_always : aof_everysec;
    }
    redisFree(c);
    return rc;
}
