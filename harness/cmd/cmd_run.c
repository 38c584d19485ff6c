/*
 * cmd_run.c - `locklab run`: load every scenario (all of them validated
 * before anything starts), start the servers they need, run each selected
 * implementation through each scenario, print the table as rows finish,
 * and write the results directory.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "backend.h"
#include "backends.h"
#include "cli.h"
#include "failpoint_env.h"
#include "plot.h"
#include "report.h"
#include "runner.h"
#include "scenario.h"
#include "servers.h"
#include "stop.h"

#define MAX_SCENARIOS 64

struct run_opts {
    const char *impls;  /* --impl a,b: replaces each scenario's impls */
    int clients;        /* --clients N: 0 = as the scenario says */
    const char *out;    /* --out DIR: results root */
    const char *redis;  /* --redis HOST:PORT or $LOCKLAB_REDIS */
    const char *zk;     /* --zk HOST:PORT[,...] or $LOCKLAB_ZK */
    const char *junit;  /* --junit FILE */
    bool quiet;         /* --quiet */
    bool no_plot;       /* --no-plot */
};

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: locklab run SCENARIO.yaml... [options]\n"
            "\n"
            "Run each scenario against its implementations and print one row per\n"
            "implementation: verdict, throughput, acquire latency, safety figures.\n"
            "\n"
            "options:\n"
            "  --impl a,b         run these implementations instead of the scenario's list\n"
            "  --clients N        override the scenario's client count (1..%d)\n"
            "  --out DIR          results root (default: results); the run goes to\n"
            "                     DIR/<run-id>/ and DIR/latest points at it\n"
            "  --redis HOST:PORT  use this Redis as the lock store instead of an embedded\n"
            "                     one (also $LOCKLAB_REDIS); the stock store stays embedded\n"
            "  --zk H:P[,H:P...]  use this ZooKeeper ensemble instead of embedded servers\n"
            "                     (also $LOCKLAB_ZK)\n"
            "  --junit FILE       also write the JUnit XML report to FILE\n"
            "  --quiet            no progress and no table: only errors and failures\n"
            "  --no-plot          do not draw the plots (drawn when gnuplot is installed)\n"
            "  -h, --help         this text\n"
            "\n"
            "exit codes: 0 every expectation met, 1 an expectation failed, 2 bad usage or\n"
            "scenario (nothing started), 3 a server would not start or cannot be reached,\n"
            "130 interrupted (results so far written, marked incomplete)\n",
            SCN_MAX_CLIENTS);
}

/* Replace s->impls with the --impl list. 0 or -1 (message printed). */
static int apply_impl_filter(struct scenario *s, const char *list)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    s->n_impls = 0;
    for (char *save, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (!lock_find(name)) {
            fprintf(stderr, "locklab: --impl: unknown implementation '%s' (run `locklab list` "
                            "to see them)\n", name);
            return -1;
        }
        if (s->n_impls == SCN_MAX_IMPLS) {
            fprintf(stderr, "locklab: --impl: more than %d implementations\n", SCN_MAX_IMPLS);
            return -1;
        }
        for (int i = 0; i < s->n_impls; i++)
            if (strcmp(s->impls[i], name) == 0) {
                fprintf(stderr, "locklab: --impl: '%s' is listed twice (its results would share "
                                "files)\n", name);
                return -1;
            }
        snprintf(s->impls[s->n_impls++], SCN_NAME_MAX, "%s", name);
    }
    if (s->n_impls == 0) {
        fprintf(stderr, "locklab: --impl: the list is empty\n");
        return -1;
    }
    return 0;
}

/* Each comma-separated part of a ZooKeeper connection string is HOST:PORT. */
static bool bad_zk_hosts(const char *s)
{
    char buf[256], host[64];
    int port;
    if (strlen(s) >= sizeof buf)
        return true;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
        if (lab_parse_hostport(p, host, sizeof host, &port) != 0)
            return true;
    return buf[0] == '\0' || s[strlen(s) - 1] == ',';
}

