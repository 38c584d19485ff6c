/*
 * backend_redis.c - the Redis store table (see backend.h): one lock store
 * (embedded, or the user's --redis); for multi-master designs (redlock) as
 * many independent embedded masters as the largest scenario asks for, of
 * which each run uses its own scenario's number; and for scenarios with
 * `topology: sentinel` a master with replicas and three sentinels
 * (sentinel.c), which single-store designs then reach through the
 * sentinels. Keys are cleared with DEL, operations counted from INFO
 * commandstats (redis_admin.c). Before each run the embedded servers get
 * the scenario's persistence (redis_persist.c) and a clock an earlier run
 * moved is set back (redis_clock.c); when a planned scenario jumps a clock,
 * they run under the clock shim.
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "scenario.h"
#include "redis_admin.h"
#include "redis_clock.h"
#include "redis_persist.h"
#include "redis_server.h"
#include "redis_settings.h"
#include "region.h"
#include "sentinel.h"

/* The roles a fault may target, spelled here only (roles() uses them). */
enum { R_REDIS, R_MASTER, R_REPLICA, R_SENTINEL, R_NODE };
static const struct backend_role_name redis_role_names[] = {
    [R_REDIS] = {"redis", 0, true, true},    /* the lock store (in the sentinel topology: its master now) */
    [R_MASTER] = {"redis-master", 0, false, true}, /* the sentinel topology's master, as the sentinels
                                                name it now */
    [R_REPLICA] = {"redis-replica", 2, false, true}, /* one of its replicas (0-based, in start order) */
    [R_SENTINEL] = {"sentinel", 2, false, true},     /* one of its sentinels */
    [R_NODE] = {"redis-node", 2, true, true},        /* one independent master (redlock) */
    {NULL, 0, false},
};
#define ROLE(r) (redis_role_names[r].name)

/* The backend words of its adapters, spelled here only (docs/adapters.md). */
enum { A_REDIS, A_NODES, A_SENTINEL };
static const struct backend_adapter_kind redis_adapter_kinds[] = {
    [A_REDIS] = {"redis", 0},                      /* the one store: LOCKLAB_REDIS */
    [A_NODES] = {"redis-nodes", LOCK_CAP_MULTI_MASTER}, /* independent masters */
    [A_SENTINEL] = {"sentinel", 0},                /* the store behind its sentinels */
    {NULL, 0},
};
#define ADAPTER_IS(w, k) (strcmp((w), redis_adapter_kinds[k].word) == 0)

/* This invocation's Redis: what was planned and what runs. */
static struct {
    bool need_store;                          /* a single-store design runs */
    int need_masters;                         /* most masters a multi-master run asks for */
    bool need_clock;                          /* a clock-jump fault: start under the shim */
    bool external;                            /* the store is the user's */
    struct lock_endpoint store;               /* where the store is */
    struct server store_srv;                  /* embedded store (pid 0 when external) */
    int n_masters;                            /* masters started */
    struct server master_srv[LOCK_MAX_SERVERS];
    int need_replicas;                        /* most replicas a sentinel scenario asks for */
    struct sentinel_group sg;                 /* the sentinel topology, when one runs */
} rd;

static bool multi(const struct lock_ops *ops)
{
    return (ops->caps & LOCK_CAP_MULTI_MASTER) != 0;
}

/* Does this run reach its store through the sentinels? (Multi-master
 * designs keep their independent masters.) */
static bool sentinel_run(const struct lock_ops *ops, const struct scenario *s)
{
    return !multi(ops) && strcmp(redis_settings_of(s)->topology, "sentinel") == 0;
}

static enum redis_persistence persistence_of(const struct scenario *s)
{
    return (enum redis_persistence)redis_settings_of(s)->persistence;
}

static int redis_check_external(const char *addr, struct lab_err *err)
{
    return backend_check_hostport(addr, "Redis", err);
}

