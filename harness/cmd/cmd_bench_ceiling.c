/*
 * cmd_bench_ceiling.c - `locklab bench ceiling`: locklab's figure beside
 * the store's own ceiling, measured in one run on one embedded server.
 *
 * For each client count N: redis-benchmark (Debian's redis-tools, one
 * thread, N connections) drives the two commands of a redis-lua cycle on
 * random keys, `SET k token NX PX ttl` and the compare-and-delete release
 * script by EVALSHA (loaded first, as a client loads it), one after the
 * other; a cycle needs one of each, so the ceiling is 1 / (1/SET +
 * 1/EVALSHA) cycles per second. Then locklab's own runner does redis-lua
 * cycles with N clients, one key each (no contention, the counter
 * workload, no business time), on the same server, in client groups when
 * the design has asynchronous hooks (--clients-per-process; by default
 * one process, as the ceiling's tool is one thread). The table gives both,
 * the ratio, locklab's acquire p50, where the CPU went, the processes, the
 * RSS and whether the result was client-bound: by the run's own rule
 * (run/cpu.c), or "below ceiling" when the ratio is under 0.9 while the
 * clients' CPU is above the server's (the lab, not the store, was the
 * limit). --rounds repeats each count and keeps the median.
 *
 * Other stores: their bare loop at N connections at once (the backend's
 * bench_ceiling_loop: ZooKeeper's bench/bare_zk_many.c, one epoll thread;
 * the databases' and etcd's bare loops with a thread per connection,
 * bench/bare_threads.c), the same requests as the store's bench_impl
 * cycle, each connection on a key of its own, after a warm-up (ZooKeeper's
 * also the parents a client's first acquire creates, in the measured
 * time, as the lab's clients create them in theirs); against
 * that design with N clients on per-client keys. The store's own switch
 * (--force-sync: ZooKeeper's forceSync) as in `bench overhead`.
 */
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends.h"
#include "bench.h"
#include "cli.h"
#include "cpu.h"
#include "lock.h"
#include "redis_common.h"
#include "stop.h"
#include "subproc.h"

#define CEILING_MAX_STEPS 16
#define CEILING_MAX_ROUNDS 9
#define BELOW_CEILING 0.9 /* a ratio under it, with the clients busier than the store: client-bound */
/* Clients a group process runs by default: all of a step's, in one process,
 * as the ceiling's tool is one thread (redis-benchmark, bare_zk_many). On 2
 * cores more processes only take the store's core from it: 10,000 redis-lua
 * clients in 10 processes of 1,000 measured 0.33-2.06 of the ceiling (median
 * 0.58, Redis at 0.30 core), in one process 1.00-1.13 (Redis at 0.94), same
 * loaded hour (measured so on the project's 2-core VM; the command's record,
 * docs/records/, holds its figures). */
#define CEILING_GROUP_DEFAULT SCN_MAX_CLIENTS

