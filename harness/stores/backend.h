/*
 * backend.h - one table per kind of store the lock designs talk to, so
 * nothing outside a store's own file asks which store a design uses (redis's
 * ae.c talks to one aeApi* interface the same way, whatever the
 * multiplexer; fio's engines are tables the core calls without knowing them).
 *
 * A design names its store in lock_ops.backend; backend_of() finds the
 * table and backend_find() finds one by name (backend.c holds the registry,
 * the only place that compares backend names). A table covers the whole
 * life of a store in one invocation:
 *   plan     - before anything starts, each (scenario, design) pair says
 *              what it needs (how many masters, how large an ensemble);
 *   start    - start the planned embedded servers, or check the external
 *              ones the user named with --<flag> or $<env_var>;
 *   servers  - for one run: the servers that design talks to (lock_servers,
 *              the one address struct the designs read);
 *   prepare_run - per run, first (optional): put the design's embedded
 *              servers in the state the scenario asks for (persistence,
 *              a clock moved by an earlier run set back);
 *   clear, server_ops, describe - per run: remove what an earlier run left,
 *              count the operations served, say what the result ran on;
 *   roles    - the embedded server processes of a run by role name, for
 *              the fault engine to aim at (asked again at every firing:
 *              roles such as a leader move);
 *   health   - optional: whether the servers serve again after a fault
 *              (a leader elected, every server that runs caught up), for
 *              the engine to time a recovery;
 *   stop     - stop everything it started.
 *   settings - the rows of its keys under backends.<name> in a scenario
 *              (optional), for a struct of its own kept with the scenario;
 *   start_stock - the one store that serves the stock workload's stock.
 *   role_names - the roles a fault's target may name, spelled once (the
 *              loader checks a target against every store's list).
 *   adapter_kinds, adapter_env - the words an adapter's backend may be
 *              for this store, and how a run's servers are named in an
 *              adapter's environment (docs/adapters.md): a store serves
 *              adapters with one row and one hook.
 * A table keeps its servers in its own folder (harness/stores/<store>/: one
 * invocation starts one set), so adding a store is one folder with its
 * table plus one registry line: its settings, roles and hooks come from there.
 */
#ifndef LOCKLAB_BACKEND_H
#define LOCKLAB_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "lock.h"
#include "servers.h"

struct scenario; /* scenario.h: the stores' own files read it, this header never needs to */

/* An embedded server a fault can target, by role. Each server is listed
 * first under the name it keeps (redis, redis-node:I, zookeeper:I); roles
 * that move between servers (zookeeper-leader) follow. */
struct backend_role {
    const char *name;     /* "redis", "redis-node", "zookeeper", "zookeeper-leader" */
    int index;            /* which one of that name (0-based), -1 for the only one */
    struct server *srv;   /* the process (never the stock store) */
};

/* How a store's embedded servers stand (backend_ops.health). */
struct backend_health {
    bool available;       /* it serves requests: a leader (a master) is up with a quorum */
    bool whole;           /* every server that runs serves: none still joining or syncing */
    int running;          /* servers up (neither down nor stopped by a fault) */
    int servers;          /* servers it has, up or not */
    char leader[32];      /* the server that leads, by the name it keeps ("zookeeper:2");
                             "" when none does */
};

/* A failover fault in progress, driven by the backend whose servers it
 * hits (action failover): the instants it reached, CLOCK_MONOTONIC, 0 until
 * then. */
struct failover {
    int phase;              /* the backend's own steps; 0 before the first */
    char key[160];          /* the lock key (set by the engine) */
    int64_t cut_ns;         /* replication to every replica cut */
    int64_t copy_gone_ns;   /* the replicas' copy of the lock key expires (INT64_MAX never) */
    int64_t granted_ns;     /* the grant the kill was aimed at: when the client was
                               granted, after the cut and after copy_gone_ns (set by the
                               engine before the step that kills; 0: none came) */
    int64_t killed_ns;      /* the master killed, the replicas continued */
    int64_t switched_ns;    /* the sentinels name another master */
    int64_t writable_ns;    /* the new master took a write */
    int64_t rejoined_ns;    /* the old master back, as a replica */
    int master, new_master; /* the backend's own server numbers */
    pid_t master_pid;       /* the master killed */
    char note[128];         /* what happened, for the fault's record */
};

