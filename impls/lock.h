/*
 * lock.h - the contract between the harness and a lock implementation.
 *
 * Modelled on fio's struct ioengine_ops: each implementation is one .c file
 * in impls/ whose functions are all static and which ends in one
 * designated-initializer `const struct lock_ops`. impls/registry.c lists
 * every table in an explicit array.
 *
 * A client process calls open() once, then acquire()/release() in a loop,
 * then close(). Hooks report outcomes, not just success: "contended until
 * the wait budget ran out" (LOCK_TIMEOUT) is data, as is "the lock was no
 * longer ours when we released it" (RELEASE_NOT_OWNER); only a backend
 * failure is an error. Implementations count what they did in the
 * struct lock_stats that lives in the client's shared-memory slot, so the
 * counts survive a crash of the client.
 *
 * Skeleton of a new implementation (required hooks marked):
 *
 *   static int my_open(struct lock_client **out, const struct lock_env *env,
 *                      struct lab_err *err);                         required
 *   static enum lock_status my_acquire(struct lock_client *c, const char *key,
 *                      int64_t wait_ns, struct lab_err *err);        required
 *   static enum release_status my_release(struct lock_client *c,
 *                      const char *key, struct lab_err *err);        required
 *   static void my_close(struct lock_client *c);                     required
 *   const struct lock_ops lock_my = { .name = "my-lock", ... };
 *
 * A setting of the design's own is one row in its file (common/opt.h),
 * as fio's engines declare theirs:
 *
 *   struct my_options { int64_t grace_ns; };
 *   static const struct opt my_rows[] = {
 *       { .name = "grace", .type = OPT_DUR, OPT_FIELD(struct my_options, grace_ns),
 *         .min = 1, .def = "1s", .help = "what it is for" },
 *       { .name = NULL } };
 *   ... .options = my_rows, .options_size = sizeof(struct my_options), ...
 *
 * The scenario's lock: section then takes `grace: 2s`, validated like every
 * other key, and open() finds the filled struct at env->options.
 */
#ifndef LOCKLAB_LOCK_H
#define LOCKLAB_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lab.h"
#include "opt.h"

enum lock_status {
    LOCK_GRANTED = 0, /* the caller holds the lock */
    LOCK_TIMEOUT,     /* contended for the whole wait budget (or the run stopped) */
    LOCK_ERROR        /* the backend failed; err says how */
};

enum release_status {
    RELEASE_OK = 0,    /* released a lock that was still ours */
    RELEASE_NOT_OWNER, /* the lock had expired or belonged to someone else */
    RELEASE_ERROR,     /* the backend failed; err says how */
    RELEASE_UNCHECKED  /* given back, but the design cannot tell whether it was still
                        * ours (an adapter's `released ?`): counted as released, never
                        * evidence that it removed someone else's lock */
};

/* Capability flags shown by `locklab list`. */
enum lock_caps {
    LOCK_CAP_REENTRANT = 1u << 0, /* the owner may acquire again; a nested grant means
                                   * the lock is held then: after the hold was lost (a
                                   * session gone with a server restart) a nested
                                   * acquire fails or takes the lock anew, never
                                   * answers from what it no longer has */
    LOCK_CAP_TTL = 1u << 1,       /* the lock expires by itself */
    LOCK_CAP_RENEWS = 1u << 2,    /* a watchdog extends the TTL */
    LOCK_CAP_FENCING = 1u << 3,   /* grants carry a fencing token (lock_env.fencing) */
    LOCK_CAP_NOTIFIES = 1u << 4,  /* waiters are woken, not polling */
    LOCK_CAP_MULTI_MASTER = 1u << 5, /* runs on N independent masters (every lock_env.servers) */
    /* Not a lock but its alternative (optimistic concurrency): acquire reads
     * the stock and its version and never waits, release writes only if the
     * version is unchanged (RELEASE_OK: the sale committed; RELEASE_NOT_OWNER:
     * a conflict, the unit is retried). Several clients are inside at once by
     * design, so the verdict ignores the oracle's overlaps for such a design
     * and judges the damage alone (oversold, lost updates, the stock exact);
     * the stock lives in the design's own store (stock_reset, stock_left),
     * and the workload is stock only. */
    LOCK_CAP_OPTIMISTIC = 1u << 6
};

