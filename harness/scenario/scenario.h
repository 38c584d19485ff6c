/*
 * scenario.h - a scenario as the run sees it: what to run, resolved into
 * plain numbers (durations in nanoseconds), and what may be asked of it.
 *
 * A scenario is one YAML document (docs/scenarios.md); the loader
 * (harness/loader/scenario_load.h) reads and validates it into this
 * struct, strictly, so the runner, the stores, the faults and the reports
 * never see YAML.
 */
#ifndef LOCKLAB_SCENARIO_H
#define LOCKLAB_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "adapter.h"
#include "fault_spec.h"
#include "host_spec.h"
#include "lab.h"

#define SCN_MAX_IMPLS 32
#define SCN_NAME_MAX 64
#define SCN_MAX_CLIENTS 10000
#define SCN_OPTIONS_MAX 16384 /* bytes for the settings of every design (lock_ops.options) */
#define SCN_STORE_SETTINGS_MAX 512 /* bytes for every store's settings (backend_ops.settings) */
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

enum key_mode {
    KEYS_HOT = 0,       /* every client contends for one key */
    KEYS_PER_CLIENT = 1 /* each client its own key: no contention, the service's own rate */
};

struct scenario_expect {
    char impl[SCN_NAME_MAX]; /* implementation name, or "*" for every other one */
    verdict_set verdict;     /* the verdicts it allows (one, a list, or any) */
    verdict_set verdict_fenced; /* ... in a step with workload.fencing on (the same unless
                                   the file gives {unfenced: V, fenced: V}) */
};

/* arrival.distribution: the gaps between one client's intended starts */
enum arrival_dist { ARRIVAL_POISSON = 0, ARRIVAL_CONSTANT };

struct scenario {
    char path[4096];              /* file it was loaded from */
    char name[SCN_NAME_MAX];      /* name: required, [A-Za-z0-9_.-] */
    char description[512];        /* description: optional */

    int n_adapters;                       /* adapters: programs usable in impls by name */
    struct scenario_adapter adapters[SCN_MAX_ADAPTERS];

    int n_impls;                          /* impls: required, 1..SCN_MAX_IMPLS, no duplicates */
    char impls[SCN_MAX_IMPLS][SCN_NAME_MAX];

    /* every store's own settings (backend_ops.settings, keys of
     * backends.<store>:), one struct per store that has any, in registry
     * order: backend_settings() (harness/stores/backend.h) */
    _Alignas(max_align_t) char store_settings[SCN_STORE_SETTINGS_MAX];

    int clients;             /* clients: 1..SCN_MAX_CLIENTS, default 1 (the first step of a sweep) */
    int n_client_steps;      /* clients: [1, 2, 4, ...] sweeps over these counts */
    int client_steps[SCN_MAX_STEPS];
    int n_key_modes;         /* lock.keys: hot (default) | per-client, or a list of both */
    int key_modes[2];        /* enum key_mode */
    int per_client_keys;     /* the mode of this run (set by the caller for each step) */
    int64_t ops_per_client;  /* run.ops_per_client: 0 = unbounded (default) */
    int64_t max_duration_ns; /* run.max_duration: default 60s; > 0 */
    int clients_per_process; /* run.clients_per_process: logical clients one process runs
                                on an event loop (harness/run/group.c); 1 (default): a
                                process per client */

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
    double arrival_rate;          /* arrival.rate: acquires per second across all clients,
                                     open loop (harness/run/arrival.h); 0: closed loop */
    int arrival_dist;             /* arrival.distribution: enum arrival_dist */
    int64_t arrival_late_ns;      /* arrival.late: a start this far behind its instant is late */
    int fencing;                  /* workload.fencing of this run (set by the caller per step):
                                     the stock store checks the grants' fencing tokens */
    int n_fence_modes;            /* workload.fencing: false (default) | true | [false, true] */
    int fence_modes[2];

    int n_hosts;                  /* hosts: where clients and servers run (host_spec.h) */
    struct scenario_host hosts[SCN_MAX_HOSTS];

    int n_faults;                 /* faults: the timeline (fault.h) */
    struct fault_spec faults[FAULT_SPECS_MAX];
    int n_expect;                 /* expect: map impl -> verdict */
    struct scenario_expect expect[SCN_MAX_IMPLS + 1];
};

struct lock_ops;

/* Where entry i's struct starts in one of the scenario's blobs (options,
 * store_settings: one struct per entry of a registry; size_of(j) is entry
 * j's size, 0 for none), each rounded up to max_align_t. With i = the
 * registry's count, the bytes all of them take. */
size_t scenario_blob_offset(size_t (*size_of)(int), int i);

/* Where design i's struct starts in scenario.options: the structs of the
 * designs before it in the registry, each rounded up to max_align_t. With
 * i = lock_registry_count, the bytes all of them take. */
size_t options_offset(int i);

/* The registry index of a design, or -1 (an adapter's, say). */
int design_index(const struct lock_ops *ops);

/* The design's own settings as this scenario gives them (its struct, of
 * ops->options_size bytes), for lock_env.options; NULL when the design
 * declares none or is not in the registry. */
const void *scenario_options(const struct scenario *s, const struct lock_ops *ops);

struct backend_ops;

/* The design an implementation name stands for in this scenario: a
 * built-in one (lock_find) or one of the scenario's adapters; NULL when
 * neither. */
const struct lock_ops *scenario_impl(const struct scenario *s, const char *name);

/* The verdicts expected for impl: its own entry, else "*", else 0 (none);
 * in a step with s->fencing on, the entry's fenced ones. */
verdict_set scenario_expected(const struct scenario *s, const char *impl);

/* The name of client idx's lock key into name (n bytes): lock.key, or
 * lock.key-idx when each client has its own (lock.keys: per-client).
 * Returns the key's index (0 for the hot key). */
int scenario_key_of(const struct scenario *s, int idx, char *name, size_t n);

/* Does any entry of s's faults: list take action a? */
bool scenario_has_fault(const struct scenario *s, enum fault_action a);

#endif