static void redis_plan(const struct scenario *s, const struct lock_ops *ops)
{
    const struct redis_settings *set = redis_settings_of(s);
    rd.need_clock |= scenario_has_fault(s, FAULT_CLOCK_JUMP);
    if (sentinel_run(ops, s)) {
        if (set->replicas > rd.need_replicas)
            rd.need_replicas = set->replicas;
    } else if (!multi(ops))
        rd.need_store = true;
    else if (set->masters > rd.need_masters)
        rd.need_masters = set->masters;
}

static void redis_stop(void)
{
    for (int i = 0; i < rd.n_masters; i++)
        servers_stop(&rd.master_srv[i]);
    servers_stop(&rd.store_srv);
    sentinel_stop(&rd.sg);
    memset(&rd, 0, sizeof rd);
}

static int redis_start(const char *external, const volatile int *stop, struct lab_err *err)
{
    const char *shim = NULL;
    if (rd.need_clock && !(shim = redis_clock_shim(err)))
        return -1;
    if (rd.need_store && external) {
        if (redis_check_external(external, err) != 0)
            return -1;
        lab_parse_hostport(external, rd.store.host, sizeof rd.store.host, &rd.store.port);
        if (servers_redis_ping(rd.store.host, rd.store.port, 2000, err) != 0)
            return -1;
        rd.external = true;
    } else if (rd.need_store) {
        snprintf(rd.store_srv.place, sizeof rd.store_srv.place, "%s", ROLE(R_REDIS));
        if (servers_redis_start_with(&rd.store_srv, "lock-store", "", shim, err) != 0)
            return -1;
        snprintf(rd.store.host, sizeof rd.store.host, "%s", rd.store_srv.host);
        rd.store.port = rd.store_srv.port;
    }
    for (; rd.n_masters < rd.need_masters; rd.n_masters++) {
        char role[32];
        snprintf(role, sizeof role, "master-%d", rd.n_masters);
        snprintf(rd.master_srv[rd.n_masters].place, sizeof rd.master_srv[0].place, "%s:%d",
                 ROLE(R_NODE), rd.n_masters);
        if (servers_redis_start_with(&rd.master_srv[rd.n_masters], role, "", shim, err) != 0)
            return -1;
    }
    /* the sentinel topology is always embedded: --redis names one store */
    if (rd.need_replicas && !rd.sg.n_redis &&
        sentinel_start(&rd.sg, rd.need_replicas, stop, err) != 0)
        return -1;
    return 0;
}

static void redis_servers(const struct lock_ops *ops, const struct scenario *s,
                          struct lock_servers *out)
{
    memset(out, 0, sizeof *out);
    if (sentinel_run(ops, s)) {
        out->n = SENTINEL_COUNT;
        for (int i = 0; i < out->n; i++) {
            snprintf(out->node[i].host, sizeof out->node[i].host, "%s", rd.sg.sentinel[i].host);
            out->node[i].port = rd.sg.sentinel[i].port;
        }
        snprintf(out->sentinel_master, sizeof out->sentinel_master, "%s", SENTINEL_NAME);
    } else if (multi(ops)) {
        /* a run uses its scenario's own number of masters, even when
         * another scenario of the same invocation had more started */
        int masters = redis_settings_of(s)->masters;
        out->n = masters < rd.n_masters ? masters : rd.n_masters;
        for (int i = 0; i < out->n; i++) {
            snprintf(out->node[i].host, sizeof out->node[i].host, "%s", rd.master_srv[i].host);
            out->node[i].port = rd.master_srv[i].port;
        }
    } else {
        out->n = 1;
        out->node[0] = rd.store;
    }
    backend_fill_conn(out);
}

#define SETTLE_NS (30000000000LL) /* a failover's aftermath settles within seconds */

