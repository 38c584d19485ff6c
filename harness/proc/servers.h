/*
 * servers.h - the generic process management every store's embedded
 * servers use: a private data directory and a free loopback port, spawn,
 * track, kill a process tree, restart, stop.
 *
 * By default locklab runs every store itself (the stores' own files say
 * how: harness/stores/<store>/), each server on a free loopback port in a
 * private directory under one temporary directory. Every server started is
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
    /* Where it runs when a scenario places servers on hosts (harness/net/):
     * the name a scenario may place it by ("redis", "redis-node:1",
     * "sentinel:0"; "" for none), set by its store before it starts, and a
     * process in the network namespace it runs in (0: locklab's own), set
     * by servers_prepare from the placement (servers_set_placement). */
    char place[32];
    pid_t ns_pid;
};

/* Where a server of name place runs (harness/net/ installs it when a run
 * has hosts): its address into addr (n bytes) and a process of its network
 * namespace into *ns_pid (0: locklab's own). place may be "" (a server no
 * scenario can place: it stays on locklab's own namespace, at the address
 * every host reaches). Without a placement every server binds 127.0.0.1. */
/* Move the calling process (a child about to exec) into the network
 * namespace of process ns_pid. 0, or -1 with errno set. */
int servers_enter_netns(pid_t ns_pid);

typedef void (*servers_placement)(const char *place, char *addr, size_t n, pid_t *ns_pid);
void servers_set_placement(servers_placement place);

/* Zero s for a fresh start, all but its place (the name its store gave it
 * before the start, which servers_prepare looks up). */
void servers_reset(struct server *s);

/* When s runs on a run's own network (hosts: its address is not
 * 127.0.0.1), the first three numbers of its address ("198.18.7") into
 * out: the /24 every client of the run, on a host or on locklab's side,
 * connects from, which a server that checks where logins come from must
 * let in. false (out empty) on loopback. */
bool servers_lan_prefix(const struct server *s, char *out, size_t n);

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

/* Building blocks for the stores' server kinds: a private directory and a
 * free client port for s; fork/exec argv tracked for clean-up; has it exited
 * (reaped and untracked when so); is a binary on PATH; another free port. */
int servers_prepare(struct server *s, const char *role, struct lab_err *err);
int servers_spawn(struct server *s, const char *logname, char *const argv[], struct lab_err *err);
int servers_exited(struct server *s);
int servers_binary_exists(const char *name);

/* The runnable path of name into out: name itself when it holds a '/',
 * else the first match on $PATH, as execvp would find it. 0, or -1 (out
 * then holds name). */
int servers_binary_path(const char *name, char *out, size_t outlen);

/* The first line a server binary prints when run with argv (argv[0] found
 * as servers_binary_path finds it; at most 7 arguments): its version, for
 * a store's version hook. 0, or -1 when it is not installed or said
 * nothing. */
int servers_version(char *const argv[], char *out, size_t outlen);
int servers_free_port(void);

#endif
