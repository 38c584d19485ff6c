/*
 * backend_etcd.c - the etcd store table (see backend.h): embedded, one
 * cluster per size the invocation's scenarios ask for (backends.etcd.members:
 * 1 or 3), or the user's --etcd / $LOCKLAB_ETCD (HOST:PORT[,HOST:PORT...],
 * the client URLs' host and port) for all. Designs and adapters get the
 * endpoints as lock_servers: node[] one per member, conn
 * "host:port,host:port" (an HTTP client puts "http://" before each).
 *
 * Every design keeps its keys under ETCD_KEY_PREFIX "<key>" (and below
 * "<key>/"); clearing deletes those. Operations are the gRPC requests the
 * members handled (the JSON gateway forwards each call as one), wake-ups
 * the watch events the members sent (etcd_debugging_mvcc_events_total).
 *
 * Fault roles: etcd-member:I is member I, always (etcd alone names the
 * member of a one-member cluster); etcd-leader is asked of the members
 * themselves (/v3/maintenance/status) each time a fault fires, since an
 * election moves it. Health is the same question: a leader that the
 * members answering agree on and that answers, every running member
 * answering.
 *
 * Adapters (backend: etcd) get the same endpoints in the forms etcd's
 * client libraries take them (docs/adapters.md): URLs for clientv3-style
 * clients and etcdctl, the first member's host and port apart for those
 * that take one server (python-etcd3), and the prefix clear() empties.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "etcd_machine.h"
#include "etcd_conn.h"
#include "etcd_settings.h"
#include "scenario.h"
#include "region.h"
#include "servers_etcd.h"

#define ETCD_MAX_MEMBERS 3
#define ETCD_SIZES 2 /* clusters of 1 and of 3 */

struct etcd_cluster {
    const struct scenario *plan; /* the first scenario asking for its size */
    struct lock_servers sv;
    int n_srv;
    int64_t start_ms; /* from the first spawn to a leader every member names */
    struct server srv[ETCD_MAX_MEMBERS];
};

enum { E_ALONE, E_MEMBER, E_LEADER };
static const struct backend_role_name etcd_role_names[] = {
    [E_ALONE] = {"etcd", 0, false, true},         /* the member of a one-member cluster */
    [E_MEMBER] = {"etcd-member", 2, false, true}, /* member I (0-based) */
    [E_LEADER] = {"etcd-leader", 0, false}, /* whichever member leads when it fires */
    {NULL, 0, false},
};
#define ROLE(r) (etcd_role_names[r].name)

static struct {
    bool external;
    struct etcd_cluster cl[ETCD_SIZES];
} etcd;

static struct etcd_cluster *cluster_of(const struct scenario *s)
{
    return &etcd.cl[etcd.external || etcd_settings_of(s)->members <= 1 ? 0 : 1];
}

static int etcd_check_external(const char *addr, struct lab_err *err)
{
    if (backend_parse_hosts(addr, NULL) == 0)
        return 0;
    lab_err_set(err, EINVAL, "bad etcd endpoints '%.100s' (expected HOST:PORT[,HOST:PORT...])",
                addr);
    return -1;
}

static void etcd_plan(const struct scenario *s, const struct lock_ops *ops)
{
    (void)ops;
    struct etcd_cluster *c = cluster_of(s);
    if (!c->plan)
        c->plan = s;
}

static void etcd_stop(void)
{
    for (int k = 0; k < ETCD_SIZES; k++)
        for (int i = 0; i < etcd.cl[k].n_srv; i++)
            servers_stop(&etcd.cl[k].srv[i]);
    memset(&etcd, 0, sizeof etcd);
}

static int etcd_start(const char *external, const volatile int *stop, struct lab_err *err)
{
    if (external) {
        if (!etcd.cl[0].plan && !etcd.cl[1].plan)
            return 0;
        if (etcd_check_external(external, err) != 0)
            return -1;
        backend_parse_hosts(external, &etcd.cl[0].sv);
        etcd.external = true;
        return servers_etcd_ping(etcd.cl[0].sv.conn, err);
    }
    for (int k = 0; k < ETCD_SIZES; k++) {
        struct etcd_cluster *c = &etcd.cl[k];
        if (!c->plan)
            continue;
        int n = etcd_settings_of(c->plan)->members;
        for (int i = 0; i < n; i++) /* the names hosts: places them by (host_spec.h) */
            if (n == 1)
                snprintf(c->srv[i].place, sizeof c->srv[i].place, "%s", ROLE(E_ALONE));
            else
                snprintf(c->srv[i].place, sizeof c->srv[i].place, "%s:%d", ROLE(E_MEMBER), i);
        int64_t t0 = lab_now_ns();
        if (servers_etcd_start(c->srv, n, stop, c->sv.conn, sizeof c->sv.conn, err) != 0)
            return -1;
        c->start_ms = (lab_now_ns() - t0) / 1000000;
        c->n_srv = c->sv.n = n;
        for (int i = 0; i < n; i++) {
            snprintf(c->sv.node[i].host, sizeof c->sv.node[i].host, "%s", c->srv[i].host);
            c->sv.node[i].port = c->srv[i].port;
        }
    }
    return 0;
}

