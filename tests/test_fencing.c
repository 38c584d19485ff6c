/*
 * test_fencing.c - the fencing tokens of every design that claims
 * LOCK_CAP_FENCING, on a real embedded redis-server, ZooKeeper and etcd
 * member (an etcd lease runs out after 1 s at the least: etcd-lease waits
 * for it within its 5 s budget).
 *
 * A token is only worth something if it rises with every grant, whoever
 * gets the lock, and most of all when the lock passed on because the
 * previous holder's lease ran out under it: that is the case the stock
 * store's check exists for. So for each design two clients take the lock
 * in turns, the TTL designs once more after the first holder's lock
 * expired while it still "held" it, and every token must be above the one
 * before. A nested grant of a reentrant design keeps the outer token, and
 * a client that did not ask for fencing gets none (the unfenced grant is
 * the design's usual one, with no extra work). First, without servers,
 * (the verdict rule for `fenced` is tests/test_verdict.c's).
 */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "lock.h"
#include "runner.h"
#include "scenario_load.h"
#include "redis_server.h"
#include "servers_etcd.h"
#include "servers_zk.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define TTL_NS (150 * MS)
#define ROUNDS 6

static volatile int no_stop;
static char etcd_endpoints[256]; /* the embedded etcd member, for the etcd designs */

/* The designs' own settings, as a scenario with lock.ttl given sets them
 * (redisson: lock(leaseTime) with the TTL, no watchdog). */
static struct scenario scn;

static int load_settings(void)
{
    char path[] = "/tmp/locklab-fencing-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    static const char yaml[] = "name: fencing\nimpls: [redis-lua]\nlock: {ttl: 150ms}\n";
    int ok = write(fd, yaml, sizeof yaml - 1) == (ssize_t)(sizeof yaml - 1);
    close(fd);
    char err[512];
    int rc = ok ? scenario_load(path, &scn, err, sizeof err) : -1;
    CHECK(rc == 0, "settings scenario: %s", ok ? err : "write failed");
    unlink(path);
    return rc;
}

/* One lock client with its own connection and counters. */
struct tclient {
    struct lock_env env;
    struct lock_servers servers;
    struct lock_stats stats;
    struct lock_client *c;
    const struct lock_ops *ops;
    struct lab_err err;
};

static int tc_open(struct tclient *t, const struct lock_ops *ops, int id, int fencing,
                   const struct server *redis, const char *zk_hosts)
{
    memset(t, 0, sizeof *t);
    t->ops = ops;
    struct lock_servers *sv = &t->servers;
    sv->n = 1;
    sv->session_timeout_ns = 10 * SEC;
    if (ops->backend[0] == 'z') {
        snprintf(sv->conn, sizeof sv->conn, "%s", zk_hosts);
    } else if (strcmp(ops->backend, "etcd") == 0) {
        snprintf(sv->conn, sizeof sv->conn, "%s", etcd_endpoints);
    } else {
        snprintf(sv->node[0].host, sizeof sv->node[0].host, "%s", redis->host);
        sv->node[0].port = redis->port;
    }
    t->env = (struct lock_env){
        .servers = sv,
        .options = scenario_options(&scn, ops),
        .ttl_ns = TTL_NS,
        .retry_interval_ns = 5 * MS,
        .client_id = id,
        .stop = &no_stop,
        .stats = &t->stats,
        .fencing = fencing,
    };
    int rc = ops->open(&t->c, &t->env, &t->err);
    CHECK(rc == 0, "%s: open: %s", ops->name, t->err.msg);
    return rc;
}

/* Acquire key (5 s budget): the grant's token, or -1 when not granted. */
static int64_t tc_grant(struct tclient *t, const char *key)
{
    enum lock_status st = t->ops->acquire(t->c, key, 5 * SEC, &t->err);
    CHECK(st == LOCK_GRANTED, "%s: acquire %s: status %d %s", t->ops->name, key, st, t->err.msg);
    return st == LOCK_GRANTED ? t->stats.fence_token : -1;
}

static void tc_release(struct tclient *t, const char *key)
{
    t->ops->release(t->c, key, &t->err);
}

