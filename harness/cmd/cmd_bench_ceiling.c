/*
 * cmd_bench_ceiling.c - `locklab bench ceiling`: locklab's figure beside
 * the store's own ceiling, measured in one run on one embedded server.
 *
 * For each client count N: redis-benchmark (Debian's redis-tools, one
 * thread, N connections) drives the two commands of a redis-lua cycle on
 * random keys, `SET k v NX PX ttl` and the compare-and-delete release
 * script (EVAL), one after the other; a cycle needs one of each, so the
 * ceiling is 1 / (1/SET + 1/EVAL) cycles per second. Then locklab's own
 * runner does redis-lua cycles with N clients, one key each (no contention,
 * the counter workload, no business time), on the same server. The table
 * gives both, the ratio, locklab's acquire p50, where the CPU went and
 * whether the result was client-bound (run/cpu.c): a ratio well below 1
 * with the clients' CPU above the server's says the lab, not the store,
 * was the limit. Only Redis has a ceiling here so far.
 */
#include <errno.h>
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
#define CEILING_IMPL "redis-lua"

static void ceiling_usage(FILE *f)
{
    fprintf(f,
            "usage: locklab bench ceiling [--clients N[,N...]] [--seconds S] [--backend redis]\n"
            "\n"
            "Each store beside its own ceiling, on one embedded server. For each client\n"
            "count N: redis-benchmark (one thread, N connections) runs SET k v NX PX on\n"
            "random keys and the release script (EVAL), each for about S seconds; the\n"
            "ceiling is 1 / (1/SET + 1/EVAL) cycles/s. Then locklab runs redis-lua with N\n"
            "clients on a key each for S seconds. Prints both, locklab/ceiling, locklab's\n"
            "acquire p50, the clients' and the server's cores, and whether the result\n"
            "was client-bound.\n"
            "\n"
            "  --clients N,...  client counts, 1..%d each (default 64,256,1024)\n"
            "  --seconds S      length of each measurement (default 3)\n"
            "  --backend B      the store: redis (the only one with a ceiling so far)\n",
            SCN_MAX_CLIENTS);
}

/* redis-benchmark on PATH, into out; -1 when it is not there. */
static int ceiling_find_tool(char *out, size_t n)
{
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, n, "%s/redis-benchmark", d);
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

int bench_ceiling(int argc, char **argv)
{
    double seconds = 3;
    const char *clients = "64,256,1024", *backend = "redis";
    struct bench_opt opts[] = {{"clients", .str = &clients},
                               {"seconds", .num = &seconds},
                               {"backend", .str = &backend},
                               {NULL}};
    int parsed = bench_getopt("ceiling", argc, argv, opts, ceiling_usage);
    if (parsed >= 0)
        return parsed;
    int steps[CEILING_MAX_STEPS];
    int n_steps = ceiling_steps(clients, steps);
    if (n_steps < 0)
        return LAB_EXIT_USAGE;
    if (optind < argc || seconds <= 0 || seconds > 600) {
        fprintf(stderr, "locklab: bench ceiling: bad arguments (seconds 0..600)\n");
        return LAB_EXIT_USAGE;
    }
    if (strcmp(backend, "redis") != 0) {
        fprintf(stderr, "locklab: bench ceiling: --backend is redis, the only store with a "
                        "ceiling so far, not '%s'\n", backend);
        return LAB_EXIT_USAGE;
    }
    char tool[PATH_MAX];
    if (ceiling_find_tool(tool, sizeof tool) != 0) {
        fprintf(stderr, "locklab: redis-benchmark is not on PATH (Debian: redis-tools)\n");
        return LAB_EXIT_ENV;
    }
    const struct lock_ops *ops = lock_find(CEILING_IMPL);
    static struct scenario s;
    bench_scenario(&s, "ceiling", steps[0], seconds);
    s.per_client_keys = KEYS_PER_CLIENT;
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
    backend_of(ops)->servers(ops, &s, &sv);
    char px[24];
    snprintf(px, sizeof px, "%lld", (long long)(s.ttl_ns / 1000000));
    const char *set_cmd[] = {"SET", "lock:__rand_int__", "token", "NX", "PX", px, NULL};
    const char *eval_cmd[] = {"EVAL", redis_compare_and_delete_lua, "1", "lock:__rand_int__",
                              "token", NULL};
    printf("ceiling: %s on %s, %.1f s per measurement; ceiling = redis-benchmark (one thread)\n"
           "on SET NX PX and the release script, cycles/s = 1 / (1/SET + 1/EVAL)\n",
           CEILING_IMPL, sv.conn, seconds);
    printf("%8s %10s %10s %12s %12s %7s %9s %10s %s\n", "clients", "SET/s", "EVAL/s",
           "ceiling c/s", "locklab c/s", "ratio", "acq p50", "cpu cl/sv", "client-bound");
    int code = LAB_EXIT_OK;
    double guess = 60000; /* requests per second, to size -n to about `seconds` */
    for (int i = 0; i < n_steps && !lab_stop; i++) {
        long requests = (long)(guess * seconds);
        double set = ceiling_tool_rps(tool, &sv.node[0], steps[i], requests, set_cmd);
        double eval = ceiling_tool_rps(tool, &sv.node[0], steps[i], requests, eval_cmd);
        if (set > 0)
            guess = set;
        s.clients = steps[i];
        s.max_duration_ns = (int64_t)(seconds * 1e9);
        struct run_result *res = lab_stop ? NULL : bench_run(&s, CEILING_IMPL, &err);
        if (lab_stop) {
            free(res);
            break;
        }
        if (set <= 0 || eval <= 0 || !res) {
            fprintf(stderr, "locklab: %d clients failed: %s\n", steps[i],
                    !res ? err.msg : "redis-benchmark did not complete");
            free(res);
            code = LAB_EXIT_ENV;
            break;
        }
        double ceiling = 1 / (1 / set + 1 / eval);
        char cpu[32];
        snprintf(cpu, sizeof cpu, "%.2f/%.2f", cpu_cores(res->cpu.clients_ns, res->elapsed_s),
                 cpu_cores(res->cpu.servers_ns, res->elapsed_s));
        printf("%8d %10.0f %10.0f %12.0f %12.0f %7.2f %7.2fms %10s %s\n", steps[i], set, eval,
               ceiling, res->throughput_per_s, res->throughput_per_s / ceiling,
               (double)hist_percentile(&res->acquire, 50) / 1000, cpu,
               !res->cpu.client_bound ? "no" : res->cpu.store_idle ? "yes (store idle)"
                                                                   : "yes (saturated)");
        fflush(stdout);
        free(res);
    }
    backends_stop(&b);
    return lab_stop ? LAB_EXIT_INTERRUPTED : code;
}
