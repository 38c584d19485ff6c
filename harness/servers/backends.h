/*
 * backends.h - the servers one locklab invocation needs, decided once.
 *
 * Before anything runs, the run command works out which backends its
 * scenarios use and starts (or checks) them all, so a missing redis-server
 * is reported up front with exit code 3, not in the middle of a table.
 * The lock store is embedded unless --redis or LOCKLAB_REDIS names an
 * external one; the stock store is always embedded, because it is the
 * ground truth of the stock workload and must never be a shared server.
 */
#ifndef LOCKLAB_BACKENDS_H
#define LOCKLAB_BACKENDS_H

#include <stdbool.h>

#include "lock.h"
#include "scenario.h"
#include "servers.h"

struct backends {
    bool have_lock_store;   /* a Redis lock store is ready */
    char redis_host[64];    /* lock store address */
    int redis_port;
    struct server lock_srv; /* embedded lock store (pid 0 when external) */
    bool have_stock;        /* the stock store is ready */
    struct server stock_srv;
    int n_zk;               /* embedded ZooKeeper servers (0: none or external) */
    struct server zk_srv[3];
    char zk_hosts[256];     /* ZooKeeper connection string, "" when not needed */
    int n_masters;          /* independent masters started (redlock) */
    struct server master_srv[SCN_MAX_MASTERS];
    struct lock_endpoint masters[SCN_MAX_MASTERS];
};

/* Start or check what is needed: a lock store, the stock store, and
 * n_masters independent masters (each its own embedded redis-server).
 * external_redis is "host:port" or NULL.
 * Returns 0, or -1 with err filled (an environment failure: exit 3). */
int backends_start(struct backends *b, bool need_redis, bool need_stock, int n_masters,
                   const char *external_redis, struct lab_err *err);

/* Start (ensemble 1 or 3, force_sync as given) or check (external, a
 * connection string) the ZooKeeper the ZooKeeper designs need. 0 or -1. */
int backends_start_zk(struct backends *b, int ensemble, int force_sync, const char *external_zk,
                      const volatile int *stop, struct lab_err *err);

void backends_stop(struct backends *b);

#endif
