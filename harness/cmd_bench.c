/*
 * cmd_bench.c - `locklab bench overhead`: how much does the harness cost?
 *
 * Runs the bare hiredis loop (bench/bare_redis_loop.c, built as
 * locklab-bare-redis next to locklab) and locklab's own runner with
 * `redis-lua`, one client, the counter workload and no business time,
 * against the same embedded Redis, alternating which goes first in each
 * round so drift on a noisy machine hits both alike. Prints each round's
 * cycle rates, then the medians and their ratio; exits 1 when the ratio is
 * below the bar (default 0.90), so it can gate CI.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../impls/lock.h"
#include "backends.h"
#include "cli.h"
#include "runner.h"
#include "stop.h"

#define BENCH_MAX_ROUNDS 50

static void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: locklab bench overhead [--seconds S] [--rounds R] [--min-ratio X]\n"
            "                              [--redis HOST:PORT]\n"
            "\n"
            "Compare a bare hiredis SET NX PX + EVALSHA loop with locklab running\n"
            "redis-lua (1 client, counter workload, no business time) on the same Redis.\n"
            "Prints both cycle rates per round, their medians and the ratio\n"
            "locklab/bare; exits 1 when the ratio is below --min-ratio.\n"
            "\n"
            "  --seconds S     length of each measurement (default 3)\n"
            "  --rounds R      rounds, each measuring both (default 5, at most %d)\n"
            "  --min-ratio X   the bar (default 0.90)\n"
            "  --redis H:P     use this Redis instead of an embedded one\n",
            BENCH_MAX_ROUNDS);
}

/* Path of the bare loop binary: next to this executable. */
static int bare_path(char *out, size_t n)
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len < 0)
        return -1;
    self[len] = '\0';
    snprintf(out, n, "%s/locklab-bare-redis", dirname(self));
    return access(out, X_OK);
}

/* Run the bare loop once; cycles per second, or -1. */
static double run_bare(const char *bin, const char *host, int port, double seconds)
{
    char portbuf[16], secbuf[32];
    snprintf(portbuf, sizeof portbuf, "%d", port);
    snprintf(secbuf, sizeof secbuf, "%.3f", seconds);
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl(bin, bin, host, portbuf, secbuf, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[256] = "";
    ssize_t got = pid > 0 ? read(fds[0], buf, sizeof buf - 1) : -1;
    close(fds[0]);
    int status = 0;
    if (pid > 0)
        waitpid(pid, &status, 0);
    long long cycles, ns;
    if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        sscanf(buf, "cycles=%lld elapsed_ns=%lld", &cycles, &ns) != 2 || ns <= 0)
        return -1;
    return (double)cycles * 1e9 / (double)ns;
}

