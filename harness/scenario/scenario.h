/*
 * scenario.h - a scenario file, loaded and validated.
 *
 * A scenario is one YAML document (docs/scenarios.md). The loader
 * is strict: an unknown key, a wrong type, a bad duration, an out-of-range
 * number or an unknown implementation is an error naming file:line:column,
 * and the caller starts nothing. Everything the runner needs is resolved
 * here into plain numbers (durations in nanoseconds), so the runner never
 * sees YAML.
 */
#ifndef LOCKLAB_SCENARIO_H
#define LOCKLAB_SCENARIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "adapter.h"
#include "fault.h"
#include "lab.h"

#define SCN_MAX_IMPLS 32
#define SCN_NAME_MAX 64
#define SCN_MAX_CLIENTS 1024
#define SCN_MAX_MASTERS 9
#define SCN_MAX_REPLICAS 4
#define SCN_OPTIONS_MAX 16384 /* bytes for the settings of every design (lock_ops.options) */
#define SCN_MAX_STEPS 16
#define SCN_MAX_ADAPTERS 8

/* One entry of adapters: a program driving a client library (adapter.h). */
struct scenario_adapter {
    struct adapter_spec spec; /* as the file declares it (lock_env.options of its runs) */
    struct lock_ops ops;      /* its design table: adapter.c's hooks, spec's name */
};

enum workload_kind {
    WORKLOAD_COUNTER, /* read-modify-write of a counter in shared memory */
    WORKLOAD_STOCK,   /* the seckill stock counter in its own Redis */
    WORKLOAD_REENTRANT /* counter, taking the same lock again inside, depth times */
};

enum retry_kind {
    RETRY_FIXED,  /* sleep retry_interval between polls (the classic 100 ms) */
    RETRY_BACKOFF /* exponential backoff with full jitter, from retry_interval up to 32x */
};

/* backends.redis.persistence: what an embedded Redis keeps across a restart */
enum redis_persistence {
    PERSIST_NONE = 0,     /* nothing (no RDB, no AOF): a restart comes back empty */
    PERSIST_AOF_EVERYSEC, /* AOF, fsync once a second */
    PERSIST_AOF_ALWAYS    /* AOF, fsync before every reply */
};

enum key_mode {
    KEYS_HOT = 0,       /* every client contends for one key */
    KEYS_PER_CLIENT = 1 /* each client its own key: no contention, the service's own rate */
};

struct scenario_expect {
    char impl[SCN_NAME_MAX]; /* implementation name, or "*" for every other one */
    enum verdict verdict;    /* expected verdict, or VERDICT_ANY */
    enum verdict verdict_fenced; /* ... in a step with workload.fencing on (the same unless
                                    the file gives {unfenced: V, fenced: V}) */
};

struct scenario {
    char path[4096];              /* file it was loaded from */
    char name[SCN_NAME_MAX];      /* name: required, [A-Za-z0-9_.-] */
    char description[512];        /* description: optional */

    int n_adapters;                       /* adapters: programs usable in impls by name */
    struct scenario_adapter adapters[SCN_MAX_ADAPTERS];

    int n_impls;                          /* impls: required, 1..SCN_MAX_IMPLS, no duplicates */
    char impls[SCN_MAX_IMPLS][SCN_NAME_MAX];

    char redis_topology[16]; /* backends.redis.topology: "single" (default) | "independent"
                              * | "sentinel" (a master, its replicas and 3 sentinels) */
    int redis_replicas;      /* backends.redis.replicas: replicas in the sentinel topology */
    int redis_masters;       /* backends.redis.masters: independent masters (redlock), default 5 */
    int redis_persistence;   /* backends.redis.persistence: enum redis_persistence, default none */
    int zk_ensemble;         /* backends.zookeeper.ensemble: 1 (default) or 3 */
    int64_t zk_session_timeout_ns; /* backends.zookeeper.session_timeout: default 10s */
    int zk_force_sync;       /* backends.zookeeper.force_sync: true (default, as in production) */

    int clients;             /* clients: 1..SCN_MAX_CLIENTS, default 1 (the first step of a sweep) */
    int n_client_steps;      /* clients: [1, 2, 4, ...] sweeps over these counts */
    int client_steps[SCN_MAX_STEPS];
    int n_key_modes;         /* lock.keys: hot (default) | per-client, or a list of both */
    int key_modes[2];        /* enum key_mode */
    int per_client_keys;     /* the mode of this run (set by the caller for each step) */
    int64_t ops_per_client;  /* run.ops_per_client: 0 = unbounded (default) */
    int64_t max_duration_ns; /* run.max_duration: default 60s; > 0 */

    char lock_key[128];        /* lock.key: default "locklab" */
    int64_t ttl_ns;            /* lock.ttl: default 10s; > 0 */
    int64_t wait_ns;           /* lock.wait: acquire budget, default 30s */
    int64_t retry_interval_ns; /* lock.retry_interval: default 100ms; > 0 */
    enum retry_kind retry;     /* lock.retry: fixed (default) | backoff */
    /* every design's own settings (lock_ops.options, keys of lock:), one
     * struct per design that has any, in registry order: scenario_options() */
    _Alignas(max_align_t) char options[SCN_OPTIONS_MAX];

    enum workload_kind workload;  /* workload.kind: counter (default) | stock */
    int64_t stock;                /* workload.stock: units for kind stock, default 100 */
    int64_t business_ns;          /* workload.business: time inside the critical section, default 0 */
    int depth;                    /* workload.depth: nested acquires for kind reentrant, default 3 */
    int64_t think_ns;             /* workload.think: pause after each release, default 0 */
    int fencing;                  /* workload.fencing of this run (set by the caller per step):
                                     the stock store checks the grants' fencing tokens */
    int n_fence_modes;            /* workload.fencing: false (default) | true | [false, true] */
    int fence_modes[2];

    int n_faults;                 /* faults: the timeline (fault.h) */
    struct fault_spec faults[FAULT_SPECS_MAX];
    int n_expect;                 /* expect: map impl -> verdict */
    struct scenario_expect expect[SCN_MAX_IMPLS + 1];
};

/* Load and validate path into *out. On error returns -1 and writes one line
 * "path:line:column: what is wrong" (or "path: ..." when there is no
 * position, e.g. a missing file or a directory) into err (errlen bytes).
 * Returns 0 on success. */
int scenario_load(const char *path, struct scenario *out, char *err, size_t errlen);

/* Fill *out as a scenario file giving no key would leave it: zeros, then
 * every default of the option tables (for scenarios built in code, such as
 * the benchmarks'). Returns 0, or -1 when a default in the tables does not
 * read (a bug in the tables). */
int scenario_defaults(struct scenario *out);

/* Print every key a scenario file takes, one line each (dotted path,
 * default, help), from the loader's option rows and every design's: the
 * reference `locklab list --options` prints and the docs are checked
 * against. */
void scenario_print_keys(FILE *f);

struct lock_ops;

/* The design's own settings as this scenario gives them (its struct, of
 * ops->options_size bytes), for lock_env.options; NULL when the design
 * declares none or is not in the registry. */
const void *scenario_options(const struct scenario *s, const struct lock_ops *ops);

/* The design an implementation name stands for in this scenario: a
 * built-in one (lock_find) or one of the scenario's adapters; NULL when
 * neither. */
const struct lock_ops *scenario_impl(const struct scenario *s, const char *name);

/* The verdict expected for impl: its own entry, else "*", else VERDICT_NONE;
 * in a step with s->fencing on, the entry's fenced verdict. */
enum verdict scenario_expected(const struct scenario *s, const char *impl);

#endif
