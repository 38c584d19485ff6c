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
 * struct adapter_spec below, filled by the scenario loader.
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

/* Which servers the harness starts for an adapter and names in its
 * environment (the words a scenario writes, in this order). */
enum adapter_backend {
    ADAPTER_REDIS = 0,    /* one Redis lock store: LOCKLAB_REDIS */
    ADAPTER_REDIS_NODES,  /* independent Redis masters: LOCKLAB_REDIS_NODES */
    ADAPTER_SENTINEL,     /* a master behind sentinels: LOCKLAB_SENTINELS, _SENTINEL_MASTER */
    ADAPTER_ZOOKEEPER     /* a ZooKeeper ensemble: LOCKLAB_ZK */
};

/* The backend words, NULL-terminated, indexed by enum adapter_backend. */
extern const char *const adapter_backend_words[];

/* One declared adapter, as the scenario gives it. */
struct adapter_spec {
    char name[64];                 /* the name impls and expect use */
    int backend;                   /* enum adapter_backend */
    int argc;                      /* words in argv */
    char argv[ADAPTER_CMD_MAX];    /* the command's words, each NUL-terminated, in order */
    char dir[ADAPTER_DIR_MAX];     /* the scenario file's directory: the command runs there */
    int64_t ready_timeout_ns;      /* how long `ready` may take (default 30 s) */
    int64_t grace_ns;              /* a reply may come this long after WAIT_MS (default 5 s) */
};

/* Fill ops as the lock_ops of the adapter spec declares (generic hooks, the
 * spec's name and backend). The strings ops points to are kept for the
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