#define LOCK_SPLIT_BUCKETS 64

/* What an implementation counts; lives in shared memory, one per client. */
struct lock_stats {
    int64_t round_trips;      /* requests sent to the backend */
    int64_t polls;            /* acquire attempts that found the lock taken */
    int64_t notifications;    /* watch events / pub-sub messages received */
    int64_t renewals;         /* successful TTL extensions */
    int64_t renewal_failures; /* extensions refused or failed */
    int64_t unreplicated;     /* grants the design gave back because too few replicas
                               * acknowledged them (redis-wait's WAIT) */
    int64_t lease_floor_ns;   /* not a counter: after each grant, the CLOCK_MONOTONIC time
                               * before which that lock cannot expire (when the granting
                               * request was sent + its TTL); 0 for a lock without a TTL */
    int64_t fence_token;      /* not a counter: with lock_env.fencing, the fencing token of
                               * the latest grant (a nested re-grant keeps the outer one's),
                               * ordered by the lock service; 0 = none */
    int64_t read_stock;       /* not a counter: LOCK_CAP_OPTIMISTIC, the stock the latest
                               * acquire read (the business decides on it: 0 is sold out) */
    /* A notified design's handoffs split (impls/handoff_split.c): grants after
     * a wake-up message, and the sums of their parts; attempts after a
     * wake-up that lost. */
    int64_t split_handoffs;
    int64_t split_delivery_ns;   /* release sent -> message at the waiter's socket */
    int64_t split_scheduling_ns; /* -> the waiter's next attempt sent (its wake-up) */
    int64_t split_acquire_ns;    /* -> that attempt granted */
    int64_t split_lost;
    /* ... and each part's spread, for its median: counts in buckets 1.25
     * times wider than the one before (bucket i: 1.25^i us up to the next) */
    int64_t split_buckets[3][LOCK_SPLIT_BUCKETS];
};

/* One server address. */
struct lock_endpoint {
    char host[64];
    int port;
};

#define LOCK_MAX_SERVERS 9

/* The servers one design talks to in a run, as its backend table hands
 * them out (harness/stores/backend.h): one Redis lock store, or every
 * independent master of a multi-master design, or the servers of a
 * ZooKeeper ensemble. The one struct for server addresses: the backends
 * fill it, the runner passes it on, the designs read it. */
struct lock_servers {
    int n;                                   /* servers, at least 1 */
    struct lock_endpoint node[LOCK_MAX_SERVERS];
    char conn[256];                          /* all of them as a connection string,
                                                "host:port[,host:port...]" */
    char sentinel_master[32];                /* non-empty: node[] are Redis sentinels, and
                                                the store is the master they name so */
    int64_t session_timeout_ns;              /* the session timeout clients of the store
                                                keep (ZooKeeper's, set by its store from
                                                backends.zookeeper; etcd's session lease,
                                                lock.ttl in whole seconds); 0: the design's
                                                own */
    char env[1024];                          /* the same for an adapter's program: the
                                                variables of docs/adapters.md, "NAME=value"
                                                entries one after another, each
                                                NUL-terminated, an empty one ending them
                                                (filled by the store for adapter runs) */
};

