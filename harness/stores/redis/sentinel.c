/*
 * sentinel.c - the embedded Redis sentinel topology (see sentinel.h).
 *
 * The master and its replicas are ordinary embedded redis-servers (the
 * replicas started with --replicaof); each sentinel is redis-server in
 * sentinel mode with a configuration file of its own, which it rewrites as
 * it learns the topology. The sentinels declare a master down after
 * DOWN_AFTER_MS without an answer, and two of the three must agree before
 * one of them promotes a replica. "Settled" is read from the servers
 * themselves, never assumed after a sleep: the master's INFO replication
 * (every replica online at the master's offset) and each sentinel's view
 * (the same master, every replica, the other sentinels). While it settles,
 * an old master back from a partition is made a replica at once.
 */
#include "sentinel.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_admin.h"
#include "redis_server.h"

/* A sentinel reconnects a link at most once a second, so a master it must
 * reconnect to (just promoted, or a replica that was held back) is not
 * answered sooner than that: below 1 s of down-after, a sentinel could
 * take a fresh master for dead and start a second failover (seen: 1 run
 * in 10 of the demo's failover went through three masters at 500 ms). */
#define DOWN_AFTER_MS 1000
#define FAILOVER_TIMEOUT_MS 2000
#define ASK_TIMEOUT_MS 1000
#define START_SETTLE_NS (30000000000LL) /* the sentinels find each other by hello messages */
#define POLL_NS (20000000LL)

static const char *redis_binary(void)
{
    const char *b = getenv("LOCKLAB_REDIS_SERVER");
    return b && *b ? b : "redis-server";
}

static int spawn_sentinel(struct server *s, struct lab_err *err)
{
    char conf[600];
    snprintf(conf, sizeof conf, "%s/sentinel.conf", s->dir);
    char *const argv[] = {(char *)redis_binary(), conf, "--sentinel", NULL};
    return servers_spawn(s, "sentinel.log", argv, err);
}

static int respawn_sentinel(struct server *s, struct lab_err *err)
{
    return spawn_sentinel(s, err) == 0 ? servers_wait_ping(s, "a sentinel", "sentinel.log", err)
                                       : -1;
}