/* A role name a fault's target may give (target: NAME or NAME:I), as a
 * store's table lists them (backend_ops.role_names): the one place each
 * role is spelled, for the loader's check, its messages and roles(). */
struct backend_role_name {
    const char *name;    /* "redis-node" */
    int indexed;         /* 0: no index, 1: optional, 2: required */
    bool clock;          /* a clock-jump may target it (its store has clock_jump) */
    bool place;          /* a scenario's hosts: may place it (by the role it has when the
                            run starts: its server's place, servers.h) */
};

/* A word an adapter's backend may be (adapters.NAME.backend), as the
 * store that serves it lists it (backend_ops.adapter_kinds): the one place
 * each word is spelled. */
struct backend_adapter_kind {
    const char *word;    /* "redis-nodes" */
    unsigned caps;       /* lock_ops caps its adapters get (LOCK_CAP_MULTI_MASTER), else 0 */
};

#define BACKEND_MAX_ROLES (LOCK_MAX_SERVERS + 1)
#define BACKEND_MAX 8 /* stores in the registry, at most */

struct backend_ops {
    const char *name;      /* as lock_ops.backend names it */
    const char *title;     /* for people: "Redis", "ZooKeeper" */

    /* Settings of the store's own (optional): rows (common/opt.h) of the
     * keys under backends.<name> in a scenario, stored in a struct of
     * settings_size bytes kept with the scenario, which the store's hooks
     * read with backend_settings(s, &backend_<name>). */
    const struct opt *settings;
    size_t settings_size;
    /* Optional: check the settings against the rest of the scenario once
     * the file is read (an adapter's backend against the topology). 0, or
     * -1 with what is wrong in msg (msglen bytes, one sentence) and
     * *adapter the index of the adapter at fault (the message is placed at
     * its name), else left -1. */
    int (*finish_settings)(const struct scenario *s, int *adapter, char *msg, size_t msglen);

    /* External servers: --<flag> ADDR on `locklab run`, or $<env_var>. */
    const char *flag;
    const char *env_var;
    const char *flag_usage; /* the usage line's text after "--<flag> " */

    /* Is addr a well-formed external address? 0, or -1 with err filled. */
    int (*check_external)(const char *addr, struct lab_err *err);

    /* Note what design ops in scenario s needs. */
    void (*plan)(const struct scenario *s, const struct lock_ops *ops);

    /* Start what was planned, or check the external servers at external
     * (NULL: embedded). Gives up when *stop is set. 0 or -1 with err
     * filled (an environment failure: exit code 3). */
    int (*start)(const char *external, const volatile int *stop, struct lab_err *err);

    /* Stop whatever start started and forget the plan. */
    void (*stop)(void);

    /* The servers design ops talks to when it runs scenario s. */
    void (*servers)(const struct lock_ops *ops, const struct scenario *s, struct lock_servers *out);

    /* Before a run of design ops in s, before clear: apply the scenario's
     * per-run settings to the embedded servers the design uses. NULL when
     * the store has none. 0 or -1 with err filled. */
    int (*prepare_run)(const struct lock_ops *ops, const struct scenario *s, struct lab_err *err);

    /* Remove whatever an earlier run left under the keys s will use on sv
     * (one key, or one per client). 0 or -1 with err filled. */
    int (*clear)(const struct lock_servers *sv, const struct scenario *s, struct lab_err *err);

    /* Operations the servers sv have served so far. 0, or -1 with err
     * filled when the figure cannot be had (it is then left out). */
    int (*server_ops)(const struct lock_servers *sv, int64_t *ops_served, struct lab_err *err);

    /* Optional: the waiters' wakeups the servers sv have sent so far (watch
     * notifications), counted on the server side, so that a library run
     * through an adapter and a lab design are counted alike. 0, or -1 with
     * err filled; NULL when the store cannot tell (polling is not sent). */
    int (*server_wakeups)(const struct lock_servers *sv, int64_t *sent, struct lab_err *err);

    /* What design ops ran on in s, as a JSON object (a new reference). */
    json_t *(*describe)(const struct lock_ops *ops, const struct scenario *s);

    /* The role names a fault may target on this store's servers, in the
     * order messages list them, ended by {NULL}. roles() names its servers
     * with these only. */
    const struct backend_role_name *role_names;
    /* Optional: how many servers of the indexed role r (an entry of
     * role_names) the settings in s start, so that a hosts: member past
     * them is refused when the file is read; 0 when not known. */
    int (*place_count)(const struct scenario *s, const struct backend_role_name *r);