/* Where the lock store is and how to behave; filled by the harness. */
struct lock_env {
    const struct lock_servers *servers; /* where the design's store is (never NULL;
                                           n = 0 for a design without a store) */
    int64_t ttl_ns;             /* lock lifetime for designs with a TTL */
    const void *options;        /* the design's own settings: its struct, filled through
                                 * lock_ops.options from the scenario; NULL when it has none */
    int64_t retry_interval_ns;  /* polling interval (first interval for backoff) */
    int retry_backoff;          /* 0 = fixed interval, 1 = exponential backoff with jitter */
    int client_id;              /* 0-based client index */
    int clients;                /* clients in the run */
    const volatile int *stop;   /* non-zero when the run is stopping: give up waiting */
    struct lock_stats *stats;   /* counters to update (never NULL) */
    int fencing;                /* 1: put each grant's token in stats->fence_token (only
                                 * designs with LOCK_CAP_FENCING are asked; 0 costs nothing) */
    volatile int *lost;         /* the design raises it (lab_flag_raise, from any of its
                                 * threads) when it learns that the lock it holds may be lost
                                 * (a ZooKeeper session suspended, with lock.on_disconnect:
                                 * abort); the client loop lowers it before each acquire and,
                                 * raised inside the critical section, abandons the unit before
                                 * its write (counted as aborted). NULL: nobody listens */
    const char *log_dir;        /* a directory of this step in the run's results where the
                                 * design may keep files of its own (an adapter: its child's
                                 * stderr, client-N.txt), created by whoever writes first;
                                 * NULL: keep nothing */
};

struct lock_client; /* each implementation defines its own */

/* A named point inside one of a design's protocol steps where a fault can
 * fire (common/failpoint.h): armed as "<design>/<point>". The design looks
 * it up in open() (failpoint_find) and hits it where the row says. */
struct lock_failpoint {
    const char *point; /* "before-del"; NULL ends a design's list */
    const char *help;  /* where it sits, for `locklab list --failpoints` */
};

/* What the scenario loader tells a design's finish_options hook once the
 * whole file is read. */
struct lock_opts_ctx {
    int64_t ttl_ns;     /* lock.ttl, given or by default */
    bool ttl_given;     /* the file gave lock.ttl (at its default value still counts) */
    bool listed;        /* the design is in the scenario's impls (it may still run
                         * by `run --impl`, so check only what the file must give) */
    int clients_per_process; /* run.clients_per_process: above 1 the design runs in
                              * client groups (its async hooks) */
    /* whether the file gave the design's row stored at field (an address
     * inside its options struct), rather than leaving it to its default */
    bool (*given)(const struct lock_opts_ctx *ctx, const void *field);
    const void *loader; /* the loader's state, for given() */
};

struct evloop; /* common/evloop.h */

/* What an asynchronous hook reports when it is done (on the loop's thread,
 * never from inside the call that started it). err is valid during the
 * call only. */
typedef void (*lock_opened_fn)(void *arg, int rc, const struct lab_err *err);
typedef void (*lock_acquired_fn)(void *arg, enum lock_status st, const struct lab_err *err);
typedef void (*lock_released_fn)(void *arg, enum release_status rs, const struct lab_err *err);

/* Hand an asynchronous hook's outcome to whoever waits for it (*slot,
 * with arg), clearing the slot first so that the callback may start the
 * client's next operation at once; nothing when nobody waits. */
static inline void lock_deliver_opened(lock_opened_fn *slot, void *arg, int rc,
                                       const struct lab_err *err)
{
    lock_opened_fn done = *slot;
    *slot = NULL;
    if (done)
        done(arg, rc, err);
}
static inline void lock_deliver_acquired(lock_acquired_fn *slot, void *arg, enum lock_status st,
                                         const struct lab_err *err)
{
    lock_acquired_fn done = *slot;
    *slot = NULL;
    if (done)
        done(arg, st, err);
}
static inline void lock_deliver_released(lock_released_fn *slot, void *arg,
                                         enum release_status rs, const struct lab_err *err)
{
    lock_released_fn done = *slot;
    *slot = NULL;
    if (done)
        done(arg, rs, err);
}

/* The hooks of a design that can run in a client group (run:
 * clients_per_process, harness/run/group.c): one process multiplexes many
 * logical clients on one event loop, so nothing here may block. The
 * protocol, the outcomes and the counters are those of the blocking hooks;
 * a retry pause is a timer on the loop. open() starts connecting and
 * returns at once (0, or -1 with err filled); opened() then says whether
 * the client is usable. At most one acquire or release is under way per
 * client; key stays valid until it is done. When env->stop becomes
 * non-zero the group makes every timer due: a waiting acquire then ends
 * in LOCK_TIMEOUT. */
