/*
 * servers.h - embedded servers: start, wait until they answer, stop.
 *
 * By default locklab runs every backend itself: redis-server on a free
 * loopback port in a private temporary directory. Every server started is
 * remembered in a fixed table that the signal handlers can read, so that a
 * normal exit, an error, SIGINT or SIGTERM all stop every server, and each
 * server also gets PR_SET_PDEATHSIG so it dies with locklab even if locklab
 * itself is killed with SIGKILL. Servers run in their own process group so a
 * terminal's Ctrl-C reaches locklab, which decides when they stop.
 */
#ifndef LOCKLAB_SERVERS_H
#define LOCKLAB_SERVERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lab.h"

struct server {
    pid_t pid;      /* server process, 0 when not running */
    char host[64];  /* address clients connect to */
    int port;       /* TCP port */
    char role[32];  /* what it is for: "lock-store", "stock", ... */
    char dir[512];  /* its private working directory */
    int stop_signal; /* how to stop it: SIGTERM (0 means SIGTERM) or SIGKILL */
    char extra[160]; /* redis-server: more arguments, space-separated (--replicaof H P) */
    /* start it again on the same port and directory and wait until it
     * answers (set by its kind's start; a restart fault uses it); a
     * ZooKeeper server only starts: joining its ensemble takes seconds,
     * watched through servers_zk_mode */
    int (*respawn)(struct server *s, struct lab_err *err);
    /* Redis, kept across restarts: more redis-server arguments for the next
     * start (NULL-terminated, NULL for none; its owner's, e.g. the
     * persistence of redis_persist.c), and a library to preload into it
     * (the clock shim, told its offset file in its directory: clockshim.h),
     * NULL for none */
    const char *const *more_args;
    const char *preload;
};

/* A failover fault in progress, driven by the backend whose servers it
 * hits (action failover): the instants it reached, CLOCK_MONOTONIC, 0 until
 * then. */
struct failover {
    int phase;              /* the backend's own steps; 0 before the first */
    char key[160];          /* the lock key (set by the engine) */
    int64_t cut_ns;         /* replication to every replica cut */
    int64_t copy_gone_ns;   /* the replicas' copy of the lock key expires (INT64_MAX never) */
    int64_t granted_ns;     /* a client was granted after the cut (0: none was) */
    int64_t killed_ns;      /* the master killed, the replicas continued */
    int64_t switched_ns;    /* the sentinels name another master */
    int64_t writable_ns;    /* the new master took a write */
    int64_t rejoined_ns;    /* the old master back, as a replica */
    int master, new_master; /* the backend's own server numbers */
    pid_t master_pid;       /* the master killed */
    char note[128];         /* what happened, for the fault's record */
};

/* Start redis-server for role and wait until it answers PING.
 * Returns 0, or -1 with err filled (err->code ENOENT when redis-server is
 * not installed). The binary is $LOCKLAB_REDIS_SERVER or redis-server on PATH. */
int servers_redis_start(struct server *s, const char *role, struct lab_err *err);

/* The same with more redis-server arguments (extra, space-separated, kept
 * in s->extra for restarts, e.g. "--replicaof 127.0.0.1 6379"; "" for none)
 * and a library to preload into it now and at every restart (preload, NULL
 * for none: struct server.preload). */
int servers_redis_start_with(struct server *s, const char *role, const char *extra,
                             const char *preload, struct lab_err *err);

/* Stop one server (SIGTERM, then SIGKILL after a grace period) and remove its
 * directory. Safe to call on a server that is not running. */
void servers_stop(struct server *s);

/* SIGKILL one server with every process it forked and reap it, keeping its
 * port and directory for a later servers_restart (a crash, as a fault
 * inflicts it). */
void servers_kill(struct server *s);

/* The processes pid forked, and theirs, as /proc shows them now (at most
 * max, into out); how many. A server is its process with these: PostgreSQL
 * forks one backend per connection (each in a session of its own, out of
 * reach of a signal to the postmaster's group), so a fault's pause stops
 * them too (servers_signal_children), and a kill or a stop takes them with
 * the server. */