    /* The embedded servers design ops uses in s, by role; how many (0 when
     * they are external: a fault cannot reach them). */
    int (*roles)(const struct lock_ops *ops, const struct scenario *s,
                 struct backend_role *out, int max);

    /* The failover fault (NULL: this store has no replicated topology).
     * step is called again and again from the fault engine: cut the
     * replication, wait for a grant after the cut (granted: a client that
     * was granted after fo->cut_ns and fo->copy_gone_ns is inside now, its
     * grant in fo->granted_ns: kill at once; window_over: stop waiting),
     * kill the master, follow the switch; 1 when done, 0 not yet,
     * -1 failed with err filled. abort undoes what a failover still holds
     * stopped or down (interrupted runs). */
    int (*failover_step)(struct failover *fo, bool granted, bool window_over, int64_t now,
                         struct lab_err *err);
    void (*failover_abort)(struct failover *fo);
    /* The clock-jump fault (NULL: this store's servers cannot have their
     * wall clock moved): move srv's clock by by_ns and read how far the
     * server's own clock was seen to move (*seen_ns). 0 when it moved as
     * asked, -1 with err filled otherwise. */
    int (*clock_jump)(const struct server *srv, int64_t by_ns, int64_t *seen_ns,
                      struct lab_err *err);
    /* Optional: why role (index I, or -1), a name this store knows, can have
     * no server for design ops in s (a single ZooKeeper server runs
     * standalone: no leader), for the note of a skipped fault; NULL when
     * the name is not this store's, or when a server may have the role at
     * another moment (none leads during an election). */
    const char *(*no_role)(const struct lock_ops *ops, const struct scenario *s,
                           const char *role, int index);

    /* Adapters (both NULL: this store serves none). The backend words an
     * adapter may name for this store, ended by {NULL}; and, for a run of
     * an adapter declared with word on servers sv (this store's servers
     * hook filled them), the variables its program gets: the LOCKLAB_*
     * ones of docs/adapters.md and any the store's client libraries read,
     * added to sv->env with backend_env_put. 0, or -1 with err filled. */
    const struct backend_adapter_kind *adapter_kinds;
    int (*adapter_env)(const char *word, struct lock_servers *sv, struct lab_err *err);

    /* Optional (NULL: a server is whole again when it answers): how the
     * embedded servers design ops uses in s stand now, asked by the fault
     * engine every few tens of milliseconds after a fault hit one, never
     * waiting on a server that is down or stopped. */
    void (*health)(const struct lock_ops *ops, const struct scenario *s,
                   struct backend_health *out);

    /* Optional, for one store of the registry: start srv as the stock
     * store, the embedded server the stock workload counts its sales in
     * (and checks fencing tokens with), never a fault's target. 0, or -1
     * with err filled. */
    int (*start_stock)(struct server *srv, struct lab_err *err);

    /* The version of the server this store starts, one line into out (the
     * report's Servers table): 0, or -1 when it is not installed. */
    int (*version)(char *out, size_t outlen);

    /* `locklab bench overhead --backend <name>`: the design whose cycle the
     * bare loop (a binary next to locklab, given the servers' connection
     * string and seconds) repeats without the harness, what that cycle is,
     * and how long to warm the server up first. NULL bench_impl: none. */
    const char *bench_impl;
    const char *bench_bare_loop;
    const char *bench_cycle;
    double bench_warmup_s;
    const char *bench_usage; /* its paragraph of `locklab bench --help`: the cycles compared */
    /* Optional: a switch of `bench overhead` of this store's own
     * (--<bench_flag>), its line in the usage, what the header adds when
     * it is given, and how it sets the benchmark scenario's settings of
     * this store (on: given). */
    const char *bench_flag;
    const char *bench_flag_help;
    const char *bench_flag_note;
    void (*bench_settings)(struct scenario *s, bool on);
    /* Optional: `locklab bench ceiling --backend <name>`: the bare loop of
     * bench_impl's cycle at N connections at once (a binary next to locklab,
     * given the connection string, seconds and N; it prints cycles= and
     * elapsed_ns= as the bare loop does), each connection on a key of its
     * own. Redis needs none: redis-benchmark is its. */
    const char *bench_ceiling_loop;
    /* Optional, instead: the store's own benchmark program on PATH
     * (redis-benchmark), sent bench_impl's grant and release commands, and
     * the Debian package that has it. */
    const char *bench_ceiling_tool;
    const char *bench_ceiling_tool_pkg;

