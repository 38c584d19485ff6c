/*
 * backend_zk.c - the ZooKeeper store table (see backend.h): embedded, one
 * ensemble per size the invocation's scenarios ask for (a single server
 * and one of 3, each synced as the first scenario asking for it says), so
 * that scenarios run together each run on the size they name; or the
 * user's --zk for all. Every lock lives under LOCK_ZK_ROOT "/<key>";
 * clearing deletes whatever is below those parents, however deep, and
 * operations are the packets the ensemble received (mntr).
 *
 * Fault roles: zookeeper:I is server I, always; in an ensemble of 3,
 * zookeeper-leader and zookeeper-follower:I (the I-th following, in server
 * order) are asked of the servers themselves (srvr's Mode) each time a
 * fault fires, since an election moves them. A single server runs
 * standalone and has neither. Health, for the engine to time an election,
 * is the same question: one leader serving, and every server that runs
 * serving (a restarted one has synced).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "scenario.h"
#include "region.h"
#include "servers_zk.h"
#include "zk_settings.h"

#define ZK_MAX_SERVERS 3
#define ZK_SIZES 2 /* ensembles of 1 and of 3 */

/* One ensemble: what was planned and what runs. */
struct zk_ensemble {
    const struct scenario *plan;            /* the first scenario asking for its size */
    bool force_sync;                        /* ... its forceSync */
    struct lock_servers sv;                 /* where it is */
    int n_srv;                              /* embedded servers running */
    int64_t start_ms;                       /* from the first spawn to a whole ensemble */
    struct server srv[ZK_MAX_SERVERS];
};

/* The roles a fault may target, spelled here only (roles() uses them). */
enum { Z_SERVER, Z_LEADER, Z_FOLLOWER };
static const struct backend_role_name zk_role_names[] = {
    [Z_SERVER] = {"zookeeper", 1, false, true}, /* the ensemble's only server, or server I
                                                    (hosts: may place it) */
    [Z_LEADER] = {"zookeeper-leader", 0, false}, /* whichever server leads when it fires */
    [Z_FOLLOWER] = {"zookeeper-follower", 2, false}, /* the I-th (0-based) of the servers
                                                        following then */
    {NULL, 0, false},
};
#define ROLE(r) (zk_role_names[r].name)

/* This invocation's ensembles, or the user's. */
static struct {
    bool external;                          /* the user's ensemble, in ens[0], serves all */
    struct zk_ensemble ens[ZK_SIZES];
} zk;

/* The ensemble scenario s runs on. */
static struct zk_ensemble *ens_of(const struct scenario *s)
{
    return &zk.ens[zk.external || zk_settings_of(s)->ensemble <= 1 ? 0 : 1];
}

static int zk_check_external(const char *addr, struct lab_err *err)
{
    if (backend_parse_hosts(addr, NULL) == 0)
        return 0;
    lab_err_set(err, EINVAL, "bad ZooKeeper address '%s' (expected HOST:PORT[,HOST:PORT...])",
                addr);
    return -1;
}

static void zk_plan(const struct scenario *s, const struct lock_ops *ops)
{
    (void)ops;
    struct zk_ensemble *e = ens_of(s);
    if (!e->plan)
        e->plan = s;
}

static void zk_stop(void)
{
    for (int k = 0; k < ZK_SIZES; k++)
        for (int i = 0; i < zk.ens[k].n_srv; i++)
            servers_stop(&zk.ens[k].srv[i]);
    memset(&zk, 0, sizeof zk);
}