/* Start sentinel i watching the master on master_port. */
static int start_sentinel(struct server *s, int i, const char *master_host, int master_port,
                          struct lab_err *err)
{
    char role[32];
    snprintf(role, sizeof role, "sentinel-%d", i);
    memset(s, 0, sizeof *s);
    snprintf(s->place, sizeof s->place, "sentinel:%d", i);
    if (servers_prepare(s, role, err) != 0)
        return -1;
    char path[600];
    snprintf(path, sizeof path, "%s/sentinel.conf", s->dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        lab_err_set(err, errno, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f,
            "port %d\nbind %s\nprotected-mode no\ndir %s\n"
            "sentinel monitor %s %s %d 2\n"
            "sentinel down-after-milliseconds %s %d\n"
            "sentinel failover-timeout %s %d\n"
            "sentinel parallel-syncs %s %d\n",
            s->port, s->host, s->dir, SENTINEL_NAME, master_host, master_port, SENTINEL_NAME, DOWN_AFTER_MS,
            SENTINEL_NAME, FAILOVER_TIMEOUT_MS, SENTINEL_NAME, REDIS_MAX_REPLICAS);
    fclose(f);
    s->respawn = respawn_sentinel;
    return respawn_sentinel(s, err);
}

int sentinel_start(struct sentinel_group *g, int replicas, const volatile int *stop,
                   struct lab_err *err)
{
    memset(g, 0, sizeof *g);
    if (replicas < 1 || replicas > REDIS_MAX_REPLICAS) {
        lab_err_set(err, EINVAL, "%d replicas: between 1 and %d", replicas, REDIS_MAX_REPLICAS);
        return -1;
    }
    snprintf(g->redis[0].place, sizeof g->redis[0].place, "redis-master");
    if (servers_redis_start_with(&g->redis[0], "sentinel-master", SENTINEL_REDIS_ARGS, NULL,
                                 err) != 0)
        return -1;
    g->n_redis = 1;
    char extra[128], role[32];
    snprintf(extra, sizeof extra, SENTINEL_REDIS_ARGS " --replicaof %s %d", g->redis[0].host,
             g->redis[0].port);
    for (int i = 0; i < replicas; i++, g->n_redis++) {
        snprintf(role, sizeof role, "sentinel-replica-%d", i);
        snprintf(g->redis[1 + i].place, sizeof g->redis[0].place, "redis-replica:%d", i);
        if (servers_redis_start_with(&g->redis[1 + i], role, extra, NULL, err) != 0)
            goto fail;
    }
    for (int i = 0; i < SENTINEL_COUNT; i++)
        if (start_sentinel(&g->sentinel[i], i, g->redis[0].host, g->redis[0].port, err) != 0)
            goto fail;
    if (sentinel_settle(g, START_SETTLE_NS, stop, err) == 0)
        return 0;
fail:
    sentinel_stop(g);
    return -1;
}

void sentinel_stop(struct sentinel_group *g)
{
    for (int i = 0; i < SENTINEL_COUNT; i++)
        servers_stop(&g->sentinel[i]);
    for (int i = 0; i < g->n_redis; i++)
        servers_stop(&g->redis[i]);
    g->n_redis = 0;
}

/* The server of g on port, or -1. */
static int redis_index(const struct sentinel_group *g, int port)
{
    for (int i = 0; i < g->n_redis; i++)
        if (g->redis[i].port == port)
            return i;
    return -1;
}

int sentinel_master(const struct sentinel_group *g, struct lab_err *err)
{
    for (int i = 0; i < SENTINEL_COUNT; i++) {
        char host[64];
        int port;
        if (g->sentinel[i].pid <= 0 ||
            redis_sentinel_ask(g->sentinel[i].host, g->sentinel[i].port, SENTINEL_NAME,
                               ASK_TIMEOUT_MS, host, sizeof host, &port, err) != 0)
            continue;
        int m = redis_index(g, port);
        if (m < 0)
            lab_err_set(err, EPROTO, "the sentinels name port %d, not one of the lab's", port);
        return m;
    }
    return -1;
}

/* One command on a new connection to s; the reply or NULL. */
static redisReply *ask(const struct server *s, const char *cmd)
{
    return redis_admin_command(s->host, s->port, ASK_TIMEOUT_MS, cmd, NULL);
}

/* The value of field in an INFO text ("field:value\r\n"), as a number. */
static long long info_num(const char *info, const char *field)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s:", field);
    const char *p = strstr(info, key);
    return p ? atoll(p + strlen(key)) : -1;
}

/* Does the master (INFO replication) have want online replicas, each of
 * which has acknowledged the offset *since (the master's offset when it
 * was first asked: -1 sets it)? Sets why otherwise. Not the master's
 * offset now: the sentinels' hello messages move it a few times a second
 * and a replica acknowledges once a second, so the two are seldom equal. */
static bool master_in_sync(const struct server *m, int want, long long *since, char *why,
                           size_t len)
{
    redisReply *r = ask(m, "INFO replication");
    if (!r || r->type != REDIS_REPLY_STRING) {
        snprintf(why, len, "the master does not answer INFO");
        if (r)
            freeReplyObject(r);
        return false;
    }
    if (*since < 0)
        *since = info_num(r->str, "master_repl_offset");
    long long offset = *since;
    int online = 0;
    for (const char *p = strstr(r->str, "\nslave"); p; p = strstr(p + 1, "\nslave")) {
        const char *st = strstr(p, "state=online");
        const char *off = strstr(p, "offset=");
        const char *eol = strchr(p + 1, '\n');
        if (st && off && (!eol || (st < eol && off < eol)) && atoll(off + 7) >= offset)
            online++;
    }
    freeReplyObject(r);
    if (online != want)
        snprintf(why, len, "%d of %d replicas online at the master's offset %lld", online,
                 want, offset);
    return online == want;
}

/* Does sentinel s name master m, know want replicas (none down) and the
 * other sentinels? Sets why otherwise. */
