/*
 * cpu.c - a run's CPU accounting (see cpu.h). Each client marks its own
 * CPU time at the start barrier and when its loop ends: getrusage of
 * itself (every thread) and of the children it reaped, plus its adapter
 * child's utime + stime (+ cutime + cstime) from /proc/<pid>/stat, since
 * that child is where a library burns its CPU. The difference is the
 * client's share of the window, so an interpreter's or a JVM's start-up
 * is not. A client that dies inside the window is counted up to its death
 * from the rusage wait4 returns when the parent reaps it. The lock servers
 * are counted from the same /proc fields at the barrier and after the
 * clients are reaped, with their live children's (PostgreSQL's backends:
 * in the postmaster's cutime + cstime only once it reaped them).
 * Only the design's own embedded servers are counted (roles() of its
 * backend), never the stock store, which is the workload's.
 *
 * Memory is read as cheaply: the runner adds up each client process's peak
 * resident set from the rusage wait4 gives when it reaps it (nothing is read
 * while the clients run), and the parent's own VmRSS once, after the reaping
 * (cpu_self_rss_kib).
 */
#include "cpu.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend.h"

/* A result is client-bound (docs/results.md, "The table") when the
 * clients' CPU could have limited its throughput:
 *  - the machine was SATURATED and the clients held at least CLIENT_SHARE
 *    of the cores: the clients were what the cores ran, whatever else the
 *    machine did; or
 *  - one client process (a client with its adapter child, or a group's
 *    loop) used at least CLIENT_CORE of a core: its one thread was busy
 *    all the run, so it set the pace with cores to spare.
 * Clients that merely use more CPU than an idle store are not: six
 * interpreted adapters on 100 ms retries used 0.56 of 2 cores beside a
 * store at 0.06, the machine 35 % busy, and the retry interval set the
 * pace. */
#define SATURATED 0.90
#define CLIENT_SHARE 0.50
#define CLIENT_CORE 0.75

/* The machine's busy and total CPU time from /proc/stat's first line. */
static void machine_ns(int64_t *busy, int64_t *total)
{
    *busy = *total = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 5)
        return;
    unsigned long long all = 0;
    for (int i = 0; i < 8; i++)
        all += v[i];
    long hz = sysconf(_SC_CLK_TCK);
    int64_t per = 1000000000 / hz;
    *total = (int64_t)all * per;
    *busy = (int64_t)(all - v[3] - v[4]) * per; /* not idle, not iowait */
}

/* utime + stime + cutime + cstime of pid in ns, or -1 when it is gone. */
static int64_t proc_cpu_ns(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (lab_read_small(path, buf, sizeof buf) < 0)
        return -1;
    const char *p = strrchr(buf, ')'); /* the name may hold spaces */
    if (!p)
        return -1;
    /* after ") ": state(3) ppid pgrp session tty tpgid flags minflt cminflt
     * majflt cmajflt utime(14) stime cutime cstime */
    unsigned long long v[4];
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
               &v[0], &v[1], &v[2], &v[3]) != 4)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    return (int64_t)((v[0] + v[1] + v[2] + v[3]) * (1000000000ULL / (unsigned long long)hz));
}

/* The CPU time of pid's live children (those its main thread forked), in
 * ns: a server that forks a process per session (PostgreSQL's backends)
 * has their time in its cutime only once it reaped them, and a group's
 * sessions all end at once, just before the sample after the run. Read
 * after pid's own: a child reaped in between is missed, never counted
 * twice. */