/* Two clients in turns, then (TTL designs) a grant over an expired holder. */
static void test_design(const struct lock_ops *ops, const struct server *redis,
                        const char *zk_hosts)
{
    struct tclient a, b;
    char key[64];
    snprintf(key, sizeof key, "fence-test-%s", ops->name);
    if (tc_open(&a, ops, 0, 1, redis, zk_hosts) != 0)
        return;
    if (tc_open(&b, ops, 1, 1, redis, zk_hosts) != 0) {
        ops->close(a.c);
        return;
    }
    int64_t last = 0;
    int rising = 0;
    for (int i = 0; i < ROUNDS; i++) {
        struct tclient *t = i % 2 ? &b : &a;
        int64_t tok = tc_grant(t, key);
        rising += tok > last;
        CHECK(tok > last, "%s: round %d: token %lld not above %lld", ops->name, i,
              (long long)tok, (long long)last);
        if (ops->caps & LOCK_CAP_REENTRANT) {
            int64_t inner = tc_grant(t, key);
            CHECK(inner == tok, "%s: a nested grant changed the token %lld -> %lld", ops->name,
                  (long long)tok, (long long)inner);
            tc_release(t, key);
        }
        tc_release(t, key);
        last = tok > last ? tok : last;
    }
    if (ops->caps & LOCK_CAP_TTL) {
        /* a holds, its lease runs out under it (a watchdog would renew it:
         * then the lock is deleted, as a lost renewal leaves it), b is
         * granted: b's token is the one the store must prefer over a's late
         * write */
        int64_t stale = tc_grant(&a, key);
        lab_sleep_ns(TTL_NS + 100 * MS, NULL);
        if (ops->caps & LOCK_CAP_RENEWS) {
            redisContext *rc = redisConnect(redis->host, redis->port);
            redisReply *r = rc && !rc->err ? redisCommand(rc, "DEL %s", key) : NULL;
            CHECK(r && r->type == REDIS_REPLY_INTEGER, "%s: cannot DEL the lock", ops->name);
            if (r)
                freeReplyObject(r);
            if (rc)
                redisFree(rc);
        }
        int64_t fresh = tc_grant(&b, key);
        CHECK(stale > last && fresh > stale,
              "%s: after expiry: stale holder %lld, new holder %lld (last %lld)", ops->name,
              (long long)stale, (long long)fresh, (long long)last);
        tc_release(&b, key);
        tc_release(&a, key);
    }
    printf("%-16s tokens rose in %d of %d turns, last %lld\n", ops->name, rising, ROUNDS,
           (long long)last);
    ops->close(a.c);
    ops->close(b.c);

    /* without fencing: no token, the design's usual grant */
    struct tclient u;
    if (tc_open(&u, ops, 2, 0, redis, zk_hosts) != 0)
        return;
    int64_t none = tc_grant(&u, key);
    CHECK(none == 0, "%s: an unfenced grant carried token %lld", ops->name, (long long)none);
    tc_release(&u, key);
    ops->close(u.c);
}

int main(void)
{
    if (load_settings() != 0)
        return check_done();
    struct server redis = {0}, zk[1];
    char hosts[256];
    struct lab_err err = {0};
    if (servers_redis_start(&redis, "lock-store", &err) != 0) {
        CHECK(0, "redis start: %s", err.msg);
        return check_done();
    }
    if (servers_zk_start(zk, 1, 0, NULL, hosts, sizeof hosts, &err) != 0) {
        CHECK(0, "zk start: %s", err.msg);
        servers_stop_all();
        return check_done();
    }
    struct server etcd[1];
    if (servers_etcd_start(etcd, 1, NULL, etcd_endpoints, sizeof etcd_endpoints, &err) != 0) {
        CHECK(0, "etcd start: %s", err.msg);
        servers_stop_all();
        return check_done();
    }
    int fenced = 0;
    for (int i = 0; i < lock_registry_count; i++) {
        const struct lock_ops *ops = lock_registry[i];
        if (!(ops->caps & LOCK_CAP_FENCING))
            continue;
        fenced++;
        test_design(ops, &redis, hosts);
    }
    /* the designs the issue names, so that losing the capability is noticed */
    static const char *const must[] = {"redis-lua",     "redis-watchdog", "redis-reentrant",
                                       "redisson",      "zk-sequential",  "zk-ephemeral",
                                       "zk-semaphore",  "etcd-lease",     "etcd-mutex",
                                       "etcd-lock-api"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
        const struct lock_ops *ops = lock_find(must[i]);
        CHECK(ops && (ops->caps & LOCK_CAP_FENCING), "%s claims no fencing", must[i]);
    }
    const struct lock_ops *rl = lock_find("redlock");
    CHECK(rl && !(rl->caps & LOCK_CAP_FENCING) && rl->no_fencing,
          "redlock must not claim fencing, and must say why");
    CHECK(fenced == 10, "%d designs claim fencing, expected 10", fenced);
    servers_stop_all();
    return check_done();
}