static void ceiling_usage(FILE *f)
{
    fprintf(f,
            "usage: locklab bench ceiling [--clients N[,N...]] [--seconds S]\n"
            "                             [--backend B] [--clients-per-process M]\n"
            "                             [--rounds R] [--force-sync]\n"
            "\n"
            "Each store beside its own ceiling, on one embedded server. For each client\n"
            "count N, the store's ceiling at N connections and locklab's design with N\n"
            "clients on a key each (no contention) for S seconds, on the same server:\n"
            "  redis: redis-benchmark (one thread, N connections) runs SET k v NX PX on\n"
            "    random keys and the release script (EVALSHA), each for about S seconds; the\n"
            "    ceiling is 1 / (1/SET + 1/EVALSHA) cycles/s; against redis-lua.\n"
            "  zookeeper: a bare loop of N sessions in one thread (epoll, ZooKeeper's\n"
            "    wire protocol), each on a parent of its own doing create\n"
            "    ephemeral-sequential + getChildren + delete, for S seconds, the first\n"
            "    cycle of each creating /locklab and its parent first (as a lab client's\n"
            "    first acquire does); against zk-sequential. forceSync off unless\n"
            "    --force-sync.\n"
            "  postgres: a bare loop of N libpq sessions, a thread and a key each, doing\n"
            "    pg_advisory_lock + pg_advisory_unlock; against pg-advisory (at most 290:\n"
            "    the lab starts PostgreSQL with max_connections=300).\n"
            "  mysql: a bare loop of N connections, a thread and a name each, doing\n"
            "    GET_LOCK + RELEASE_LOCK; against mysql-get-lock (at most 990: the lab\n"
            "    starts MariaDB with max-connections=1000).\n"
            "  etcd: a bare loop of N libcurl handles (the v3 JSON gateway), a thread and\n"
            "    a key each, doing lease grant + txn create + txn delete-if-ours; against\n"
            "    etcd-lease.\n"
            "Prints both, locklab/ceiling, locklab's acquire p50, the clients' and the\n"
            "server's cores, and whether the result was client-bound: by the run's own\n"
            "rule (store idle, saturated), or below ceiling (a ratio under 0.9 while the\n"
            "clients used more CPU than the server: the lab, not the store, the limit).\n"
            "\n"
            "  --clients N,...  client counts, 1..%d each (default 64,256,1024)\n"
            "  --seconds S      length of each measurement (default 3)\n"
            "  --backend B      the store: redis (default), zookeeper, mysql, postgres\n"
            "                   or etcd\n"
            "  --clients-per-process M\n"
            "                   locklab's side in client groups of at most M clients a\n"
            "                   process, N spread evenly over ceil(N/M) processes\n"
            "                   (default %d: one process, as the ceiling's tool is one\n"
            "                   thread, for a design with asynchronous hooks, as\n"
            "                   redis-lua and zk-sequential have; 1: one process per\n"
            "                   client, the only way for the others)\n"
            "  --rounds R       measure each count R times, the ceiling and locklab in\n"
            "                   turn (one round the ceiling first, the next locklab; 1..%d,\n"
            "                   default 1); the row is the round with the median ratio,\n"
            "                   each round's ratio and machine busy follow it (a shared\n"
            "                   machine's load swings between measurements)\n"
            "  --force-sync     zookeeper: fsync each write (forceSync on)\n",
            SCN_MAX_CLIENTS, CEILING_GROUP_DEFAULT, CEILING_MAX_ROUNDS);
}

/* redis-benchmark on PATH, into out; -1 when it is not there. */
static int ceiling_find_tool(const char *tool, char *out, size_t n)
{
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, n, "%s/%s", d, tool);
        if (access(out, X_OK) == 0)
            return 0;
    }
    return -1;
}

/* One redis-benchmark run of the command cmd (argv words, NULL-ended) with
 * `clients` connections and `requests` of them; requests per second, or -1.
 * Its --csv line: "name","rps",... */
static double ceiling_tool_rps(const char *tool, const struct lock_endpoint *ep, int clients,
                               long requests, const char *const *cmd)
{
    char port[16], conns[16], nreq[24];
    snprintf(port, sizeof port, "%d", ep->port);
    snprintf(conns, sizeof conns, "%d", clients);
    snprintf(nreq, sizeof nreq, "%ld", requests);
    const char *argv[32] = {tool, "-h", ep->host, "-p", port, "-c", conns, "-n", nreq,
                            "-r", "100000000", "--csv"};
    int k = 12;
    for (int i = 0; cmd[i] && k < 31; i++)
        argv[k++] = cmd[i];
    argv[k] = NULL;
    char buf[4096];
    int status = subproc_capture((char *const *)argv, buf, sizeof buf);
    if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char *q = strstr(line, "\",\"");
        double rps;
        if (strncmp(line, "\"test\"", 6) != 0 && q && sscanf(q + 3, "%lf", &rps) == 1)
            return rps;
    }
    return -1;
}

/* The client counts of --clients "64,256,1024" into steps; their number,
 * or -1 after saying what is wrong. */
static int ceiling_steps(const char *text, int *steps)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > SCN_MAX_CLIENTS || n == CEILING_MAX_STEPS ||
            (*end && *end != ',')) {
            fprintf(stderr, "locklab: bench ceiling: --clients takes up to %d counts of 1..%d "
                            "separated by commas, not '%s'\n", CEILING_MAX_STEPS,
                    SCN_MAX_CLIENTS, text);
            return -1;
        }
        steps[n++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return n;
}

/* What measures one store's ceiling: redis-benchmark's path and its two
 * commands for Redis, else the store's bare loop at N connections. */
struct ceiling_tool {
    char bin[PATH_MAX];
    bool store_tool;
    const char *set_cmd[8], *eval_cmd[8];
    char px[24], sha[41];
    double guess; /* requests per second, to size redis-benchmark's -n */
};

/* The ceiling at n connections in cycles/s (set and eval: redis-benchmark's
 * two rates, or 0), or -1. */