static int redis_clear(const struct lock_servers *sv, const struct scenario *s,
                       struct lab_err *err)
{
    int n_keys = s->per_client_keys ? s->clients : 1;
    char key[160];
    struct lock_servers data = *sv;
    if (sv->sentinel_master[0]) {
        /* a run starts on a settled topology: a failover of the last run
         * has finished and its old master rejoined as a replica */
        int m = sentinel_settle(&rd.sg, SETTLE_NS, NULL, err) == 0 ? sentinel_master(&rd.sg, err)
                                                                   : -1;
        if (m < 0)
            return -1;
        data.n = 1;
        snprintf(data.node[0].host, sizeof data.node[0].host, "%s", rd.sg.redis[m].host);
        data.node[0].port = rd.sg.redis[m].port;
    }
    for (int k = 0; k < n_keys; k++) {
        scenario_key_of(s, k, key, sizeof key);
        for (int i = 0; i < data.n; i++)
            if (redis_admin_del(data.node[i].host, data.node[i].port, key, err) != 0)
                return -1;
    }
    return 0;
}

static int redis_server_ops(const struct lock_servers *sv, int64_t *ops_served,
                            struct lab_err *err)
{
    *ops_served = 0;
    if (sv->sentinel_master[0]) {
        lab_err_set(err, ENOTSUP, "not counted: the master can move during a run");
        return -1;
    }
    for (int i = 0; i < sv->n; i++) {
        int64_t c;
        if (redis_admin_calls(sv->node[i].host, sv->node[i].port, &c, err) != 0)
            return -1;
        *ops_served += c;
    }
    return 0;
}

static json_t *redis_describe(const struct lock_ops *ops, const struct scenario *s)
{
    struct lock_servers sv;
    redis_servers(ops, s, &sv);
    if (sentinel_run(ops, s)) {
        struct lab_err e = {0};
        int m = sentinel_master(&rd.sg, &e);
        return json_pack("{s:s, s:b, s:i, s:i, s:i, s:s}", "topology", "sentinel", "external", 0,
                         "replicas", rd.sg.n_redis - 1, "sentinels", SENTINEL_COUNT,
                         "master_port", m >= 0 ? rd.sg.redis[m].port : 0, "persistence",
                         redis_persist_name(persistence_of(s)));
    }
    json_t *r = json_pack("{s:s, s:b}", "topology", multi(ops) ? "independent" : "single",
                          "external", !multi(ops) && rd.external); /* masters: always embedded */
    if (multi(ops))
        json_object_set_new(r, "masters", json_integer(sv.n));
    if (multi(ops) || !rd.external)
        json_object_set_new(r, "persistence", json_string(redis_persist_name(
                                                  persistence_of(s))));
    return r;
}

static int redis_roles(const struct lock_ops *ops, const struct scenario *s,
                       struct backend_role *out, int max)
{
    int n = 0;
    if (sentinel_run(ops, s)) {
        /* by what each server is now: a failover moves redis-master */
        int m = sentinel_master(&rd.sg, NULL);
        if (m >= 0) {
            out[n++] = (struct backend_role){ROLE(R_MASTER), -1, &rd.sg.redis[m]};
            out[n++] = (struct backend_role){ROLE(R_REDIS), -1, &rd.sg.redis[m]};
        }
        for (int i = 0, r = 0; i < rd.sg.n_redis && n < max; i++)
            if (i != m)
                out[n++] = (struct backend_role){ROLE(R_REPLICA), r++, &rd.sg.redis[i]};
        for (int i = 0; i < SENTINEL_COUNT && n < max; i++)
            out[n++] = (struct backend_role){ROLE(R_SENTINEL), i, &rd.sg.sentinel[i]};
        return n;
    }
    if (multi(ops)) {
        struct lock_servers sv;
        redis_servers(ops, s, &sv);
        for (int i = 0; i < sv.n && n < max; i++)
            out[n++] = (struct backend_role){ROLE(R_NODE), i, &rd.master_srv[i]};
    } else if (!rd.external && n < max) {
        out[n++] = (struct backend_role){ROLE(R_REDIS), -1, &rd.store_srv};
    }
    return n;
}