    /* The most lock connections the store's embedded server accepts as this
     * lab starts it (0: no limit of its own), and why, for people
     * ("max_connections=300, a few kept for the lab"). A client is one
     * connection; a step of more clients is not run on the embedded server
     * (backend_conn_limit): `bench ceiling` refuses it, `run` skips it and
     * says so. */
    int max_connections;
    const char *max_connections_why;
};

/* The registry, in the order results compare stores. */
extern const struct backend_ops *const backend_registry[];
extern const int backend_count;

/* The table of ops's store, or NULL for a design without one ("none": the
 * lock lives in the client process, nothing to start, clear or count). */
const struct backend_ops *backend_of(const struct lock_ops *ops);

/* The table named name, or NULL. */
const struct backend_ops *backend_find(const char *name);

/* The store that serves the stock workload's stock (the first table with
 * start_stock), or NULL. */
const struct backend_ops *backend_stock(void);

/* 0 when clients connections of design ops fit its store (external
 * servers: always; the lab does not know their limit), else the store's
 * max_connections with why filled: "PostgreSQL takes at most 290
 * connections as the lab starts it (max_connections=300, ...)". */
int backend_conn_limit(const struct lock_ops *ops, int clients, bool external, char *why,
                       size_t whylen);

/* Its index in backend_registry. */
int backend_index(const struct backend_ops *be);

/* Where store i's settings start in scenario.store_settings: the structs
 * of the stores before it in the registry, each aligned (with i =
 * backend_count, the bytes all of them take). */
size_t backend_settings_offset(int i);

/* A store's check_external for one HOST:PORT address: 0, or -1 with
 * "bad <what> address '<addr>' (expected HOST:PORT)" in err. */
int backend_check_hostport(const char *addr, const char *what, struct lab_err *err);

/* The store's own settings as scenario s gives them (its struct, of
 * be->settings_size bytes); NULL when the store declares none or is not in
 * the registry. */
const void *backend_settings(const struct scenario *s, const struct backend_ops *be);

/* The role name of any store that is the first len bytes of name (len:
 * strlen(name) for the whole), or NULL. */
const struct backend_role_name *backend_role_find(const char *name, size_t len);
/* How many servers of role r the settings in s start (backend_ops.place_count),
 * 0 when its store does not say. */
int backend_place_count(const struct scenario *s, const struct backend_role_name *r);

/* Every store's role names for messages, in registry order:
 * "redis, redis-node:I, zookeeper[:I], ...". */
const char *backend_role_list(void);

/* The same of the role names a scenario's hosts: may place (place). */
const char *backend_place_list(void);

/* A health hook's one look (backend_ops.health) for a store whose servers
 * each answer a check of their own (PING, SELECT 1): every distinct server
 * of roles that runs (not down, not stopped by a fault: those are not
 * asked, so the look never waits on them) is asked with answers (0: it
 * served). The store is available when must (NULL: any) answered and at
 * least need servers did; whole when every running server did. No leader
 * is named. */
void backend_health_asked(const struct backend_role *roles, int n, const struct server *must,
                          int need, int (*answers)(const struct server *srv),
                          struct backend_health *out);

/* A store's external cluster as the user names it, "HOST:PORT[,HOST:PORT...]"
 * (at most LOCK_MAX_SERVERS), into sv when sv is not NULL (conn: s as
 * given). 0, or -1 when it is not so. */
int backend_parse_hosts(const char *s, struct lock_servers *sv);

/* The store that serves adapters declared with backend word (its kind in
 * *kind when kind is not NULL), or NULL for a word no store lists. */
const struct backend_ops *backend_adapter_find(const char *word,
                                               const struct backend_adapter_kind **kind);

/* Every store's adapter words for messages, in registry order:
 * "redis, redis-nodes, sentinel, zookeeper, ...". */
const char *backend_adapter_list(void);

/* Add one "NAME=value" entry (fmt and its arguments) to sv->env (see
 * lock.h). 0, or -1 with err filled when it does not fit. */
int backend_env_put(struct lock_servers *sv, struct lab_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fill sv->conn from its nodes: "host:port,host:port...". */
void backend_fill_conn(struct lock_servers *sv);

#endif
