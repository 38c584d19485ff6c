/*
 * backend_redis.c - the Redis store table (see backend.h): the lock store,
 * or for a multi-master design (redlock) every independent master of the
 * run. Keys are cleared with DEL, operations counted from INFO
 * commandstats (redis_admin.c).
 */
#include <stdio.h>

#include "backend.h"
#include "redis_admin.h"
#include "region.h"

/* Every Redis server ops talks to in env: the lock store, or the masters. */
static int redis_servers(const struct lock_ops *ops, const struct run_env *env,
                         const struct lock_endpoint **eps, struct lock_endpoint *single)
{
    if (ops->caps & LOCK_CAP_MULTI_MASTER) {
        *eps = env->masters;
        return env->n_masters;
    }
    snprintf(single->host, sizeof single->host, "%s", env->redis_host);
    single->port = env->redis_port;
    *eps = single;
    return 1;
}

static int redis_clear(const struct lock_ops *ops, const struct run_env *env,
                       const struct scenario *s, struct lab_err *err)
{
    struct lock_endpoint one;
    const struct lock_endpoint *eps;
    int n_eps = redis_servers(ops, env, &eps, &one);
    int n_keys = s->per_client_keys ? s->clients : 1;
    char key[160];
    for (int k = 0; k < n_keys; k++) {
        region_key_of(s, k, key, sizeof key);
        for (int i = 0; i < n_eps; i++)
            if (redis_admin_del(eps[i].host, eps[i].port, key, err) != 0)
                return -1;
    }
    return 0;
}

static int redis_server_ops(const struct lock_ops *ops, const struct run_env *env,
                            int64_t *ops_served, struct lab_err *err)
{
    struct lock_endpoint one;
    const struct lock_endpoint *eps;
    int n_eps = redis_servers(ops, env, &eps, &one);
    *ops_served = 0;
    for (int i = 0; i < n_eps; i++) {
        int64_t c;
        if (redis_admin_calls(eps[i].host, eps[i].port, &c, err) != 0)
            return -1;
        *ops_served += c;
    }
    return 0;
}

static void redis_describe(const struct lock_ops *ops, const struct run_env *env,
                           const struct scenario *s, struct run_servers *out)
{
    (void)s;
    bool multi = (ops->caps & LOCK_CAP_MULTI_MASTER) != 0;
    out->redis = true;
    out->redis_external = env->redis_external && !multi; /* masters are always embedded */
    out->redis_masters = multi ? env->n_masters : 0;
}

const struct backend_ops backend_redis = {
    .name = "redis",
    .clear = redis_clear,
    .server_ops = redis_server_ops,
    .describe = redis_describe,
};