#define SERVERS_TREE_MAX 1024
int servers_descendants(pid_t pid, pid_t *out, int max);

/* Send sig to every descendant of pid (not to pid); how many there were. */
int servers_signal_children(pid_t pid, int sig);

/* Start a server that is down (killed, or stopped by a fault) again on its
 * port, with what its directory holds (an embedded Redis keeps nothing:
 * no RDB, no AOF), and wait until it answers. 0 or -1 with err filled. */
int servers_restart(struct server *s, struct lab_err *err);

/* Stop every server still running; called at exit. */
void servers_stop_all(void);

/* Async-signal-safe: SIGKILL every server still running (for a second
 * Ctrl-C or a fatal signal, where there is no time to be polite). */
void servers_kill_all_now(void);

/* Start a ZooKeeper ensemble of n (1 or 3) servers (QuorumPeerMain from
 * Debian's zookeeper package, a generated zoo.cfg each) and wait until a
 * client session connects. hosts receives the connection string
 * "127.0.0.1:p1,...". force_sync sets forceSync. Gives up when *stop (may
 * be NULL) is set during the wait. 0 or -1 with err filled
 * (ENOENT when java or the ZooKeeper jars are missing). */
int servers_zk_start(struct server *srv, int n, int force_sync, const volatile int *stop,
                     char *hosts, size_t hostslen, struct lab_err *err);

/* What one embedded ZooKeeper server says of itself (srvr), without waiting
 * on one that is down or stopped by a fault (a stopped JVM accepts a
 * connection and never answers): down, not serving (starting, looking for a
 * leader, syncing), or its mode. *connections (may be NULL) receives its
 * client connections when it serves. A server that exited is reaped. */
enum zk_mode { ZK_MODE_DOWN = 0, ZK_MODE_NOT_SERVING, ZK_MODE_STANDALONE, ZK_MODE_LEADER,
               ZK_MODE_FOLLOWER, ZK_MODE_OTHER };
enum zk_mode servers_zk_mode(struct server *s, int *connections);

/* Packets received by every server of a ZooKeeper connection string (mntr's
 * zk_packets_received, summed): client requests, session pings included.
 * Only numeric IPv4 addresses. 0 or -1 with err filled. */
int servers_zk_packets(const char *hosts, int64_t *packets, struct lab_err *err);

/* Watch notifications the ZooKeeper servers of hosts have sent so far (the
 * sums of mntr's node created/deleted/children/changed watch counts). 0,
 * or -1 with err filled. */
int servers_zk_watch_events(const char *hosts, int64_t *events, struct lab_err *err);

/* Delete every node below each of the n parents, however deep (the nodes
 * a lock left behind, e.g. those of a client killed in an earlier run,
 * which would otherwise live on until its session times out, and
 * zk-semaphore's locks/ and leases/ with theirs), in one session; the
 * parents stay. A missing parent is fine. 0 or -1 with err filled. */
int servers_zk_clear(const char *hosts, const char *const *parents, int n, struct lab_err *err);

/* Check that a ZooKeeper connection string accepts a session within
 * timeout_ms. 0 or -1 with err filled. */
int servers_zk_ping(const char *hosts, int timeout_ms, struct lab_err *err);

/* Building blocks for server kinds (servers.c): a private directory and a
 * free client port for s; fork/exec argv tracked for clean-up; has it exited
 * (reaped and untracked when so); is a binary on PATH; another free port. */
int servers_prepare(struct server *s, const char *role, struct lab_err *err);
int servers_spawn(struct server *s, const char *logname, char *const argv[], struct lab_err *err);
int servers_exited(struct server *s);
int servers_binary_exists(const char *name);
int servers_free_port(void);

/* Wait until s (a redis-server, or one in sentinel mode: what names it)
 * answers PING; -1 with err filled if it died (its log is s->dir/logname)
 * or never answered. */
int servers_wait_ping(struct server *s, const char *what, const char *logname,
                      struct lab_err *err);

/* Check that a Redis at host:port answers PING within timeout_ms. 0 or -1. */
int servers_redis_ping(const char *host, int port, int timeout_ms, struct lab_err *err);

#endif