static int64_t children_cpu_ns(pid_t pid)
{
    char path[80], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    if (lab_read_small(path, buf, sizeof buf) < 0)
        return 0;
    int64_t sum = 0;
    for (char *save, *t = strtok_r(buf, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
        int64_t ns = proc_cpu_ns((pid_t)atoi(t));
        if (ns > 0)
            sum += ns;
    }
    return sum;
}

void cpu_sample(const struct lock_ops *ops, const struct scenario *s, struct cpu_sample *out)
{
    memset(out, 0, sizeof *out);
    machine_ns(&out->busy_ns, &out->total_ns);
    const struct backend_ops *be = backend_of(ops);
    if (!be || !be->roles)
        return;
    struct backend_role r[BACKEND_MAX_ROLES];
    int n = be->roles(ops, s, r, BACKEND_MAX_ROLES);
    for (int i = 0; i < n && out->n < CPU_MAX_SERVERS; i++) {
        pid_t pid = r[i].srv ? r[i].srv->pid : 0;
        bool seen = pid <= 0;
        for (int k = 0; k < out->n && !seen; k++)
            seen = out->s[k].pid == pid; /* redis-master and redis: one process */
        if (seen)
            continue;
        int64_t ns = proc_cpu_ns(pid);
        if (ns < 0)
            continue;
        ns += children_cpu_ns(pid);
        out->s[out->n].pid = pid;
        if (r[i].index >= 0)
            snprintf(out->s[out->n].name, sizeof out->s[0].name, "%s:%d", r[i].name, r[i].index);
        else
            snprintf(out->s[out->n].name, sizeof out->s[0].name, "%s", r[i].name);
        out->s[out->n++].ns = ns;
    }
}

/* User + system time of a struct rusage, in ns. */
static int64_t cpu_rusage_ns(const struct rusage *ru)
{
    return ((int64_t)ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000;
}

int64_t cpu_self_ns(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? cpu_rusage_ns(&ru) : 0;
}

int64_t cpu_self_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %lld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

void cpu_window_mark(struct cpu_window *w, pid_t child, bool end)
{
    struct rusage self, reaped;
    int64_t ns = 0;
    if (getrusage(RUSAGE_SELF, &self) == 0)
        ns += cpu_rusage_ns(&self);
    if (getrusage(RUSAGE_CHILDREN, &reaped) == 0)
        ns += cpu_rusage_ns(&reaped); /* an adapter child killed and reaped during the run */
    int64_t kid = child > 0 ? proc_cpu_ns(child) : 0; /* a zombie's times still read */
    if (kid < 0)
        kid = 0;
    if (end) {
        w->at_end_ns = ns + kid;
        w->taken |= CPU_AT_END;
    } else {
        w->at_start_ns = ns + kid;
        w->child_at_start_ns = kid;
        w->taken |= CPU_AT_START;
    }
}

int64_t cpu_window_ns(const struct cpu_window *w, const struct rusage *reaped)
{
    if (!(w->taken & CPU_AT_START))
        return 0;
    int64_t from = w->at_start_ns, to = w->at_end_ns;
    if (!(w->taken & CPU_AT_END)) { /* died inside: its own time only */
        from -= w->child_at_start_ns;
        to = cpu_rusage_ns(reaped);
    }
    return to > from ? to - from : 0;
}

double cpu_cores(int64_t ns, double elapsed_s)
{
    return elapsed_s > 0 ? (double)ns / 1e9 / elapsed_s : 0;
}

void cpu_finish(struct cpu_use *u, const struct cpu_sample *before,
                const struct cpu_sample *after, double elapsed_s)
{
    cpu_set_t set;
    u->cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                            : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (u->cores < 1)
        u->cores = 1;
    u->servers_ns = 0;
    u->n_servers = 0;
    for (int i = 0; i < after->n; i++) {
        int64_t from = 0; /* a server started during the run counts from zero */
        for (int k = 0; k < before->n; k++)
            if (before->s[k].pid == after->s[i].pid)
                from = before->s[k].ns;
        int64_t d = after->s[i].ns - from;
        if (d < 0)
            d = 0;
        snprintf(u->server[u->n_servers].name, sizeof u->server[0].name, "%s", after->s[i].name);
        u->server[u->n_servers++].ns = d;
        u->servers_ns += d;
    }
    int64_t total = after->total_ns - before->total_ns;
    u->machine_busy = total > 0 ? (double)(after->busy_ns - before->busy_ns) / (double)total : 0;
    double clients = cpu_cores(u->clients_ns, elapsed_s);
    u->client_core = cpu_cores(u->max_client_ns, elapsed_s) >= CLIENT_CORE;
    u->client_bound = u->client_core ||
                      (u->machine_busy >= SATURATED && clients >= CLIENT_SHARE * u->cores);
}