static double ceiling_measure(struct ceiling_tool *t, const struct lock_servers *sv, int n,
                              double seconds, double *set, double *eval)
{
    *set = *eval = 0;
    if (!t->store_tool)
        return bench_run_bare(t->bin, sv->conn, seconds, n);
    long requests = (long)(t->guess * seconds);
    *set = ceiling_tool_rps(t->bin, &sv->node[0], n, requests, t->set_cmd);
    *eval = ceiling_tool_rps(t->bin, &sv->node[0], n, requests, t->eval_cmd);
    if (*set > 0)
        t->guess = *set;
    return *set > 0 && *eval > 0 ? 1 / (1 / *set + 1 / *eval) : -1;
}

/* The two commands a redis-lua cycle sends (redis_machine.c's SET and
 * compare-and-delete), for
 * redis-benchmark on random keys of the lab's shape: SET key token NX PX ttl
 * and EVALSHA sha 1 key token ttl, the release script loaded first (SCRIPT
 * LOAD, as a client does when it opens) so Redis runs it by its SHA1
 * without hashing its text, as it does for the lab. The token is as long
 * as a client's (16 random bytes in hex). 0, or -1 with err filled. */
static int ceiling_redis_commands(struct ceiling_tool *t, const struct lock_endpoint *ep,
                                  int64_t ttl_ns, struct lab_err *err)
{
    static const char key[] = "locklab-ceiling-__rand_int__",
                      token[] = "0123456789abcdef0123456789abcdef";
    redisContext *rc = redisConnect(ep->host, ep->port);
    if (!rc || rc->err) {
        lab_err_set(err, ECONNREFUSED, "cannot connect to Redis at %s:%d", ep->host, ep->port);
        if (rc)
            redisFree(rc);
        return -1;
    }
    redisReply *r = redisCommand(rc, "SCRIPT LOAD %s", redis_compare_and_delete_lua);
    bool loaded = r && r->type == REDIS_REPLY_STRING && r->len == 40;
    if (loaded)
        snprintf(t->sha, sizeof t->sha, "%s", r->str);
    else
        lab_err_set(err, EPROTO, "SCRIPT LOAD returned no SHA1");
    if (r)
        freeReplyObject(r);
    redisFree(rc);
    if (!loaded)
        return -1;
    snprintf(t->px, sizeof t->px, "%lld", (long long)(ttl_ns / 1000000));
    const char *set_cmd[] = {"SET", key, token, "NX", "PX", t->px, NULL};
    const char *eval_cmd[] = {"EVALSHA", t->sha, "1", key, token, t->px, NULL};
    memcpy(t->set_cmd, set_cmd, sizeof set_cmd);
    memcpy(t->eval_cmd, eval_cmd, sizeof eval_cmd);
    return 0;
}

/* Find what measures be's ceiling into t; 0, or the exit code after saying
 * what is missing. */
static int ceiling_tool_find(const struct backend_ops *be, struct ceiling_tool *t)
{
    t->store_tool = be->bench_ceiling_tool != NULL;
    t->guess = 60000;
    if (t->store_tool && ceiling_find_tool(be->bench_ceiling_tool, t->bin, sizeof t->bin) != 0) {
        fprintf(stderr, "locklab: %s is not on PATH (Debian: %s)\n", be->bench_ceiling_tool,
                be->bench_ceiling_tool_pkg ? be->bench_ceiling_tool_pkg : "?");
        return LAB_EXIT_ENV;
    }
    if (!t->store_tool && subproc_sibling(be->bench_ceiling_loop, X_OK, t->bin, sizeof t->bin) != 0) {
        fprintf(stderr, "locklab: the bare loop %s is missing; build it (make)\n", t->bin);
        return LAB_EXIT_ENV;
    }
    return 0;
}

/* One round at one client count: the ceiling and locklab, in turn. */
struct ceiling_row {
    double set, eval, ceiling, rate, ratio, acq_p50_ms, cl_cores, sv_cores, busy, rss_mib;
    int procs;
    const char *bound;
};

/* Measure one round into r; 0, or the exit code after saying what failed.
 * The first round measures the ceiling first, the next locklab first, and
 * so on: what one measurement leaves the server (garbage to collect, a
 * snapshot under way, sessions still closing) weighs on the other, and a
 * fixed order would always hand it to the same side. */