/* Run locklab's runner once; acquire+release cycles per second, or -1. */
static double run_locklab(const char *host, int port, double seconds, struct lab_err *err)
{
    static struct scenario s;
    memset(&s, 0, sizeof s);
    snprintf(s.path, sizeof s.path, "(bench overhead)");
    snprintf(s.name, sizeof s.name, "overhead");
    s.n_impls = 1;
    snprintf(s.impls[0], sizeof s.impls[0], "redis-lua");
    s.clients = 1;
    s.max_duration_ns = (int64_t)(seconds * 1e9);
    snprintf(s.lock_key, sizeof s.lock_key, "locklab-overhead");
    s.ttl_ns = 30LL * 1000000000;
    s.wait_ns = 10LL * 1000000000;
    s.retry_interval_ns = 100LL * 1000000;
    s.workload = WORKLOAD_COUNTER;
    struct run_env env = {.redis_host = host, .redis_port = port};
    struct run_result *res = malloc(sizeof *res);
    double rate = -1;
    if (res && runner_run(&s, lock_find("redis-lua"), &env, &lab_stop, res, err) == 0 &&
        res->verdict == VERDICT_SAFE)
        rate = res->throughput_per_s;
    else if (res && !err->code)
        lab_err_set(err, EIO, "locklab run ended %s: %s", verdict_name(res->verdict),
                    res->first_error);
    free(res);
    return rate;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int bench_overhead(int argc, char **argv)
{
    static const struct option longopts[] = {{"seconds", required_argument, NULL, 's'},
                                              {"rounds", required_argument, NULL, 'n'},
                                              {"min-ratio", required_argument, NULL, 'm'},
                                              {"redis", required_argument, NULL, 'r'},
                                              {"help", no_argument, NULL, 'h'},
                                              {NULL, 0, NULL, 0}};
    double seconds = 3, min_ratio = 0.90;
    int rounds = 5, ch;
    const char *redis = NULL;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (ch) {
        case 's': seconds = strtod(optarg, &end); break;
        case 'n': rounds = (int)strtol(optarg, &end, 10); break;
        case 'm': min_ratio = strtod(optarg, &end); break;
        case 'r': redis = optarg; break;
        case 'h': bench_usage(stdout); return LAB_EXIT_OK;
        default:
            fprintf(stderr, "locklab: bench overhead: unknown or incomplete option '%s'\n\n",
                    argv[optind - 1]);
            bench_usage(stderr);
            return LAB_EXIT_USAGE;
        }
        if (end && *end) {
            fprintf(stderr, "locklab: bench overhead: '%s' is not a number\n", optarg);
            return LAB_EXIT_USAGE;
        }
    }
    if (optind < argc || seconds <= 0 || seconds > 600 || rounds < 1 ||
        rounds > BENCH_MAX_ROUNDS || min_ratio < 0) {
        fprintf(stderr, "locklab: bench overhead: bad arguments (seconds 0..600, rounds 1..%d)\n",
                BENCH_MAX_ROUNDS);
        return LAB_EXIT_USAGE;
    }
    char bin[PATH_MAX + 32];
    if (bare_path(bin, sizeof bin) != 0) {
        fprintf(stderr, "locklab: the bare loop %s is missing; build it (make)\n", bin);
        return LAB_EXIT_ENV;
    }
    stop_install();
    struct backends b;
    struct lab_err err = {0};
    if (backends_start(&b, true, false, 0, redis, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        return LAB_EXIT_ENV;
    }
    printf("overhead: redis-lua cycle (SET NX PX + EVALSHA), 1 client, %d rounds of %.1f s, "
           "Redis %s:%d\n%-6s %14s %14s %8s\n",
           rounds, seconds, b.redis_host, b.redis_port, "round", "bare cyc/s", "locklab cyc/s",
           "ratio");
    double bare[BENCH_MAX_ROUNDS], lab[BENCH_MAX_ROUNDS];
    int code = LAB_EXIT_OK, done = 0;
    for (int i = 0; i < rounds && !lab_stop; i++) {
        for (int k = 0; k < 2; k++) {
            if ((i + k) % 2 == 0)
                bare[i] = run_bare(bin, b.redis_host, b.redis_port, seconds);
            else
                lab[i] = run_locklab(b.redis_host, b.redis_port, seconds, &err);
        }
        if (lab_stop)
            break;
        if (bare[i] < 0 || lab[i] < 0) {
            fprintf(stderr, "locklab: round %d failed: %s\n", i + 1,
                    bare[i] < 0 ? "the bare loop did not complete" : err.msg);
            code = LAB_EXIT_ENV;
            break;
        }
        printf("%-6d %14.0f %14.0f %8.3f\n", i + 1, bare[i], lab[i], lab[i] / bare[i]);
        fflush(stdout);
        done++;
    }
    backends_stop(&b);
    if (lab_stop)
        return LAB_EXIT_INTERRUPTED;
    if (code != LAB_EXIT_OK || done == 0)
        return code ? code : LAB_EXIT_ENV;
    double mb = median(bare, done), ml = median(lab, done), ratio = ml / mb;
    printf("median %14.0f %14.0f %8.3f  (bar %.2f: %s)\n", mb, ml, ratio, min_ratio,
           ratio >= min_ratio ? "ok" : "FAIL");
    return ratio >= min_ratio ? LAB_EXIT_OK : LAB_EXIT_EXPECT;
}

int cmd_bench(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        bench_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? LAB_EXIT_USAGE : LAB_EXIT_OK;
    }
    if (!strcmp(argv[1], "overhead"))
        return bench_overhead(argc - 1, argv + 1);
    fprintf(stderr, "locklab: unknown benchmark '%s' (known: overhead)\n", argv[1]);
    return LAB_EXIT_USAGE;
}