static void etcd_servers(const struct lock_ops *ops, const struct scenario *s,
                         struct lock_servers *out)
{
    (void)ops;
    *out = cluster_of(s)->sv;
    /* The designs' sessions are leases of lock.ttl (etcd_sm_lease_s): a
     * lock outlives its silent holder that long. */
    out->session_timeout_ns = etcd_sm_lease_s(s->ttl_ns) * 1000000000;
}

static int etcd_clear(const struct lock_servers *sv, const struct scenario *s,
                      struct lab_err *err)
{
    static char keys[SCN_MAX_CLIENTS][160];
    int n = s->per_client_keys ? s->clients : 1;
    if (!sv->conn[0])
        return 0;
    for (int i = 0; i < n; i++)
        scenario_key_of(s, i, keys[i], sizeof keys[i]);
    return servers_etcd_clear(sv->conn, keys, n, err);
}

static int etcd_server_ops(const struct lock_servers *sv, int64_t *ops_served,
                           struct lab_err *err)
{
    *ops_served = 0;
    return sv->conn[0] ? servers_etcd_metric(sv->conn, "grpc_server_handled_total", ops_served,
                                              err)
                       : 0;
}

static int etcd_server_wakeups(const struct lock_servers *sv, int64_t *sent, struct lab_err *err)
{
    *sent = 0;
    return sv->conn[0] ? servers_etcd_metric(sv->conn, "etcd_debugging_mvcc_events_total", sent,
                                              err)
                       : 0;
}

static json_t *etcd_describe(const struct lock_ops *ops, const struct scenario *s)
{
    (void)ops;
    const struct etcd_cluster *c = cluster_of(s);
    json_t *d = json_pack("{s:b, s:i, s:s}", "external", etcd.external, "endpoints", c->sv.n,
                          "api", "v3 JSON gateway");
    if (!etcd.external) {
        json_object_set_new(d, "members", json_integer(c->n_srv));
        json_object_set_new(d, "fsync", json_false());
        json_object_set_new(d, "election_timeout_ms", json_integer(500));
        json_object_set_new(d, "start_ms", json_integer(c->start_ms));
    }
    return d;
}

/* The member that leads now, as the members answering say; -1 none. */
static int leader_of(struct etcd_cluster *c, int *answering)
{
    uint64_t id[ETCD_MAX_MEMBERS], leader[ETCD_MAX_MEMBERS];
    int ok[ETCD_MAX_MEMBERS], found = -1;
    *answering = 0;
    for (int i = 0; i < c->n_srv; i++) {
        ok[i] = servers_etcd_status(&c->srv[i], &id[i], &leader[i]);
        *answering += ok[i];
    }
    for (int i = 0; i < c->n_srv && found < 0; i++)
        for (int k = 0; ok[i] && k < c->n_srv; k++)
            if (ok[k] && leader[k] == id[i] && id[i] != 0)
                found = i;
    return found;
}

static int etcd_roles(const struct lock_ops *ops, const struct scenario *s,
                      struct backend_role *out, int max)
{
    (void)ops;
    struct etcd_cluster *c = cluster_of(s);
    int n = 0, answering;
    if (c->n_srv == 1 && n < max)
        out[n++] = (struct backend_role){ROLE(E_ALONE), -1, &c->srv[0]};
    for (int i = 0; i < c->n_srv && n < max; i++)
        out[n++] = (struct backend_role){ROLE(E_MEMBER), i, &c->srv[i]};
    int l = c->n_srv ? leader_of(c, &answering) : -1;
    if (l >= 0 && n < max)
        out[n++] = (struct backend_role){ROLE(E_LEADER), -1, &c->srv[l]};
    return n;
}