struct lock_async_ops {
    /* true when everything a client of the group holds is its own (its
     * connections, timers and deferred writes, none shared with the
     * group's other clients): a fault aimed at one client can then hold
     * it alone, or close its connections alone (as a dying process's are
     * closed), and the harness does so (harness/run/group.c); false: such
     * a fault hits the whole group process */
    bool client_faults;
    int (*open)(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                lock_opened_fn opened, void *arg, struct lab_err *err);
    void (*acquire)(struct lock_client *c, const char *key, int64_t wait_ns,
                    lock_acquired_fn done, void *arg);
    void (*release)(struct lock_client *c, const char *key, lock_released_fn done, void *arg);
    void (*close)(struct lock_client *c);
    /* Optional: close as a dying process's connections close, saying
     * nothing to the store (a ZooKeeper session abandoned, not closed);
     * NULL: close does that already. For a fault's kill of one client. */
    void (*crash)(struct lock_client *c);
};

struct lock_ops {
    const char *name;    /* as written in scenario files */
    const char *backend; /* "none", "redis", "zookeeper", "mysql" */
    const char *summary; /* one line for `locklab list` */
    unsigned caps;       /* enum lock_caps */
    const char *no_fencing; /* why a design without LOCK_CAP_FENCING cannot give a sound
                             * token, for `locklab list` (NULL: nothing to say) */

    int (*open)(struct lock_client **out, const struct lock_env *env, struct lab_err *err);
    enum lock_status (*acquire)(struct lock_client *c, const char *key, int64_t wait_ns,
                                struct lab_err *err);
    enum release_status (*release)(struct lock_client *c, const char *key, struct lab_err *err);
    void (*close)(struct lock_client *c);

    /* Settings of the design's own (optional): rows (common/opt.h) of keys
     * in the scenario's lock: section, stored in a struct of options_size
     * bytes that open() finds at lock_env.options. A key names one row: no
     * two designs may declare the same key, nor one of the lock section's. */
    const struct opt *options;
    size_t options_size;
    /* Optional: derive values and check the settings together once the file
     * is read (also for a scenario built in code, with nothing given).
     * 0, or -1 with err->msg set; the loader puts it at the design's first
     * key in the file, else at its item in impls. */
    int (*finish_options)(void *options, const struct lock_opts_ctx *ctx, struct lab_err *err);

    /* The failpoints inside the design's own protocol steps (optional),
     * ending in a row whose point is NULL; the two every design has
     * (after-grant, before-release) are the client loop's, not listed. */
    const struct lock_failpoint *failpoints;

    /* LOCK_CAP_OPTIMISTIC only (required there): the stock workload's stock
     * lives in the design's store. The harness, in the parent, sets it to
     * stock under key before a run and reads what is left after it.
     * 0, or -1 with err filled. */
    int (*stock_reset)(const struct lock_servers *sv, const char *key, int64_t stock,
                       struct lab_err *err);
    int (*stock_left)(const struct lock_servers *sv, const char *key, int64_t *left,
                      struct lab_err *err);

    /* The same protocol without blocking, for client groups (optional;
     * NULL: the design runs one process per client only, and a scenario
     * with clients_per_process above 1 listing it does not load). */
    const struct lock_async_ops *async;
};

/* Where the ZooKeeper designs keep their locks: LOCK_ZK_ROOT "/<key>" is a
 * persistent node whose children are the lock's (ephemeral) nodes. */
#define LOCK_ZK_ROOT "/locklab"

/* The application_name every PostgreSQL design's session carries, so the
 * backend can end the sessions an earlier run left (and only those). */
#define LOCK_PG_APP "locklab"

/* The registry (impls/registry.c). */
extern const struct lock_ops *const lock_registry[];
extern const int lock_registry_count;

/* Find an implementation by name; NULL when there is none. */
const struct lock_ops *lock_find(const char *name);

#endif
