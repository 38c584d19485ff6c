/*
 * run_env.h - where the servers of a run are, as the runner hands them to
 * every client it forks (and, from there, to the lock design's open hook),
 * and what a result records of them.
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

/* The servers a result really ran on (one invocation starts one of each,
 * sized for the largest request, so this may differ from its scenario). */
struct run_servers {
    bool redis;               /* the design used a Redis lock store */
    bool redis_external;      /* ... an external one */
    int redis_masters;        /* independent masters it ran on (multi-master designs), else 0 */
    bool zookeeper;           /* the design used ZooKeeper */
    bool zk_external;         /* ... an external ensemble */
    int zk_ensemble;          /* embedded servers (0 when external) */
    bool zk_force_sync;       /* embedded forceSync */
    int64_t zk_session_timeout_ms; /* the session timeout the clients asked for */
};

#endif