static int ceiling_round(struct ceiling_tool *t, const struct lock_servers *sv,
                         const struct scenario *s, const char *impl, double seconds,
                         bool lab_first, struct ceiling_row *r)
{
    struct lab_err err = {0};
    r->ceiling = 0;
    struct run_result *res = lab_first ? bench_run(s, impl, &err) : NULL;
    if (!lab_stop && (res || !lab_first))
        r->ceiling = ceiling_measure(t, sv, s->clients, seconds, &r->set, &r->eval);
    if (!lab_first && !lab_stop)
        res = bench_run(s, impl, &err);
    if (lab_stop) {
        free(res);
        return 0;
    }
    if (r->ceiling <= 0 || !res) {
        fprintf(stderr, "locklab: %d clients failed: %s\n", s->clients,
                !res ? err.msg : t->store_tool ? "redis-benchmark did not complete"
                                          : "the bare loop did not complete");
        free(res);
        return LAB_EXIT_ENV;
    }
    r->rate = res->throughput_per_s;
    r->ratio = r->rate / r->ceiling;
    r->acq_p50_ms = (double)hist_percentile(&res->acquire, 50) / 1000;
    r->cl_cores = cpu_cores(res->cpu.clients_ns, res->elapsed_s);
    r->sv_cores = cpu_cores(res->cpu.servers_ns, res->elapsed_s);
    r->busy = res->cpu.machine_busy;
    r->procs = res->cpu.client_procs;
    /* every client process's peak RSS summed, and the parent's */
    r->rss_mib = (double)(res->cpu.clients_rss_kib + res->cpu.harness_rss_kib) / 1024;
    /* the run's own rule (run/cpu.c) first; then what only this command
     * knows: the same store served a bare client faster at the same
     * concurrency while the lab's clients spent more CPU than the store */
    r->bound = res->cpu.client_bound ? (res->cpu.client_core ? "yes (a client at a core)" : "yes (saturated)")
               : r->ratio < BELOW_CEILING && r->cl_cores > r->sv_cores ? "yes (below ceiling)"
                                                                       : "no";
    free(res);
    return 0;
}

/* The table's row for n clients: the round with the median ratio (the
 * lower middle one of an even count), and each round's ratio after it. */