/* Start the planned ensemble e. 0 or -1 with err filled. */
static int start_ensemble(struct zk_ensemble *e, const volatile int *stop, struct lab_err *err)
{
    int n = zk_settings_of(e->plan)->ensemble;
    e->force_sync = zk_settings_of(e->plan)->force_sync;
    if (n > ZK_MAX_SERVERS) {
        lab_err_set(err, EINVAL, "a ZooKeeper ensemble of %d is not supported", n);
        return -1;
    }
    for (int i = 0; i < n; i++) /* the names hosts: places them by (host_spec.h) */
        if (n == 1)
            snprintf(e->srv[i].place, sizeof e->srv[i].place, "%s", ROLE(Z_SERVER));
        else
            snprintf(e->srv[i].place, sizeof e->srv[i].place, "%s:%d", ROLE(Z_SERVER), i);
    int64_t t0 = lab_now_ns();
    if (servers_zk_start(e->srv, n, e->force_sync, stop, e->sv.conn, sizeof e->sv.conn, err) != 0)
        return -1;
    e->start_ms = (lab_now_ns() - t0) / 1000000;
    e->n_srv = n;
    e->sv.n = n;
    for (int i = 0; i < n; i++) {
        snprintf(e->sv.node[i].host, sizeof e->sv.node[i].host, "%s", e->srv[i].host);
        e->sv.node[i].port = e->srv[i].port;
    }
    return 0;
}

static int zk_start(const char *external, const volatile int *stop, struct lab_err *err)
{
    if (external) {
        if (!zk.ens[0].plan && !zk.ens[1].plan)
            return 0;
        if (zk_check_external(external, err) != 0)
            return -1;
        backend_parse_hosts(external, &zk.ens[0].sv);
        zk.external = true;
        return servers_zk_ping(zk.ens[0].sv.conn, 5000, err);
    }
    for (int k = 0; k < ZK_SIZES; k++)
        if (zk.ens[k].plan && start_ensemble(&zk.ens[k], stop, err) != 0)
            return -1;
    return 0;
}

