/*
 * backend_zk.c - the ZooKeeper store table (see backend.h): one ensemble
 * per invocation (embedded, sized and synced as the largest scenario asks,
 * or the user's --zk). Every lock lives under LOCK_ZK_ROOT "/<key>";
 * clearing deletes whatever is below those parents, however deep, and
 * operations are the packets the ensemble received (mntr).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "region.h"

#define ZK_MAX_SERVERS 3

/* This invocation's ensemble: what was planned and what runs. */
static struct {
    const struct scenario *plan;            /* the scenario asking for the largest ensemble */
    bool force_sync;                        /* ... its forceSync */
    bool external;                          /* the ensemble is the user's */
    struct lock_servers sv;                 /* where it is */
    int n_srv;                              /* embedded servers running */
    struct server srv[ZK_MAX_SERVERS];
} zk;

/* Each comma-separated part of a connection string is HOST:PORT; into sv
 * when sv is not NULL. */
static int parse_hosts(const char *s, struct lock_servers *sv)
{
    char buf[256];
    struct lock_servers tmp = {0};
    if (strlen(s) >= sizeof buf || !*s || s[strlen(s) - 1] == ',')
        return -1;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (tmp.n == LOCK_MAX_SERVERS)
            return -1;
        struct lock_endpoint *ep = &tmp.node[tmp.n++];
        if (lab_parse_hostport(p, ep->host, sizeof ep->host, &ep->port) != 0)
            return -1;
    }
    snprintf(tmp.conn, sizeof tmp.conn, "%s", s);
    if (sv)
        *sv = tmp;
    return 0;
}

static int zk_check_external(const char *addr, struct lab_err *err)
{
    if (parse_hosts(addr, NULL) == 0)
        return 0;
    lab_err_set(err, EINVAL, "bad ZooKeeper address '%s' (expected HOST:PORT[,HOST:PORT...])",
                addr);
    return -1;
}

static void zk_plan(const struct scenario *s, const struct lock_ops *ops)
{
    (void)ops;
    if (!zk.plan || s->zk_ensemble > zk.plan->zk_ensemble)
        zk.plan = s;
}

static void zk_stop(void)
{
    for (int i = 0; i < zk.n_srv; i++)
        servers_stop(&zk.srv[i]);
    memset(&zk, 0, sizeof zk);
}

static int zk_start(const char *external, const volatile int *stop, struct lab_err *err)
{
    if (!zk.plan)
        return 0;
    if (external) {
        if (zk_check_external(external, err) != 0)
            return -1;
        parse_hosts(external, &zk.sv);
        zk.external = true;
        return servers_zk_ping(zk.sv.conn, 5000, err);
    }
    int n = zk.plan->zk_ensemble;
    zk.force_sync = zk.plan->zk_force_sync;
    if (n > ZK_MAX_SERVERS) {
        lab_err_set(err, EINVAL, "a ZooKeeper ensemble of %d is not supported", n);
        return -1;
    }
    if (servers_zk_start(zk.srv, n, zk.force_sync, stop, zk.sv.conn, sizeof zk.sv.conn, err) != 0)
        return -1;
    zk.n_srv = n;
    zk.sv.n = n;
    for (int i = 0; i < n; i++) {
        snprintf(zk.sv.node[i].host, sizeof zk.sv.node[i].host, "%s", zk.srv[i].host);
        zk.sv.node[i].port = zk.srv[i].port;
    }
    return 0;
}

static void zk_servers(const struct lock_ops *ops, const struct scenario *s,
                       struct lock_servers *out)
{
    (void)ops, (void)s;
    *out = zk.sv;
}

static int zk_clear(const struct lock_servers *sv, const struct scenario *s,
                    struct lab_err *err)
{
    if (!sv->conn[0])
        return 0;
    static char parents[SCN_MAX_CLIENTS][192];
    const char *ptrs[SCN_MAX_CLIENTS];
    int n = s->per_client_keys ? s->clients : 1;
    char key[160];
    for (int i = 0; i < n; i++) {
        region_key_of(s, i, key, sizeof key);
        snprintf(parents[i], sizeof parents[i], "%s/%s", LOCK_ZK_ROOT, key);
        ptrs[i] = parents[i];
    }
    return servers_zk_clear(sv->conn, ptrs, n, err);
}

static int zk_server_ops(const struct lock_servers *sv, int64_t *ops_served,
                         struct lab_err *err)
{
    *ops_served = 0;
    return sv->conn[0] ? servers_zk_packets(sv->conn, ops_served, err) : 0;
}

static json_t *zk_describe(const struct lock_ops *ops, const struct scenario *s)
{
    (void)ops;
    json_t *z = json_pack("{s:b, s:I}", "external", zk.external, "session_timeout_ms",
                          (json_int_t)(s->zk_session_timeout_ns / 1000000));
    if (!zk.external) {
        json_object_set_new(z, "ensemble", json_integer(zk.n_srv));
        json_object_set_new(z, "force_sync", json_boolean(zk.force_sync));
    }
    return z;
}

static int zk_roles(const struct lock_ops *ops, const struct scenario *s,
                    struct backend_role *out, int max)
{
    (void)ops, (void)s;
    int n = 0;
    for (int i = 0; i < zk.n_srv && n < max; i++)
        out[n++] = (struct backend_role){"zookeeper", zk.n_srv == 1 ? -1 : i, &zk.srv[i]};
    return n;
}

const struct backend_ops backend_zookeeper = {
    .name = "zookeeper",
    .title = "ZooKeeper",
    .flag = "zk",
    .env_var = "LOCKLAB_ZK",
    .flag_usage = "H:P[,H:P...]  use this ZooKeeper ensemble instead of embedded servers\n"
                  "                     (also $LOCKLAB_ZK)",
    .check_external = zk_check_external,
    .plan = zk_plan,
    .start = zk_start,
    .stop = zk_stop,
    .servers = zk_servers,
    .clear = zk_clear,
    .server_ops = zk_server_ops,
    .describe = zk_describe,
    .roles = zk_roles,
    .bench_impl = "zk-sequential",
    .bench_bare_loop = "locklab-bare-zk",
    .bench_cycle = "zk-sequential cycle (create ephemeral-sequential + getChildren + delete)",
    .bench_warmup_s = 2.0,
};