static void ceiling_print(int n, const struct ceiling_row *row, int rounds)
{
    int order[CEILING_MAX_ROUNDS];
    for (int i = 0; i < rounds; i++) {
        int k = i;
        for (; k > 0 && row[order[k - 1]].ratio > row[i].ratio; k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
    const struct ceiling_row *r = &row[order[(rounds - 1) / 2]];
    char cpu[32], rates[2][16] = {"-", "-"};
    snprintf(cpu, sizeof cpu, "%.2f/%.2f", r->cl_cores, r->sv_cores);
    if (r->set > 0) {
        snprintf(rates[0], sizeof rates[0], "%.0f", r->set);
        snprintf(rates[1], sizeof rates[1], "%.0f", r->eval);
    }
    printf("%8d %10s %10s %12.0f %12.0f %7.2f %7.2fms %10s %6d %8.0f %s\n", n, rates[0],
           rates[1], r->ceiling, r->rate, r->ratio, r->acq_p50_ms, cpu, r->procs, r->rss_mib,
           r->bound);
    if (rounds > 1) {
        printf("         rounds (ratio, machine busy):");
        for (int i = 0; i < rounds; i++)
            printf(" %.2f %.0f%%", row[i].ratio, row[i].busy * 100);
        printf("\n");
    }
    fflush(stdout);
}

int bench_ceiling(int argc, char **argv)
{
    double seconds = 3;
    const char *clients = "64,256,1024", *backend = "redis";
    int force_sync = 0;
    double per_opt = -1; /* -1: the default for the design */
    double rounds_opt = 1;
    struct bench_opt opts[] = {{"clients", .str = &clients},
                               {"seconds", .num = &seconds},
                               {"backend", .str = &backend},
                               {"clients-per-process", .num = &per_opt, .integer = true},
                               {"rounds", .num = &rounds_opt, .integer = true},
                               {"force-sync", .flag = &force_sync},
                               {NULL}};
    int parsed = bench_getopt("ceiling", argc, argv, opts, ceiling_usage);
    if (parsed >= 0)
        return parsed;
    int steps[CEILING_MAX_STEPS];
    int n_steps = ceiling_steps(clients, steps);
    if (n_steps < 0)
        return LAB_EXIT_USAGE;
    if (optind < argc || seconds <= 0 || seconds > 600 ||
        (per_opt != -1 && (per_opt < 1 || per_opt > SCN_MAX_CLIENTS)) || rounds_opt < 1 ||
        rounds_opt > CEILING_MAX_ROUNDS) {
        fprintf(stderr, "locklab: bench ceiling: bad arguments (seconds 0..600, "
                        "--clients-per-process 1..%d, --rounds 1..%d)\n", SCN_MAX_CLIENTS,
                CEILING_MAX_ROUNDS);
        return LAB_EXIT_USAGE;
    }
    int rounds = (int)rounds_opt;
    const struct backend_ops *be = backend_find(backend);
    if (!be || !be->bench_impl || (!be->bench_ceiling_tool && !be->bench_ceiling_loop)) {
        fprintf(stderr, "locklab: bench ceiling: --backend is one of");
        for (int i = 0, n = 0; i < backend_count; i++)
            if (backend_registry[i]->bench_ceiling_loop || backend_registry[i]->bench_ceiling_tool)
                fprintf(stderr, "%s %s", n++ ? "," : "", backend_registry[i]->name);
        fprintf(stderr, ", not '%s'\n", backend);
        return LAB_EXIT_USAGE;
    }
    for (int i = 0; i < n_steps; i++) {
        char why[256];
        if (backend_conn_limit(lock_find(be->bench_impl), steps[i], false, why, sizeof why)) {
            fprintf(stderr, "locklab: bench ceiling: %d clients: %s\n", steps[i], why);
            return LAB_EXIT_USAGE;
        }
    }
    static struct ceiling_tool t;
    int code = ceiling_tool_find(be, &t);
    if (code)
        return code;
    const char *impl = be->bench_impl;
    const struct lock_ops *ops = lock_find(impl);
    int per = per_opt > 0 ? (int)per_opt : ops->async ? CEILING_GROUP_DEFAULT : 1;
    if (per > 1 && !ops->async) {
        fprintf(stderr, "locklab: bench ceiling: %s cannot run in client groups (it has no "
                        "asynchronous hooks): --clients-per-process 1\n", impl);
        return LAB_EXIT_USAGE;
    }
    static struct scenario s;
    bench_scenario(&s, "ceiling", steps[0], seconds);
    s.per_client_keys = KEYS_PER_CLIENT;
    if (be->bench_settings)
        be->bench_settings(&s, force_sync);
    stop_install();
    struct backends b;
    backends_init(&b);
    backends_plan_one(&b, &s, ops);
    struct lab_err err = {0};
    if (backends_start(&b, &lab_stop, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        return LAB_EXIT_ENV;
    }
    struct lock_servers sv;
    be->servers(ops, &s, &sv);
    if (t.store_tool && ceiling_redis_commands(&t, &sv.node[0], s.ttl_ns, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        backends_stop(&b);
        return LAB_EXIT_ENV;
    }
    if (t.store_tool)
        printf("ceiling: %s on %s, %.1f s per measurement; ceiling = redis-benchmark (one thread)\n"
               "on SET NX PX and the release script by EVALSHA (as redis-lua sends them),\n"
               "cycles/s = 1 / (1/SET + 1/EVALSHA)\n", impl, sv.conn, seconds);
    else
        printf("ceiling: %s on %s, %.1f s per measurement%s;\nceiling = %s at N connections "
               "at once, a key each:\n%s\n", impl, sv.conn, seconds,
               be->bench_flag && force_sync ? be->bench_flag_note : "", be->bench_ceiling_loop,
               be->bench_cycle);
    /* warm the server up (a JVM compiles its hot paths in the first seconds) */
    if (!t.store_tool && bench_run_bare(t.bin, sv.conn, be->bench_warmup_s, steps[0]) < 0)
        fprintf(stderr, "locklab: warning: the warm-up loop failed\n");
    if (per > 1)
        printf("locklab in client groups of at most %d clients a process\n", per);
    else
        printf("locklab one process per client\n");
    printf("%8s %10s %10s %12s %12s %7s %9s %10s %6s %8s %s\n", "clients", "SET/s",
           "EVALSHA/s", "ceiling c/s", "locklab c/s", "ratio", "acq p50", "cpu cl/sv", "procs",
           "RSS MiB", "client-bound");
    for (int i = 0; i < n_steps && !lab_stop && !code; i++) {
        struct ceiling_row row[CEILING_MAX_ROUNDS];
        int done = 0;
        s.clients = steps[i];
        int procs = (steps[i] + per - 1) / per; /* N spread evenly over them */
        s.clients_per_process = (steps[i] + procs - 1) / procs;
        s.max_duration_ns = (int64_t)(seconds * 1e9);
        for (; done < rounds && !lab_stop; done++)
            if ((code = ceiling_round(&t, &sv, &s, impl, seconds, done % 2, &row[done])) != 0)
                break;
        if (!code && !lab_stop)
            ceiling_print(steps[i], row, done);
    }
    backends_stop(&b);
    return lab_stop ? LAB_EXIT_INTERRUPTED : code;
}