static int redis_failover_step(struct failover *fo, bool granted, bool window_over, int64_t now,
                               struct lab_err *err)
{
    return sentinel_failover_step(&rd.sg, fo, granted, window_over, now, err);
}

static void redis_failover_abort(struct failover *fo)
{
    sentinel_failover_abort(&rd.sg, fo);
}

/* Is role a server that holds lock keys (one persistence applies to)? */
static bool data_role(const char *role)
{
    return strcmp(role, ROLE(R_REDIS)) == 0 || strcmp(role, ROLE(R_NODE)) == 0 ||
           strcmp(role, ROLE(R_MASTER)) == 0 || strcmp(role, ROLE(R_REPLICA)) == 0;
}

/* The scenario's min-replicas-to-write and min-replicas-max-lag on srv (a
 * server of the sentinel topology: whichever is master when a run
 * starts or a failover promotes it applies them). 0 or -1 with err. */
static int apply_min_replicas(const struct server *srv, const struct redis_settings *set,
                              struct lab_err *err)
{
    char cmd[96];
    snprintf(cmd, sizeof cmd, "CONFIG SET min-replicas-to-write %d min-replicas-max-lag %d",
             set->min_replicas_to_write, set->min_replicas_max_lag);
    redisReply *r = redis_admin_command(srv->host, srv->port, 2000, cmd, err);
    if (r)
        freeReplyObject(r);
    return r ? 0 : -1;
}

/* The clock back to the machine's, and the scenario's persistence, on every
 * embedded server the design uses (an external store is left as it is);
 * in the sentinel topology the master's min-replicas settings too. */
static int redis_prepare_run(const struct lock_ops *ops, const struct scenario *s,
                             struct lab_err *err)
{
    struct backend_role r[BACKEND_MAX_ROLES];
    int n = redis_roles(ops, s, r, BACKEND_MAX_ROLES);
    for (int i = 0; i < n; i++) {
        if (redis_clock_reset(r[i].srv, err) != 0)
            return -1;
        if (data_role(r[i].name) &&
            redis_persist_apply(r[i].srv, persistence_of(s), err) != 0)
            return -1;
        if (sentinel_run(ops, s) && data_role(r[i].name) &&
            apply_min_replicas(r[i].srv, redis_settings_of(s), err) != 0)
            return -1;
    }
    return 0;
}

static int redis_answers(const struct server *srv)
{
    return servers_redis_ping(srv->host, srv->port, 200, NULL);
}

/* Serving: the master the sentinels name answers (sentinel topology), a
 * majority of the independent masters answer (what a multi-master design
 * needs), or the one store answers. */
static void redis_health(const struct lock_ops *ops, const struct scenario *s,
                         struct backend_health *out)
{
    struct backend_role r[BACKEND_MAX_ROLES];
    int n = redis_roles(ops, s, r, BACKEND_MAX_ROLES);
    const struct server *master = NULL;
    int need = 1;
    if (sentinel_run(ops, s)) {
        for (int i = 0; i < n && !master; i++)
            if (strcmp(r[i].name, ROLE(R_MASTER)) == 0)
                master = r[i].srv;
        if (!master) { /* the sentinels name none now: not serving */
            memset(out, 0, sizeof *out);
            out->servers = out->running = n;
            return;
        }
    } else if (multi(ops)) {
        need = n / 2 + 1;
    }
    backend_health_asked(r, n, master, need, redis_answers, out);
}

/* An adapter's backend against the scenario's topology: a single store is
 * reached through the sentinels when the topology is sentinel, so the two
 * must agree. */
