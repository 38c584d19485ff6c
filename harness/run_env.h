/*
 * run_env.h - where the servers of a run are, as the runner hands them to
 * every client it forks (and, from there, to the lock design's open hook).
 */
#ifndef LOCKLAB_RUN_ENV_H
#define LOCKLAB_RUN_ENV_H

#include <stdbool.h>

#include "lock.h"
#include "workload.h"

/* Where the backends are, for this run. */
struct run_env {
    const char *redis_host;        /* lock store */
    int redis_port;
    const char *zk_hosts;          /* ZooKeeper ensemble ("host:port,...") or NULL */
    int n_masters;                 /* independent masters (redlock) */
    const struct lock_endpoint *masters;
    struct workload_target stock;  /* the stock store (embedded, never faulted) */
    bool progress;                 /* print progress on stderr */
    bool redis_external;           /* the lock store is --redis / LOCKLAB_REDIS */
    bool zk_external;              /* ZooKeeper is --zk / LOCKLAB_ZK */
    int zk_ensemble;               /* servers of the embedded ensemble (0 when external) */
    bool zk_force_sync;            /* its forceSync */
};

#endif