static void zk_servers(const struct lock_ops *ops, const struct scenario *s,
                       struct lock_servers *out)
{
    (void)ops;
    *out = ens_of(s)->sv;
    out->session_timeout_ns = zk_settings_of(s)->session_timeout_ns;
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
        scenario_key_of(s, i, key, sizeof key);
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

static int zk_server_wakeups(const struct lock_servers *sv, int64_t *sent, struct lab_err *err)
{
    *sent = 0;
    return sv->conn[0] ? servers_zk_watch_events(sv->conn, sent, err) : 0;
}

static json_t *zk_describe(const struct lock_ops *ops, const struct scenario *s)
{
    (void)ops;
    const struct zk_ensemble *e = ens_of(s);
    json_int_t timeout_ms = (json_int_t)(zk_settings_of(s)->session_timeout_ns / 1000000);
    json_t *z = json_pack("{s:b, s:I, s:i}", "external", zk.external, "session_timeout_ms",
                          timeout_ms, "addresses",
                          e->sv.n); /* every client is given them all */
    if (!zk.external) {
        json_object_set_new(z, "ensemble", json_integer(e->n_srv));
        json_object_set_new(z, "force_sync", json_boolean(e->force_sync));
        json_object_set_new(z, "start_ms", json_integer(e->start_ms));
    }
    return z;
}

static int zk_roles(const struct lock_ops *ops, const struct scenario *s,
                    struct backend_role *out, int max)
{
    (void)ops;
    struct zk_ensemble *e = ens_of(s);
    int n = 0, followers = 0;
    for (int i = 0; i < e->n_srv && n < max; i++)
        out[n++] = (struct backend_role){ROLE(Z_SERVER), e->n_srv == 1 ? -1 : i, &e->srv[i]};
    for (int i = 0; e->n_srv > 1 && i < e->n_srv && n < max; i++) {
        enum zk_mode m = servers_zk_mode(&e->srv[i], NULL);
        if (m == ZK_MODE_LEADER)
            out[n++] = (struct backend_role){ROLE(Z_LEADER), -1, &e->srv[i]};
        else if (m == ZK_MODE_FOLLOWER)
            out[n++] = (struct backend_role){ROLE(Z_FOLLOWER), followers++, &e->srv[i]};
    }
    return n;
}

static const char *zk_no_role(const struct lock_ops *ops, const struct scenario *s,
                              const char *role, int index)
{
    (void)ops;
    static char why[96];
    const struct zk_ensemble *e = ens_of(s);
    bool leader = strcmp(role, ROLE(Z_LEADER)) == 0;
    if (!leader && strcmp(role, ROLE(Z_FOLLOWER)) != 0)
        return strcmp(role, ROLE(Z_SERVER)) == 0 && e->n_srv > 1 && index >= e->n_srv
                   ? "the ensemble has no such server"
                   : NULL;
    if (zk.external)
        return NULL;
    if (e->n_srv == 1)
        return "a single ZooKeeper server runs standalone: no leader, no followers";
    if (!leader && index >= e->n_srv - 1) {
        snprintf(why, sizeof why, "an ensemble of %d has %d followers", e->n_srv, e->n_srv - 1);
        return why;
    }
    return NULL; /* there is one, but not now (an election, a server down) */
}

static void zk_health(const struct lock_ops *ops, const struct scenario *s,
                      struct backend_health *out)
{
    (void)ops;
    struct zk_ensemble *e = ens_of(s);
    int leaders = 0, serving = 0;
    memset(out, 0, sizeof *out);
    out->servers = e->n_srv;
    for (int i = 0; i < e->n_srv; i++) {
        enum zk_mode m = servers_zk_mode(&e->srv[i], NULL);
        if (m == ZK_MODE_DOWN)
            continue;
        out->running++;
        serving += m != ZK_MODE_NOT_SERVING;
        if (m == ZK_MODE_LEADER || m == ZK_MODE_STANDALONE) {
            leaders++;
            if (e->n_srv == 1)
                snprintf(out->leader, sizeof out->leader, "%s", ROLE(Z_SERVER));
            else
                snprintf(out->leader, sizeof out->leader, "%s:%d", ROLE(Z_SERVER), i);
        }
    }
    out->available = leaders == 1;
    out->whole = out->available && serving == out->running;
    if (!out->available)
        out->leader[0] = '\0';
}

/* bench overhead: forceSync off unless --force-sync (an fsync per write is
 * the disk's noise, not the harness's). The benchmark's scenario is its
 * own, built in code: its settings are written here. */
static void zk_bench_settings(struct scenario *s, bool on)
{
    ((struct zk_settings *)zk_settings_of(s))->force_sync = on;
}

/* Its adapters' word, and their variables: the ensemble's connection
 * string and the session timeout its clients keep. */
static const struct backend_adapter_kind zk_adapter_kinds[] = {{"zookeeper", 0}, {NULL, 0}};

static int zk_adapter_env(const char *word, struct lock_servers *sv, struct lab_err *err)
{
    (void)word;
    if (backend_env_put(sv, err, "LOCKLAB_ZK=%s", sv->conn) != 0)
        return -1;
    return backend_env_put(sv, err, "LOCKLAB_ZK_SESSION_TIMEOUT_MS=%lld",
                           (long long)(sv->session_timeout_ns / 1000000));
}

/* backend_ops.place_count: zookeeper:I is a server of the ensemble. */
static int zk_place_count(const struct scenario *s, const struct backend_role_name *r)
{
    return r == &zk_role_names[Z_SERVER] ? zk_settings_of(s)->ensemble : 0;
}

const struct backend_ops backend_zookeeper = {
    .name = "zookeeper",
    .title = "ZooKeeper",
    .settings = zk_settings_rows,
    .settings_size = sizeof(struct zk_settings),
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
    .server_wakeups = zk_server_wakeups,
    .describe = zk_describe,
    .role_names = zk_role_names,
    .place_count = zk_place_count,
    .roles = zk_roles,
    .adapter_kinds = zk_adapter_kinds,
    .adapter_env = zk_adapter_env,
    .no_role = zk_no_role,
    .health = zk_health,
    .version = servers_zk_version,
    .bench_impl = "zk-sequential",
    .bench_bare_loop = "locklab-bare-zk",
    .bench_cycle = "zk-sequential cycle (create ephemeral-sequential + getChildren + delete)",
    .bench_warmup_s = 2.0,
    .bench_usage = "zookeeper: create ephemeral-sequential + getChildren + delete (the ZooKeeper\n"
                   "C client) against zk-sequential, forceSync off unless --force-sync (an fsync\n"
                   "per write is the disk's noise, not locklab's);\n",
    .bench_flag = "force-sync",
    .bench_flag_help = "zookeeper: fsync each write (forceSync on)",
    .bench_flag_note = " (forceSync on)",
    .bench_settings = zk_bench_settings,
    .bench_ceiling_loop = "locklab-bare-zk-many", /* maxClientCnxns=0: no limit */
};