static int redis_finish_settings(const struct scenario *s, int *adapter, char *msg,
                                 size_t msglen)
{
    bool sentinel = strcmp(redis_settings_of(s)->topology, "sentinel") == 0;
    for (int i = 0; i < s->n_adapters; i++) {
        const struct adapter_spec *a = &s->adapters[i].spec;
        const char *why = NULL;
        if (ADAPTER_IS(a->backend, A_SENTINEL) && !sentinel)
            why = "has backend sentinel, which needs backends.redis.topology: sentinel";
        else if (ADAPTER_IS(a->backend, A_REDIS) && sentinel)
            why = "has backend redis, but this scenario's Redis store is behind sentinels "
                  "(topology: sentinel): declare backend sentinel";
        if (why) {
            *adapter = i;
            snprintf(msg, msglen, "adapter '%s' %s", a->name, why);
            return -1;
        }
    }
    return 0;
}

/* An adapter's variables: the servers the run's design talks to (the
 * store, the masters or the sentinels: servers() chose them by the same
 * caps and topology the word gave). */
static int redis_adapter_env(const char *word, struct lock_servers *sv, struct lab_err *err)
{
    if (ADAPTER_IS(word, A_SENTINEL)) {
        if (backend_env_put(sv, err, "LOCKLAB_SENTINELS=%s", sv->conn) != 0)
            return -1;
        return backend_env_put(sv, err, "LOCKLAB_SENTINEL_MASTER=%s", sv->sentinel_master);
    }
    return backend_env_put(sv, err, "%s=%s",
                           ADAPTER_IS(word, A_NODES) ? "LOCKLAB_REDIS_NODES" : "LOCKLAB_REDIS",
                           sv->conn);
}

/* The stock store: a plain embedded Redis of its own. */
static int redis_start_stock(struct server *srv, struct lab_err *err)
{
    return servers_redis_start(srv, "stock", err);
}

/* backend_ops.place_count: the replicas and sentinels of the sentinel
 * topology and redlock's masters, as the settings start them. */
static int redis_place_count(const struct scenario *s, const struct backend_role_name *r)
{
    const struct redis_settings *rs = redis_settings_of(s);
    if (r == &redis_role_names[R_REPLICA])
        return rs->replicas;
    if (r == &redis_role_names[R_SENTINEL])
        return SENTINEL_COUNT;
    if (r == &redis_role_names[R_NODE])
        return rs->masters;
    return 0;
}

const struct backend_ops backend_redis = {
    .name = "redis",
    .title = "Redis",
    .settings = redis_settings_rows,
    .settings_size = sizeof(struct redis_settings),
    .finish_settings = redis_finish_settings,
    .flag = "redis",
    .env_var = "LOCKLAB_REDIS",
    .flag_usage = "HOST:PORT  use this Redis as the lock store instead of an embedded\n"
                  "                     one (also $LOCKLAB_REDIS); the stock store stays embedded",
    .check_external = redis_check_external,
    .plan = redis_plan,
    .start = redis_start,
    .stop = redis_stop,
    .servers = redis_servers,
    .prepare_run = redis_prepare_run,
    .clear = redis_clear,
    .server_ops = redis_server_ops,
    .describe = redis_describe,
    .role_names = redis_role_names,
    .place_count = redis_place_count,
    .roles = redis_roles,
    .adapter_kinds = redis_adapter_kinds,
    .adapter_env = redis_adapter_env,
    .health = redis_health,
    .failover_step = redis_failover_step,
    .failover_abort = redis_failover_abort,
    .clock_jump = redis_clock_jump,
    .start_stock = redis_start_stock,
    .version = servers_redis_version,
    .bench_impl = "redis-lua",
    .bench_ceiling_tool = "redis-benchmark",
    .bench_ceiling_tool_pkg = "redis-tools",
    .bench_bare_loop = "locklab-bare-redis",
    .bench_cycle = "redis-lua cycle (SET NX PX + EVALSHA)",
    .bench_warmup_s = 0.5,
    .bench_usage = "redis: SET NX PX + EVALSHA (hiredis) against redis-lua;\n",
};
