/*
 * cpu.h - where a run's CPU time went during its measured window (from the
 * start barrier to the end of the clients' loops): the client processes
 * and their adapter children (each client takes its own CPU counters at
 * both ends), the embedded lock servers (from /proc), and the harness's own
 * parent, against the cores the run could use. A lab that forks one
 * process per client can saturate its own machine before the lock service:
 * a result whose clients held the cores measures the client machine, and
 * says so (client_bound), as fio reports usr/sys per job. Start-up (a
 * client connecting, an adapter's interpreter or JVM loading) happens
 * before the barrier and is never charged to the run.
 */
#ifndef LOCKLAB_CPU_H
#define LOCKLAB_CPU_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lock.h"
#include "region.h"
#include "result.h"
#include "scenario.h"


struct rusage;

/* The CPU counters at one moment: the machine's and the lock servers'. */
struct cpu_sample {
    int64_t busy_ns, total_ns; /* every core: busy (not idle, not iowait), and all */
    int n;
    struct {
        pid_t pid;
        char name[32];    /* by its role: "redis", "zookeeper:1", "sentinel:0" */
        int64_t ns;       /* user + system time so far (its waited-for children too) */
    } s[CPU_MAX_SERVERS];
};



/* Sample the machine's CPU counters and those of design ops's embedded
 * lock servers in s. */
void cpu_sample(const struct lock_ops *ops, const struct scenario *s,
                        struct cpu_sample *out);

/* The parent's own user + system time so far. */
int64_t cpu_self_ns(void);

/* The parent's resident set now (VmRSS of /proc/self/status), in KiB; 0
 * when it cannot be read. One read per run. */
int64_t cpu_self_rss_kib(void);

/* In a client: take its CPU time now into w (end: at the end of the
 * window, else at its start), with that of its adapter child (0: none). */
void cpu_window_mark(struct cpu_window *w, pid_t child, bool end);

/* The CPU time a reaped client used inside the window: between its two
 * marks; one that died before its end mark, from its own start mark to its
 * death by the rusage wait4 gave (its adapter child's time after the
 * barrier is then left out: the child was not its to reap, and is gone);
 * 0 for one that never passed the barrier. */
int64_t cpu_window_ns(const struct cpu_window *w, const struct rusage *reaped);

/* Fill u's servers from two samples (a server that changed pid, started
 * again by a fault, counts from its new start), its cores, and decide
 * client_bound for a run of elapsed_s seconds. clients_ns and harness_ns
 * are set by the caller first. */
void cpu_finish(struct cpu_use *u, const struct cpu_sample *before,
                const struct cpu_sample *after, double elapsed_s);

/* Cores used on average over elapsed_s: ns / elapsed. */
double cpu_cores(int64_t ns, double elapsed_s);

#endif
