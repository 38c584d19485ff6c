/*
 * backend_zk.c - the ZooKeeper store table (see backend.h): every lock
 * lives under LOCK_ZK_ROOT "/<key>"; clearing deletes whatever is below
 * those parents, however deep, and operations are the packets the
 * ensemble received (mntr).
 */
#include <stdio.h>

#include "backend.h"
#include "region.h"
#include "servers.h"

static int zk_clear(const struct lock_ops *ops, const struct run_env *env,
                    const struct scenario *s, struct lab_err *err)
{
    (void)ops;
    if (!env->zk_hosts)
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
    return servers_zk_clear(env->zk_hosts, ptrs, n, err);
}

static int zk_server_ops(const struct lock_ops *ops, const struct run_env *env,
                         int64_t *ops_served, struct lab_err *err)
{
    (void)ops;
    *ops_served = 0;
    return env->zk_hosts ? servers_zk_packets(env->zk_hosts, ops_served, err) : 0;
}

static void zk_describe(const struct lock_ops *ops, const struct run_env *env,
                        const struct scenario *s, struct run_servers *out)
{
    (void)ops;
    out->zookeeper = true;
    out->zk_external = env->zk_external;
    out->zk_ensemble = env->zk_ensemble;
    out->zk_force_sync = env->zk_force_sync;
    out->zk_session_timeout_ms = s->zk_session_timeout_ns / 1000000;
}

const struct backend_ops backend_zookeeper = {
    .name = "zookeeper",
    .clear = zk_clear,
    .server_ops = zk_server_ops,
    .describe = zk_describe,
};
