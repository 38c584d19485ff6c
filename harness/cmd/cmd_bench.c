/*
 * cmd_bench.c - `locklab bench overhead` and `locklab bench handoff` (and the
 * dispatch to `locklab bench adapter`, in cmd_bench_adapter.c).
 *
 * overhead: how much does the harness cost? Runs the bare hiredis loop
 * (bench/bare_redis_loop.c, built as locklab-bare-redis next to locklab) and
 * locklab's own runner with `redis-lua`, one client, the counter workload and
 * no business time, against the same embedded Redis (or the ZooKeeper pair,
 * bare_zk_loop.c and zk-sequential; or MariaDB's, bare_mysql_loop.c and
 * mysql-get-lock), alternating which goes first in each
 * round so drift on a noisy machine hits both alike. Prints each round's
 * cycle rates, then the medians and their ratio; exits 1 when the ratio is
 * below the bar (default 0.90), so it can gate CI.
 *
 * handoff: how long does the lock sit free while someone waits for it?
 * Measures the handoff gap of polling, backoff and pub/sub designs next to
 * the loopback round trip; exits 1 when redisson's is more than the bar.
 *
 * Both parse their numbers with bench_scan(), and build their scenarios on
 * the scenario option table's defaults (scenario_defaults()).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "handoff_split.h"
#include "lock.h"
#include "redis_conn.h"
#include "backends.h"
#include "bench.h"
#include "cli.h"
#include "runner.h"
#include "scenario_load.h"
#include "stop.h"
#include "subproc.h"

#define BENCH_MAX_ROUNDS 50

/* The stores `bench overhead` measures (a bench_impl), joined by sep, the
 * last by last_sep: "redis|zookeeper", "redis (default), zookeeper or ...". */
static void bench_stores(FILE *f, const char *sep, const char *last_sep, const char *first_note)
{
    int n = 0, k = 0;
    for (int i = 0; i < backend_count; i++)
        n += backend_registry[i]->bench_impl != NULL;
    for (int i = 0; i < backend_count; i++)
        if (backend_registry[i]->bench_impl) {
            fprintf(f, "%s%s%s", k == 0 ? "" : k == n - 1 ? last_sep : sep,
                    backend_registry[i]->name, k == 0 ? first_note : "");
            k++;
        }
}

static void bench_usage(FILE *f)
{
    fprintf(f, "usage: locklab bench overhead [--backend ");
    bench_stores(f, "|", "|", "");
    fprintf(f, "] [--seconds S]\n"
               "                              [--rounds R] [--min-ratio X] [--redis HOST:PORT]\n");
    for (int i = 0; i < backend_count; i++)
        if (backend_registry[i]->bench_flag)
            fprintf(f, "                              [--%s]\n", backend_registry[i]->bench_flag);
    fprintf(f,
            "       locklab bench handoff [--clients N] [--rounds R] [--max-rtts X]\n"
            "                             [--redis HOST:PORT]\n"
            "       locklab bench adapter [--cycles N] [--rounds R] [--max-us X]\n"
            "       locklab bench ceiling [--clients N[,N...]] [--seconds S]\n"
            "                             [--backend B] [--force-sync]\n"
            "\n"
            "overhead: compare a bare client loop with locklab doing the same cycle with\n"
            "one client, the counter workload and no business time, on the same embedded\n"
            "server:\n");
    for (int i = 0; i < backend_count; i++)
        if (backend_registry[i]->bench_impl)
            fputs(backend_registry[i]->bench_usage, f);
    fprintf(f,
            "Prints both cycle rates per round, their medians and the ratio\n"
            "locklab/bare; exits 1 when the ratio is below --min-ratio.\n"
            "\n"
            "  --seconds S     length of each measurement (default 3)\n"
            "  --rounds R      rounds, each measuring both (default 5, at most %d)\n"
            "  --min-ratio X   the bar (default 0.90)\n"
            "  --redis H:P     use this Redis instead of an embedded one\n"
            "  --backend B     ",
            BENCH_MAX_ROUNDS);
    bench_stores(f, ", ", " or ", " (default)");
    fprintf(f, "\n");
    for (int i = 0; i < backend_count; i++)
        if (backend_registry[i]->bench_flag)
            fprintf(f, "  --%-14s%s\n", backend_registry[i]->bench_flag,
                    backend_registry[i]->bench_flag_help);
    fprintf(f,
            "\n"
            "handoff: the gap from a holder's exit to a waiting client's entry, for\n"
            "polling, backoff and pub/sub (redisson), against the loopback round trip;\n"
            "`locklab bench handoff --help` describes it.\n"
            "\n"
            "adapter: the adapter protocol's own cost per request/reply exchange, with a\n"
            "trivial adapter; `locklab bench adapter --help` describes it.\n"
            "\n"
            "ceiling: locklab's cycle rate at N clients on per-client keys beside the\n"
            "store's own benchmark at the same N; `locklab bench ceiling --help`.\n");
}

