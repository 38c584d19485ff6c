/*
 * cmd_bench_adapter.c - `locklab bench adapter`: what the adapter protocol
 * itself costs.
 *
 * Drives the trivial adapter (bench/null_adapter.c, built as
 * locklab-adapter-null next to locklab), which grants and releases at once
 * without a server, through the very hooks a client uses for a declared
 * adapter (impls/adapter/adapter.c): a request line written to its stdin, a reply
 * line read from its stdout, parsed. An exchange is one request and its
 * reply; a cycle (acquire + release) is two. Each round times a number of
 * cycles; the command prints every round's microseconds per exchange and
 * their median, and exits 1 when the median is above the bar (default 50
 * us), so it can gate CI. Both processes compete for the machine's cores:
 * on a shared machine, expect noise between rounds.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"
#include "cli.h"
#include "stop.h"
#include "subproc.h"

#define ADAPTER_BENCH_MAX_ROUNDS 50

static void adapter_usage(FILE *f)
{
    fprintf(f,
            "usage: locklab bench adapter [--cycles N] [--rounds R] [--max-us X]\n"
            "\n"
            "The adapter protocol's own cost: acquire/release cycles against the\n"
            "trivial adapter locklab-adapter-null (grants at once, no server), through\n"
            "the same code a client uses for a declared adapter. Prints each round's\n"
            "microseconds per exchange (one request line and its reply) and their\n"
            "median; exits 1 when the median is above --max-us.\n"
            "\n"
            "  --cycles N    acquire+release cycles per round (default 20000)\n"
            "  --rounds R    rounds (default 5, at most %d)\n"
            "  --max-us X    the bar, microseconds per exchange (default 50)\n",
            ADAPTER_BENCH_MAX_ROUNDS);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int bench_adapter(int argc, char **argv)
{
    static const struct option longopts[] = {{"cycles", required_argument, NULL, 'c'},
                                             {"rounds", required_argument, NULL, 'r'},
                                             {"max-us", required_argument, NULL, 'm'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    long cycles = 20000, rounds = 5;
    double max_us = 50;
    int ch;
    char *end;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        end = NULL;
        if (ch == 'h') {
            adapter_usage(stdout);
            return LAB_EXIT_OK;
        } else if (ch == 'c') {
            cycles = strtol(optarg, &end, 10);
        } else if (ch == 'r') {
            rounds = strtol(optarg, &end, 10);
        } else if (ch == 'm') {
            max_us = strtod(optarg, &end);
        }
        if (ch == '?' || (end && *end) || cycles < 1 || rounds < 1 ||
            rounds > ADAPTER_BENCH_MAX_ROUNDS || max_us <= 0) {
            fprintf(stderr, "locklab: bench adapter: bad option '%s'\n\n", argv[optind - 1]);
            adapter_usage(stderr);
            return LAB_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "locklab: bench adapter: unexpected argument '%s'\n", argv[optind]);
        return LAB_EXIT_USAGE;
    }

    struct adapter_spec spec = {.name = "null-adapter", .backend = "redis", .store = "redis",
                                .argc = 1, .dir = "/", .ready_timeout_ns = 10000000000LL,
                                .grace_ns = 5000000000LL, .etcd_keepalive = -1};
    if (subproc_sibling("locklab-adapter-null", X_OK, spec.argv, sizeof spec.argv) != 0) {
        fprintf(stderr, "locklab: bench adapter: cannot run %s (build it: cmake --build)\n",
                spec.argv);
        return LAB_EXIT_ENV;
    }
    struct lock_ops ops;
    if (adapter_ops_init(&ops, &spec) != 0)
        return LAB_EXIT_ENV;
    struct lock_servers sv = {0};
    struct lock_stats stats = {0};
    struct lock_env env = {.servers = &sv, .ttl_ns = 10000000000LL, .options = &spec,
                           .clients = 1, .stop = &lab_stop, .stats = &stats};
    struct lab_err err = {0};
    struct lock_client *c = NULL;
    stop_install();
    if (ops.open(&c, &env, &err) != 0) {
        fprintf(stderr, "locklab: bench adapter: %s\n", err.msg);
        if (c)
            ops.close(c);
        return LAB_EXIT_ENV;
    }
    printf("adapter protocol: %ld acquire+release cycles per round against %s\n", cycles,
           spec.argv);
    double us[ADAPTER_BENCH_MAX_ROUNDS];
    int done = 0, rc = LAB_EXIT_OK;
    for (; done < rounds && !lab_stop && rc == LAB_EXIT_OK; done++) {
        int64_t t0 = lab_now_ns();
        for (long i = 0; i < cycles && rc == LAB_EXIT_OK; i++)
            if (ops.acquire(c, "bench", 1000000000LL, &err) != LOCK_GRANTED ||
                ops.release(c, "bench", &err) != RELEASE_OK)
                rc = LAB_EXIT_ENV;
        us[done] = (double)(lab_now_ns() - t0) / 1e3 / (double)(2 * cycles);
        if (rc == LAB_EXIT_OK)
            printf("  round %d: %.2f us per exchange (%.0f cycles/s)\n", done + 1, us[done],
                   1e6 / (2 * us[done]));
    }
    ops.close(c);
    if (rc != LAB_EXIT_OK) {
        fprintf(stderr, "locklab: bench adapter: %s\n", err.msg);
        return rc;
    }
    if (done == 0)
        return LAB_EXIT_INTERRUPTED;
    qsort(us, (size_t)done, sizeof us[0], cmp_double);
    double med = done % 2 ? us[done / 2] : (us[done / 2 - 1] + us[done / 2]) / 2;
    printf("median: %.2f us per exchange over %d rounds (bar %.0f us): %s\n", med, done, max_us,
           med <= max_us ? "ok" : "ABOVE THE BAR");
    return med <= max_us ? LAB_EXIT_OK : LAB_EXIT_EXPECT;
}