static bool sentinel_in_view(const struct server *s, const struct server *m, int want,
                             char *why, size_t len)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "SENTINEL MASTER %s", SENTINEL_NAME);
    redisReply *r = ask(s, cmd);
    bool ok = r && r->type == REDIS_REPLY_ARRAY;
    int port = -1, slaves = -1, others = -1;
    char flags[64] = ""; /* a copy: the reply is freed before why is written */
    for (size_t i = 0; ok && i + 1 < r->elements; i += 2) {
        const char *k = r->element[i]->str, *v = r->element[i + 1]->str;
        if (!k || !v)
            continue;
        if (!strcmp(k, "port"))
            port = atoi(v);
        else if (!strcmp(k, "num-slaves"))
            slaves = atoi(v);
        else if (!strcmp(k, "num-other-sentinels"))
            others = atoi(v);
        else if (!strcmp(k, "flags"))
            snprintf(flags, sizeof flags, "%s", v);
    }
    ok = ok && port == m->port && slaves == want && others == SENTINEL_COUNT - 1 &&
         !strcmp(flags, "master");
    if (r)
        freeReplyObject(r);
    snprintf(cmd, sizeof cmd, "SENTINEL REPLICAS %s", SENTINEL_NAME);
    r = ok ? ask(s, cmd) : NULL;
    int up = 0;
    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        redisReply *e = r->element[i];
        for (size_t j = 0; e->type == REDIS_REPLY_ARRAY && j + 1 < e->elements; j += 2)
            if (e->element[j]->str && !strcmp(e->element[j]->str, "flags") &&
                e->element[j + 1]->str && !strcmp(e->element[j + 1]->str, "slave"))
                up++;
    }
    if (r)
        freeReplyObject(r);
    if (ok && up != want)
        ok = false;
    if (!ok)
        snprintf(why, len,
                 "sentinel on port %d sees master port %d, %d replicas (%d up), %d other "
                 "sentinels, flags '%s'",
                 s->port, port, slaves, up, others, flags);
    return ok;
}

/* A server that still says it is a master while the sentinels name
 * another (an old master back from a network partition) is told to
 * replicate the one they name: the sentinels would do the same, but only
 * some 8 s after they see it (their wait before converting an instance
 * that claims to be master), and a run starts on a settled topology. */
static void demote_stale_masters(const struct sentinel_group *g, int m)
{
    for (int i = 0; i < g->n_redis; i++) {
        if (i == m || g->redis[i].pid <= 0)
            continue;
        redisReply *r = ask(&g->redis[i], "ROLE");
        bool master = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
                      r->element[0]->str && !strcmp(r->element[0]->str, "master");
        if (r)
            freeReplyObject(r);
        if (!master)
            continue;
        char cmd[96];
        snprintf(cmd, sizeof cmd, "REPLICAOF %s %d", g->redis[m].host, g->redis[m].port);
        r = ask(&g->redis[i], cmd);
        if (r)
            freeReplyObject(r);
    }
}

int sentinel_settle(struct sentinel_group *g, int64_t timeout_ns, const volatile int *stop,
                    struct lab_err *err)
{
    int64_t deadline = lab_now_ns() + timeout_ns;
    char why[200] = "";
    int was = -1;
    long long since = -1;
    for (;;) {
        bool ok = true;
        for (int i = 0; ok && i < g->n_redis; i++)
            if (g->redis[i].pid <= 0) {
                snprintf(why, sizeof why, "%s is down", g->redis[i].role);
                ok = false;
            }
        for (int i = 0; ok && i < SENTINEL_COUNT; i++)
            if (g->sentinel[i].pid <= 0) {
                snprintf(why, sizeof why, "%s is down", g->sentinel[i].role);
                ok = false;
            }
        struct lab_err e = {0};
        int m = ok ? sentinel_master(g, &e) : -1;
        if (ok && m < 0) {
            snprintf(why, sizeof why, "no sentinel names a master: %.150s", e.msg);
            ok = false;
        }
        if (ok && m != was) {
            was = m;
            since = -1;
        }
        if (ok)
            demote_stale_masters(g, m);
        ok = ok && master_in_sync(&g->redis[m], g->n_redis - 1, &since, why, sizeof why);
        for (int i = 0; ok && i < SENTINEL_COUNT; i++)
            ok = sentinel_in_view(&g->sentinel[i], &g->redis[m], g->n_redis - 1, why,
                                  sizeof why);
        if (ok)
            return 0;
        if (lab_now_ns() >= deadline || (stop && *stop)) {
            lab_err_set(err, ETIMEDOUT, "the sentinel topology did not settle: %s", why);
            return -1;
        }
        lab_sleep_ns(POLL_NS, stop);
    }
}