static int parse_opts(int argc, char **argv, struct run_opts *o)
{
    static const struct option longopts[] = {
        {"impl", required_argument, NULL, 'i'},  {"clients", required_argument, NULL, 'c'},
        {"out", required_argument, NULL, 'o'},   {"redis", required_argument, NULL, 'r'},
        {"junit", required_argument, NULL, 'j'}, {"quiet", no_argument, NULL, 'q'},
        {"zk", required_argument, NULL, 'z'},     {"no-plot", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->out = "results";
    o->redis = getenv("LOCKLAB_REDIS");
    if (o->redis && !*o->redis)
        o->redis = NULL;
    o->zk = getenv("LOCKLAB_ZK");
    if (o->zk && !*o->zk)
        o->zk = NULL;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
        char *end;
        switch (ch) {
        case 'i': o->impls = optarg; break;
        case 'c':
            o->clients = (int)strtol(optarg, &end, 10);
            if (*end || o->clients < 1 || o->clients > SCN_MAX_CLIENTS) {
                fprintf(stderr, "locklab: --clients wants a number from 1 to %d, not '%s'\n",
                        SCN_MAX_CLIENTS, optarg);
                return -1;
            }
            break;
        case 'o': o->out = optarg; break;
        case 'r': o->redis = optarg; break;
        case 'j': o->junit = optarg; break;
        case 'z': o->zk = optarg; break;
        case 'P': o->no_plot = true; break;
        case 'q': o->quiet = true; break;
        case 'h': run_usage(stdout); return 1;
        default:
            fprintf(stderr, "locklab: run: unknown or incomplete option '%s'\n\n",
                    argv[optind - 1]);
            run_usage(stderr);
            return -1;
        }
    }
    if (o->redis) {
        char host[64];
        int port;
        if (lab_parse_hostport(o->redis, host, sizeof host, &port) != 0) {
            fprintf(stderr, "locklab: bad Redis address '%s' (expected HOST:PORT)\n", o->redis);
            return -1;
        }
    }
    if (o->zk && bad_zk_hosts(o->zk)) {
        fprintf(stderr, "locklab: bad ZooKeeper address '%s' (expected HOST:PORT[,HOST:PORT...])\n",
                o->zk);
        return -1;
    }
    return 0;
}

#define STEM_MAX (SCN_NAME_MAX + 32)

static bool is_sweep(const struct scenario *s)
{
    return s->n_client_steps > 1 || s->n_key_modes > 1;
}

/* Every file stem scenario t writes when it is named name (report_stem):
 * its name, or one per step of a sweep. Returns how many. */
static int stems(const struct scenario *t, const char *name,
                 char (*out)[STEM_MAX] /* [4 * SCN_MAX_STEPS] */)
{
    int n = 0;
    for (int k = 0; k < t->n_key_modes; k++)
        for (int c = 0; c < t->n_client_steps; c++)
            for (int f = 0; f < t->n_fence_modes; f++)
                report_stem(out[n++], STEM_MAX, name, is_sweep(t), t->key_modes[k],
                            t->client_steps[c], t->fence_modes[f]);
    return n;
}

/* Would scenario t, named name, share a file with one of the first n? */
static bool name_taken(struct scenario **scns, int n, const struct scenario *t, const char *name)
{
    char mine[4 * SCN_MAX_STEPS][STEM_MAX], theirs[4 * SCN_MAX_STEPS][STEM_MAX];
    int n_mine = stems(t, name, mine);
    for (int i = 0; i < n; i++) {
        if (scns[i] == t)
            continue;
        if (strcmp(scns[i]->name, name) == 0) /* the plots are named after the scenario */
            return true;
        int n_theirs = stems(scns[i], scns[i]->name, theirs);
        for (int a = 0; a < n_mine; a++)
            for (int b = 0; b < n_theirs; b++)
                if (strcmp(mine[a], theirs[b]) == 0)
                    return true;
    }
    return false;
}

/* Every result gets files of its own, named after its scenario: a scenario
 * whose files an earlier one of this invocation would write too (the same
 * file twice, two files with one name, a name equal to a sweep step's
 * stem) runs as "<name>-2", "-3", ... */
static void unique_names(struct scenario **scns, int n)
{
    for (int i = 1; i < n; i++) {
        if (!name_taken(scns, i, scns[i], scns[i]->name))
            continue;
        char base[SCN_NAME_MAX], name[SCN_NAME_MAX + 16];
        snprintf(base, sizeof base, "%s", scns[i]->name);
        for (int k = 2;; k++) {
            snprintf(name, sizeof name, "%.*s-%d", SCN_NAME_MAX - 12, base, k);
            if (!name_taken(scns, n, scns[i], name))
                break;
        }
        memcpy(scns[i]->name, name, strlen(name) + 1); /* at most 52 + 1 + 10 chars */
        fprintf(stderr,
                "locklab: %s: scenario name '%s' would share result files with an earlier "
                "scenario of this run: runs as '%s'\n",
                scns[i]->path, base, name);
    }
}

/* Load every scenario named on the command line; all or nothing. */
static int load_all(int argc, char **argv, const struct run_opts *o, struct scenario **scns,
                    int *n)
{
    *n = 0;
    for (int i = optind; i < argc; i++) {
        if (*n == MAX_SCENARIOS) {
            fprintf(stderr, "locklab: at most %d scenarios per run\n", MAX_SCENARIOS);
            return -1;
        }
        struct scenario *s = calloc(1, sizeof *s);
        char err[1024];
        if (!s || scenario_load(argv[i], s, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", s ? err : "locklab: out of memory");
            free(s);
            return -1;
        }
        scns[(*n)++] = s;
        if (o->impls && apply_impl_filter(s, o->impls) != 0)
            return -1;
        if (o->clients) {
            s->clients = s->client_steps[0] = o->clients;
            s->n_client_steps = 1;
        }
    }
    if (*n == 0) {
        fprintf(stderr, "locklab: run: no scenario given\n\n");
        run_usage(stderr);
        return -1;
    }
    unique_names(scns, *n);
    struct lab_err fp_err = {0};
    if (failpoint_check(&fp_err) != 0) {
        fprintf(stderr, "locklab: %s\n", fp_err.msg);
        return -1;
    }
    return 0;
}

/* Which servers the scenarios need: a lock store, the stock store, and how
 * many independent masters (the most any scenario with redlock asks for). */
static void needs(struct scenario **scns, int n, bool *redis, bool *stock, int *masters,
                  const struct scenario **zk)
{
    *redis = *stock = false;
    *masters = 0;
    *zk = NULL; /* the scenario whose ensemble is the largest, when any needs one */
    for (int i = 0; i < n; i++) {
        *stock |= scns[i]->workload == WORKLOAD_STOCK;
        for (int j = 0; j < scns[i]->n_impls; j++) {
            const struct lock_ops *ops = lock_find(scns[i]->impls[j]);
            const struct backend_ops *be = backend_of(ops);
            *redis |= be == &backend_redis;
            if (ops->caps & LOCK_CAP_MULTI_MASTER && scns[i]->redis_masters > *masters)
                *masters = scns[i]->redis_masters;
            if (be == &backend_zookeeper &&
                (!*zk || scns[i]->zk_ensemble > (*zk)->zk_ensemble))
                *zk = scns[i];
        }
    }
}

/* Run one implementation at one step of a scenario, print its row and add it
 * to the report; returns the updated exit code. */
static int run_step(struct scenario *s, const struct lock_ops *ops, const struct run_env *env,
                    struct run_result *res, struct report *rep, const struct run_opts *o,
                    int code)
{
    struct lab_err err = {0};
    if (runner_run(s, ops, env, &lab_stop, res, &err) != 0) {
        if (lab_stop)
            return code;
        fprintf(stderr, "locklab: %s on %s: %s\n", ops->name, s->name, err.msg);
        return LAB_EXIT_ENV;
    }
    res->sweep = is_sweep(s);
    if (!o->quiet || !res->pass)
        report_print_row(o->quiet ? stderr : stdout, res);
    if (!res->pass && code == LAB_EXIT_OK)
        code = LAB_EXIT_EXPECT;
    if (report_add(rep, res, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        return LAB_EXIT_ENV;
    }
    return code;
}

/* run_step with workload.fencing off and/or on, as the scenario sweeps it. */
static int run_one(struct scenario *s, const struct lock_ops *ops, const struct run_env *env,
                   struct run_result *res, struct report *rep, const struct run_opts *o, int code)
{
    for (int f = 0; f < s->n_fence_modes && !lab_stop && code != LAB_EXIT_ENV; f++) {
        s->fencing = s->fence_modes[f];
        code = run_step(s, ops, env, res, rep, o, code);
    }
    return code;
}

/* Run everything; returns the exit code. */
static int run_all(struct scenario **scns, int n, const struct run_opts *o, struct backends *b,
                   const struct scenario *zk)
{
    struct report rep;
    struct lab_err err = {0};
    if (report_open(&rep, o->out, (const struct scenario *const *)scns, n, o->junit, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        return LAB_EXIT_ENV;
    }
    struct run_env env = {
        .redis_host = b->redis_host,
        .redis_port = b->redis_port,
        .zk_hosts = b->zk_hosts[0] ? b->zk_hosts : NULL,
        .n_masters = b->n_masters,
        .masters = b->masters,
        .stock = {.host = b->stock_srv.host, .port = b->stock_srv.port},
        .progress = !o->quiet && isatty(2),
        .redis_external = o->redis != NULL,
        .zk_external = o->zk != NULL,
        .zk_ensemble = b->n_zk,
        .zk_force_sync = zk && zk->zk_force_sync,
    };
    struct run_result *res = malloc(sizeof *res);
    int code = LAB_EXIT_OK;
    for (int i = 0; res && i < n && !lab_stop && code != LAB_EXIT_ENV; i++) {
        if (!o->quiet)
            report_print_heading(stdout, scns[i], scns[i]->clients);
        int first = rep.n_results;
        for (int j = 0; j < scns[i]->n_impls && !lab_stop && code != LAB_EXIT_ENV; j++) {
            const struct lock_ops *ops = lock_find(scns[i]->impls[j]);
            for (int k = 0; k < scns[i]->n_key_modes && !lab_stop && code != LAB_EXIT_ENV; k++)
                for (int c = 0; c < scns[i]->n_client_steps && !lab_stop && code != LAB_EXIT_ENV;
                     c++) {
                    scns[i]->clients = scns[i]->client_steps[c];
                    scns[i]->per_client_keys = scns[i]->key_modes[k];
                    code = run_one(scns[i], ops, &env, res, &rep, o, code);
                }
        }
        if (!o->quiet && rep.n_results - first > 1 && is_sweep(scns[i]))
            report_print_comparison(stdout, (const struct run_result *const *)rep.results + first,
                                    rep.n_results - first);
    }
    free(res);
    bool complete = !lab_stop && code != LAB_EXIT_ENV;
    if (report_finish(&rep, complete, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        code = LAB_EXIT_ENV;
    }
    if (!o->quiet || lab_stop)
        fprintf(lab_stop ? stderr : stdout, "\nresults: %s/summary.json%s\n", rep.dir,
                complete ? "" : " (incomplete)");
    /* plots come for free when gnuplot is installed; their failure is worth a
     * warning, never a different verdict */
    if (!lab_stop && rep.n_results > 0 && !o->no_plot && servers_binary_exists("gnuplot")) {
        if (plot_run_dir(rep.dir, 1) == 0) {
            if (!o->quiet)
                printf("plots:   %s/*.png, *.svg\n", rep.dir);
        } else {
            fprintf(stderr, "locklab: warning: plotting %s failed (see `locklab plot %s`)\n",
                    rep.dir, rep.dir);
        }
    }
    report_free(&rep);
    if (lab_stop)
        return LAB_EXIT_INTERRUPTED;
    return code;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? LAB_EXIT_OK : LAB_EXIT_USAGE;
    struct scenario *scns[MAX_SCENARIOS];
    int n = 0;
    int code = LAB_EXIT_USAGE;
    if (load_all(argc, argv, &o, scns, &n) == 0) {
        stop_install();
        bool need_redis, need_stock;
        int masters;
        const struct scenario *zk;
        needs(scns, n, &need_redis, &need_stock, &masters, &zk);
        struct backends b;
        struct lab_err err = {0};
        if (backends_start(&b, need_redis, need_stock, masters, o.redis, &err) != 0 ||
            (zk && backends_start_zk(&b, zk->zk_ensemble, zk->zk_force_sync, o.zk, &lab_stop, &err) != 0)) {
            backends_stop(&b);
            fprintf(stderr, "locklab: %s\n", err.msg);
            code = lab_stop ? LAB_EXIT_INTERRUPTED : LAB_EXIT_ENV;
        } else {
            code = run_all(scns, n, &o, &b, zk);
            backends_stop(&b);
        }
    }
    for (int i = 0; i < n; i++)
        free(scns[i]);
    return code;
}