/* Path of a bare loop binary: next to this executable. */
static int bare_path(const char *name, char *out, size_t n)
{
    return subproc_sibling(name, X_OK, out, n);
}

/* Run locklab's runner once with impl on the given backends; acquire+release
 * cycles per second, or -1. */
static double run_locklab(const char *impl, struct scenario *s, double seconds,
                          struct lab_err *err)
{
    s->max_duration_ns = (int64_t)(seconds * 1e9);
    struct run_result *res = bench_run(s, impl, err);
    double rate = res ? res->throughput_per_s : -1;
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
    double seconds = 3, min_ratio = 0.90, nrounds = 5;
    const char *backend = "redis", *redis = NULL;
    int store_flag[BACKEND_MAX] = {0}; /* each store's bench_flag, given */
    struct bench_opt opts[BENCH_MAX_OPTS + 1] = {{"seconds", .num = &seconds},
                                                 {"rounds", .num = &nrounds, .integer = true},
                                                 {"min-ratio", .num = &min_ratio},
                                                 {"redis", .str = &redis},
                                                 {"backend", .str = &backend}};
    for (int i = 0, n = 5; i < backend_count && n < BENCH_MAX_OPTS; i++)
        if (backend_registry[i]->bench_flag)
            opts[n++] = (struct bench_opt){backend_registry[i]->bench_flag,
                                           .flag = &store_flag[i]};
    int parsed = bench_getopt("overhead", argc, argv, opts, bench_usage);
    if (parsed >= 0)
        return parsed;
    const struct backend_ops *be = backend_find(backend);
    if (!be || !be->bench_impl) {
        fprintf(stderr, "locklab: bench overhead: --backend is one of");
        for (int i = 0; i < backend_count; i++)
            if (backend_registry[i]->bench_impl)
                fprintf(stderr, " %s", backend_registry[i]->name);
        fprintf(stderr, ", not '%s'\n", backend);
        return LAB_EXIT_USAGE;
    }
    if (optind < argc || seconds <= 0 || seconds > 600 || nrounds < 1 ||
        nrounds > BENCH_MAX_ROUNDS || min_ratio < 0) {
        fprintf(stderr, "locklab: bench overhead: bad arguments (seconds 0..600, rounds 1..%d)\n",
                BENCH_MAX_ROUNDS);
        return LAB_EXIT_USAGE;
    }
    int rounds = (int)nrounds;
    char bin[PATH_MAX + 32];
    if (bare_path(be->bench_bare_loop, bin, sizeof bin) != 0) {
        fprintf(stderr, "locklab: the bare loop %s is missing; build it (make)\n", bin);
        return LAB_EXIT_ENV;
    }
    const char *impl = be->bench_impl;
    static struct scenario s;
    bench_scenario(&s, "overhead", 1, seconds);
    int flag_on = store_flag[backend_index(be)];
    if (be->bench_settings)
        be->bench_settings(&s, flag_on);
    stop_install();
    struct backends b;
    backends_init(&b);
    backends_plan_one(&b, &s, lock_find(impl));
    if (redis)
        b.external[backend_index(backend_find("redis"))] = redis;
    struct lab_err err = {0};
    if (backends_start(&b, &lab_stop, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        return LAB_EXIT_ENV;
    }
    struct lock_servers sv;
    be->servers(lock_find(impl), &s, &sv);
    printf("overhead: %s, 1 client, %d rounds of %.1f s,\n%s %s%s\n", be->bench_cycle, rounds,
           seconds, be->title, sv.conn,
           flag_on ? be->bench_flag_note : "");
    /* warm the server up (a JVM compiles its hot paths in the first seconds) */
    if (bench_run_bare(bin, sv.conn, be->bench_warmup_s, 0) < 0)
        fprintf(stderr, "locklab: warning: the warm-up loop failed\n");
    printf("%-6s %14s %14s %8s\n", "round", "bare cyc/s", "locklab cyc/s", "ratio");
    double bare[BENCH_MAX_ROUNDS], lab[BENCH_MAX_ROUNDS];
    int code = LAB_EXIT_OK, done = 0;
    for (int i = 0; i < rounds && !lab_stop; i++) {
        for (int k = 0; k < 2; k++) {
            if ((i + k) % 2 == 0)
                bare[i] = bench_run_bare(bin, sv.conn, seconds, 0);
            else
                lab[i] = run_locklab(impl, &s, seconds, &err);
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

/* Median loopback round trip to Redis (PING), in microseconds, or -1. */
static double ping_rtt_us(const char *host, int port, int n, struct lab_err *err)
{
    redisContext *c = redis_conn_open("Redis", host, port, 5000, err);
    if (!c)
        return -1;
    double *v = malloc((size_t)n * sizeof *v);
    int got = 0;
    for (; v && got < n; got++) {
        int64_t t0 = lab_now_ns();
        redisReply *r = redisCommand(c, "PING");
        if (!r)
            break;
        freeReplyObject(r);
        v[got] = (double)(lab_now_ns() - t0) / 1e3;
    }
    redisFree(c);
    double m = got == n ? median(v, n) : -1;
    if (m < 0)
        lab_err_set(err, EIO, "PING failed");
    free(v);
    return m;
}

static void handoff_usage(FILE *f)
{
    fprintf(f,
            "usage: locklab bench handoff [--clients N] [--rounds R] [--max-rtts X]\n"
            "                             [--redis HOST:PORT]\n"
            "\n"
            "N clients (default 16) on one hot key, each acquiring once per round (R rounds,\n"
            "default 20), 200 us of business time, a holder lingering 100 ms before it\n"
            "exits: the handoff gap (a holder's exit to the entry of a client that was\n"
            "waiting) of "
            "redis-lua polling every 100 ms, redis-lua with exponential backoff (1 ms to\n"
            "32 ms, jittered) and redisson (woken by pub/sub), next to the loopback round\n"
            "trip measured in the same run: an idle PING before, and each run's median\n"
            "release (one round trip under the run's own load). For redisson, the split of\n"
            "the handoffs a waiter was woken for (p50 and mean): delivery (the release sent to\n"
            "the unlock message at the waiter's socket), scheduling (to the waiter's next\n"
            "attempt sent: its process's wake-up), the winning acquire (to the grant), and\n"
            "the attempts woken waiters lost per handoff. Exits 1 when redisson's\n"
            "median handoff is more than --max-rtts of its in-run round trips (default 5).\n");
}

static int bench_handoff(int argc, char **argv)
{
    double max_rtts = 5, nclients = 16, nrounds = 20;
    const char *redis = NULL;
    const struct bench_opt opts[] = {{"clients", .num = &nclients, .integer = true},
                                     {"rounds", .num = &nrounds, .integer = true},
                                     {"max-rtts", .num = &max_rtts},
                                     {"redis", .str = &redis},
                                     {NULL}};
    int parsed = bench_getopt("handoff", argc, argv, opts, handoff_usage);
    if (parsed >= 0)
        return parsed;
    if (optind < argc || nclients < 2 || nclients > SCN_MAX_CLIENTS || nrounds < 1 ||
        nrounds > 1000 || max_rtts <= 0) {
        fprintf(stderr, "locklab: bench handoff: bad arguments (clients 2..%d, rounds 1..1000)\n",
                SCN_MAX_CLIENTS);
        return LAB_EXIT_USAGE;
    }
    int clients = (int)nclients, rounds = (int)nrounds;
    stop_install();
    static struct scenario s;
    bench_scenario(&s, "handoff", clients, 60);
    const struct lock_ops *ref = lock_find("redis-lua");
    const struct backend_ops *be = backend_of(ref);
    struct backends b;
    backends_init(&b);
    backends_plan_one(&b, &s, ref);
    b.external[backend_index(be)] = redis;
    struct lab_err err = {0};
    if (backends_start(&b, &lab_stop, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        return LAB_EXIT_ENV;
    }
    struct lock_servers sv;
    be->servers(ref, &s, &sv);
    double rtt = ping_rtt_us(sv.node[0].host, sv.node[0].port, 2000, &err);
    printf("handoff: %d clients on one hot key, %d rounds of one acquire each, Redis %s\n"
           "idle loopback round trip (PING, median of 2000): %.1f us\n"
           "%-28s %9s %9s %9s %12s %9s\n",
           clients, rounds, sv.conn, rtt, "design", "handoffs", "p50 us",
           "p99 us", "release p50", "wake/rel");
    static const struct {
        const char *label, *impl;
        enum retry_kind retry;
        int64_t interval_ns;
    } runs[] = {{"redis-lua, 100 ms polling", "redis-lua", RETRY_FIXED, 100000000},
                {"redis-lua, backoff 1-32 ms", "redis-lua", RETRY_BACKOFF, 1000000},
                {"redisson (pub/sub)", "redisson", RETRY_FIXED, 100000000}};
    double redisson_p50 = -1, run_rtt = -1;
    int code = rtt > 0 ? LAB_EXIT_OK : LAB_EXIT_ENV;
    static struct hist handoff, release;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0] && code == LAB_EXIT_OK && !lab_stop; i++) {
        hist_init(&handoff);
        hist_init(&release);
        int64_t wakeups = 0, releases = 0;
        struct lock_stats split = {0};
        for (int r = 0; r < rounds && code == LAB_EXIT_OK && !lab_stop; r++) {
            /* one acquire per client: every grant after the first is a
             * handoff from a holder that leaves to a client that waited */
            bench_scenario(&s, "handoff", clients, 60);
            s.ops_per_client = 1;
            s.retry = runs[i].retry;
            s.retry_interval_ns = runs[i].interval_ns;
            s.business_ns = 200000;
            s.think_ns = 100000000; /* linger after the release: exiting is not part of a handoff */
            struct run_result *res = bench_run(&s, runs[i].impl, &err);
            if (!res) {
                code = lab_stop ? LAB_EXIT_INTERRUPTED : LAB_EXIT_ENV;
                break;
            }
            hist_merge(&handoff, &res->handoff);
            hist_merge(&release, &res->release);
            wakeups += res->stats.polls + res->stats.notifications;
            releases += res->released + res->release_not_owner;
            handoff_split_add(&split, &res->stats);
            free(res);
        }
        if (code != LAB_EXIT_OK)
            break;
        double p50 = (double)hist_percentile(&handoff, 50);
        double rel = (double)hist_percentile(&release, 50);
        printf("%-28s %9lld %9.0f %9lld %12.0f %9.2f\n", runs[i].label, (long long)handoff.total,
               p50, (long long)hist_percentile(&handoff, 99), rel,
               releases ? (double)wakeups / (double)releases : 0);
        if (split.split_handoffs > 0) {
            double n = (double)split.split_handoffs;
            printf("  split of %lld woken handoffs, p50 (mean) us: delivery %.0f (%.0f),\n"
                   "  scheduling %.0f (%.0f), winning acquire %.0f (%.0f); %.2f losing attempts"
                   " per handoff\n",
                   (long long)split.split_handoffs, handoff_split_p50(&split, HANDOFF_DELIVERY),
                   (double)split.split_delivery_ns / n / 1e3,
                   handoff_split_p50(&split, HANDOFF_SCHEDULING),
                   (double)split.split_scheduling_ns / n / 1e3,
                   handoff_split_p50(&split, HANDOFF_ACQUIRE),
                   (double)split.split_acquire_ns / n / 1e3, (double)split.split_lost / n);
        }
        fflush(stdout);
        if (!strcmp(runs[i].impl, "redisson")) {
            redisson_p50 = p50;
            run_rtt = rel;
        }
    }
    backends_stop(&b);
    if (lab_stop)
        return LAB_EXIT_INTERRUPTED;
    if (code != LAB_EXIT_OK) {
        fprintf(stderr, "locklab: bench handoff: %s\n", err.msg);
        return code;
    }
    /* The bar is in round trips as the clients saw them in the same run: a
     * redisson release is one EVALSHA, one round trip under the same load
     * (16 processes on the machine's cores), where an idle PING is not. */
    double ratio = redisson_p50 / run_rtt;
    printf("redisson p50 handoff = %.1f in-run round trips (release p50 %.0f us), "
           "%.1f idle PINGs (bar %.1f in-run round trips: %s)\n",
           ratio, run_rtt, redisson_p50 / rtt, max_rtts, ratio <= max_rtts ? "ok" : "FAIL");
    return ratio <= max_rtts ? LAB_EXIT_OK : LAB_EXIT_EXPECT;
}

int cmd_bench(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        bench_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? LAB_EXIT_USAGE : LAB_EXIT_OK;
    }
    if (!strcmp(argv[1], "overhead"))
        return bench_overhead(argc - 1, argv + 1);
    if (!strcmp(argv[1], "handoff"))
        return bench_handoff(argc - 1, argv + 1);
    if (!strcmp(argv[1], "adapter"))
        return bench_adapter(argc - 1, argv + 1);
    if (!strcmp(argv[1], "ceiling"))
        return bench_ceiling(argc - 1, argv + 1);
    fprintf(stderr, "locklab: unknown benchmark '%s' (known: overhead, handoff, adapter, "
                    "ceiling)\n",
            argv[1]);
    return LAB_EXIT_USAGE;
}
