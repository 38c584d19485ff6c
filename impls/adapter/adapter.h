/*
 * adapter.h - a lock design that is a program: the adapter protocol.
 *
 * A scenario may declare adapters (`adapters: {name: {command: [...],
 * backend: ...}}`): external programs, in any language, that drive a real
 * client library. Each client process starts the command as its own child
 * and speaks one line per request and one per reply on the child's stdin
 * and stdout (docs/adapters.md is the contract). To the harness an adapter
 * is one more struct lock_ops: its hooks are the generic ones of adapter.c,
 * its name the one the scenario gave, its settings (lock_env.options) the
 * struct adapter_spec below, filled by the scenario loader. Where the
 * servers are comes in lock_servers.env, which the store of the adapter's
 * backend fills: nothing here knows a store.
 */
#ifndef LOCKLAB_ADAPTER_H
#define LOCKLAB_ADAPTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "adapter_proc.h"
#include "lock.h"

#define ADAPTER_MAX_ARGS 32   /* words of a command */
#define ADAPTER_CMD_MAX 1024  /* bytes of a command, its words NUL-separated */
#define ADAPTER_DIR_MAX 1024  /* bytes of the directory it runs in */
#define ADAPTER_MAX_ENV 32    /* variables a store may name for an adapter */

/* One declared adapter, as the scenario gives it. */
struct adapter_spec {
    char name[64];                 /* the name impls and expect use */
    char backend[16];              /* the backend word the file gave ("redis-nodes"): which
                                      servers are started and named in its environment */
    char store[16];                /* the store that serves that word, its lock_ops.backend
                                      ("redis"); the loader fills it from the stores' tables */
    unsigned caps;                 /* lock_ops caps of that word (LOCK_CAP_MULTI_MASTER) */
    int argc;                      /* words in argv */
    char argv[ADAPTER_CMD_MAX];    /* the command's words, each NUL-terminated, in order */
    char dir[ADAPTER_DIR_MAX];     /* the scenario file's directory: the command runs there */
    int64_t ready_timeout_ns;      /* how long `ready` may take (default 30 s) */
    int64_t grace_ns;              /* a reply may come this long after WAIT_MS (default 5 s) */
    /* The renewal settings of the built-in designs of its store, as they run
     * in the scenario (the loader fills them; the child gets them in its
     * environment, docs/adapters.md) */
    int64_t watchdog_lease_ns;     /* LOCKLAB_WATCHDOG_LEASE_MS: redisson's watchdog lease when
                                      redisson runs its watchdog, for a redis store; 0: unset */
    int etcd_keepalive;            /* LOCKLAB_ETCD_KEEPALIVE: etcd-lease's etcd_keepalive (0, 1)
                                      for an etcd store; -1: another store (unset) */
};

/* Fill ops as the lock_ops of the adapter spec declares (generic hooks, the
 * spec's name, store and caps). The strings ops points to are kept for the
 * life of the process, so ops may be copied with the scenario holding it.
 * 0, or -1 when one process has declared too many different adapters. */
int adapter_ops_init(struct lock_ops *ops, const struct adapter_spec *spec);

/* Whether ops is an adapter's (its hooks are adapter.c's). */
bool adapter_is(const struct lock_ops *ops);

/* Of an open adapter client: the child's pid (0 once it is gone) and the
 * capabilities its `ready` line gave (enum lock_caps: FENCING, REENTRANT). */
pid_t adapter_pid(const struct lock_client *c);
unsigned adapter_caps(const struct lock_client *c);

#endif