static const char *etcd_no_role(const struct lock_ops *ops, const struct scenario *s,
                                const char *role, int index)
{
    (void)ops;
    const struct etcd_cluster *c = cluster_of(s);
    if (etcd.external)
        return NULL;
    if (strcmp(role, ROLE(E_ALONE)) == 0 && c->n_srv > 1)
        return "a cluster of 3 has no single etcd: target etcd-member:I or etcd-leader";
    if (strcmp(role, ROLE(E_MEMBER)) == 0 && index >= c->n_srv)
        return "the cluster has no such member";
    return NULL; /* the leader: there is one, but not now (an election) */
}

static void etcd_health(const struct lock_ops *ops, const struct scenario *s,
                        struct backend_health *out)
{
    (void)ops;
    struct etcd_cluster *c = cluster_of(s);
    memset(out, 0, sizeof *out);
    out->servers = c->n_srv;
    for (int i = 0; i < c->n_srv; i++) {
        char st = c->srv[i].pid > 0 ? lab_proc_state(c->srv[i].pid) : 0;
        out->running += st != 0 && st != 'Z' && st != 'T' && st != 't';
    }
    int answering;
    int l = leader_of(c, &answering);
    out->available = l >= 0;
    out->whole = out->available && answering == out->running;
    if (l >= 0)
        snprintf(out->leader, sizeof out->leader, "%s:%d", ROLE(E_MEMBER), l);
}

/* ------------------------------------------------------------ adapters */

static const struct backend_adapter_kind etcd_adapter_kinds[] = {{"etcd", 0}, {NULL, 0}};

static int etcd_adapter_env(const char *word, struct lock_servers *sv, struct lab_err *err)
{
    (void)word;
    char urls[LOCK_MAX_SERVERS * 80] = "";
    size_t u = 0;
    for (int i = 0; i < sv->n; i++)
        u += (size_t)snprintf(urls + u, u < sizeof urls ? sizeof urls - u : 0, "%shttp://%s:%d",
                              i ? "," : "", sv->node[i].host, sv->node[i].port);
    if (sv->n < 1 || u >= sizeof urls) {
        lab_err_set(err, E2BIG, "the etcd endpoints do not fit an adapter's environment");
        return -1;
    }
    if (backend_env_put(sv, err, "LOCKLAB_ETCD_ENDPOINTS=%s", urls) != 0 ||
        backend_env_put(sv, err, "LOCKLAB_ETCD_HOST=%s", sv->node[0].host) != 0 ||
        backend_env_put(sv, err, "LOCKLAB_ETCD_PORT=%d", sv->node[0].port) != 0 ||
        backend_env_put(sv, err, "LOCKLAB_ETCD_PREFIX=%s", ETCD_KEY_PREFIX) != 0)
        return -1;
    return backend_env_put(sv, err, "ETCDCTL_ENDPOINTS=%s", sv->conn);
}

/* backend_ops.place_count: etcd-member:I is a member of the cluster. */
static int etcd_place_count(const struct scenario *s, const struct backend_role_name *r)
{
    return r == &etcd_role_names[E_MEMBER] ? etcd_settings_of(s)->members : 0;
}

const struct backend_ops backend_etcd = {
    .name = "etcd",
    .title = "etcd",
    .settings = etcd_settings_rows,
    .settings_size = sizeof(struct etcd_settings),
    .flag = "etcd",
    .env_var = "LOCKLAB_ETCD",
    .flag_usage = "H:P,...  use this etcd cluster (its client URLs) instead of\n"
                  "                     embedded members (also $LOCKLAB_ETCD)",
    .check_external = etcd_check_external,
    .plan = etcd_plan,
    .start = etcd_start,
    .stop = etcd_stop,
    .servers = etcd_servers,
    .clear = etcd_clear,
    .server_ops = etcd_server_ops,
    .server_wakeups = etcd_server_wakeups,
    .describe = etcd_describe,
    .role_names = etcd_role_names,
    .place_count = etcd_place_count,
    .roles = etcd_roles,
    .no_role = etcd_no_role,
    .adapter_kinds = etcd_adapter_kinds,
    .adapter_env = etcd_adapter_env,
    .health = etcd_health,
    .version = servers_etcd_version,
    .bench_impl = "etcd-lease",
    .bench_bare_loop = "locklab-bare-etcd",
    .bench_cycle = "etcd-lease cycle (lease grant + txn create + txn delete-if-ours)",
    .bench_warmup_s = 0.5,
    .bench_usage = "etcd: POST /v3/lease/grant + /v3/kv/txn create-if-absent + /v3/kv/txn\n"
                   "delete-if-ours (libcurl, the v3 JSON gateway) against etcd-lease;\n",
    .bench_ceiling_loop = "locklab-bare-etcd", /* no connection limit of its own */
};
