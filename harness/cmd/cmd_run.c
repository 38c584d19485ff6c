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

#include "adapter.h"
#include "lex.h"
#include "lock.h"
#include "net.h"
#include "backends.h"
#include "cli.h"
#include "report_html.h"
#include "failpoint_env.h"
#include "plot.h"
#include "plan.h"
#include "report.h"
#include "progress.h"
#include "report_stderr.h"
#include "runner.h"
#include "scenario_load.h"
#include "servers.h"
#include "stems.h"
#include "stop.h"
#include "test_slow.h"

#define MAX_SCENARIOS 64

struct run_opts {
    const char *impls;  /* --impl a,b: replaces each scenario's impls */
    int clients;        /* --clients N: 0 = as the scenario says */
    const char *out;    /* --out DIR: results root */
    const char *external[BACKEND_MAX]; /* per store: --<flag> ADDR or $<env_var> (backend.h) */
    const char *junit;  /* --junit FILE */
    bool quiet;         /* --quiet */
    bool no_plot;       /* --no-plot */
    int rounds;         /* --rounds N: run everything N times (default 1) */
    const char *baseline; /* --baseline FILE: check the run against it */
    json_t *baseline_json; /* ... read before anything starts */
    const char *reference; /* --reference IMPL, or the baseline's: run between the others */
    int argc;           /* the command line, for summary.json */
    char **argv;
};

/* A store's "--<flag> META  help" with its help in the options' column
 * (flag_usage is "META  help", backend.h). */
static void print_store_flag(FILE *f, const struct backend_ops *be)
{
    const char *u = be->flag_usage, *gap = strstr(u, "  ");
    int meta = gap ? (int)(gap - u) : (int)strlen(u);
    char head[64];
    snprintf(head, sizeof head, "--%s %.*s", be->flag, meta, u);
    if (!gap)
        fprintf(f, "  %s\n", head);
    else if (strlen(head) > 17) /* too long for the column: help on the next line */
        fprintf(f, "  %s\n  %-17s  %s\n", head, "", gap + 2);
    else
        fprintf(f, "  %-17s  %s\n", head, gap + 2);
}

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
            "                     DIR/<run-id>/ and DIR/latest points at it\n",
            SCN_MAX_CLIENTS);
    for (int i = 0; i < backend_count; i++)
        if (backend_registry[i]->flag)
            print_store_flag(f, backend_registry[i]);
    fprintf(f,
            "  --junit FILE       also write the JUnit XML report to FILE\n"
            "  --rounds N         run every scenario N times (1..64); speed is compared\n"
            "                     as the median over the rounds (--baseline)\n"
            "  --baseline FILE    check the run against a baseline (`locklab baseline\n"
            "                     save`): exit 1 on a changed verdict or a speed ratio\n"
            "                     worse than its tolerance; RUN_DIR/baseline-junit.xml\n"
            "  --reference IMPL   run IMPL before and after every other design at every\n"
            "                     step of every round, so that their speed ratios to it\n"
            "                     (`baseline save`) see the same machine; the default\n"
            "                     with --baseline is the baseline's reference\n"
            "  --quiet            no progress and no table: only errors and failures\n"
            "  --no-plot          do not draw the plots (drawn when gnuplot is installed)\n"
            "  -h, --help         this text\n"
            "\n"
            "On a terminal, stderr shows where the run is (scenario i of n, step j of m,\n"
            "the design, elapsed / planned, an ETA) and each fault as it fires and ends;\n"
            "LOCKLAB_PROGRESS=1 shows it without a terminal, =0 never. The run ends with\n"
            "`N expectations met, M unmet; exit C: ...`.\n"
            "\n"
            "exit codes: 0 every expectation met, 1 an expectation failed, 2 bad usage or\n"
            "scenario (nothing started), 3 a server would not start or cannot be reached,\n"
            "130 interrupted (results so far written, marked incomplete)\n");
}

/* --impl's names, checked against the designs and s's adapters (or the
 * built-in designs alone when s is NULL: its file did not load). Every
 * unknown name is reported, with the nearest known one. 0 or -1. */
static int check_impl_names(const struct scenario *s, const char *list)
{
    const char *names[64 + SCN_MAX_ADAPTERS + 1];
    char buf[1024], near[96];
    int n = 0, rc = 0;

    for (int i = 0; i < lock_registry_count && n < 64; i++)
        names[n++] = lock_registry[i]->name;
    for (int a = 0; s && a < s->n_adapters; a++)
        names[n++] = s->adapters[a].spec.name;
    names[n] = NULL;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save))
        if (s ? !scenario_impl(s, name) : !lock_find(name)) {
            const char *hint = lex_nearest(name, strlen(name), names, 0);
            if (hint)
                snprintf(near, sizeof near, "; did you mean '%s'?", hint);
            else
                near[0] = '\0';
            fprintf(stderr, "locklab: --impl: unknown implementation '%s' (run `locklab list` "
                            "to see them)%s\n", name, near);
            rc = -1;
        }
    return rc;
}

/* Keep of s's impls the ones --impl lists, in its order. 0 or -1. */
static int apply_impl_filter(struct scenario *s, const char *list)
{
    char buf[1024];
    if (check_impl_names(s, list) != 0)
        return -1;
    snprintf(buf, sizeof buf, "%s", list);
    s->n_impls = 0;
    for (char *save, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
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
        const struct lock_ops *ops = scenario_impl(s, name);
        if (s->clients_per_process > 1 && !ops->async) {
            fprintf(stderr, "locklab: --impl: %s cannot run in client groups (%s has "
                            "run.clients_per_process %d): it has no asynchronous hooks\n",
                    name, s->path, s->clients_per_process);
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

#define OPT_EXTERNAL 1000 /* getopt value of the first store's --<flag> */

static int parse_opts(int argc, char **argv, struct run_opts *o)
{
    static const struct option fixed[] = {
        {"impl", required_argument, NULL, 'i'},  {"clients", required_argument, NULL, 'c'},
        {"out", required_argument, NULL, 'o'},   {"junit", required_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, 'q'},       {"no-plot", no_argument, NULL, 'P'},
        {"rounds", required_argument, NULL, 'R'}, {"baseline", required_argument, NULL, 'B'},
        {"reference", required_argument, NULL, 'F'}, {"help", no_argument, NULL, 'h'}};
    enum { N_FIXED = sizeof fixed / sizeof fixed[0] };
    struct option longopts[N_FIXED + BACKEND_MAX + 1];
    memcpy(longopts, fixed, sizeof fixed);
    int n_opts = N_FIXED;
    memset(o, 0, sizeof *o);
    o->out = "results";
    o->rounds = 1;
    for (int i = 0; i < backend_count; i++) {
        const struct backend_ops *be = backend_registry[i];
        if (!be->flag)
            continue;
        longopts[n_opts++] = (struct option){be->flag, required_argument, NULL, OPT_EXTERNAL + i};
        const char *v = getenv(be->env_var);
        o->external[i] = v && *v ? v : NULL;
    }
    longopts[n_opts] = (struct option){NULL, 0, NULL, 0};
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
        case 'j': o->junit = optarg; break;
        case 'R':
            o->rounds = (int)strtol(optarg, &end, 10);
            if (*end || o->rounds < 1 || o->rounds > 64) {
                fprintf(stderr, "locklab: --rounds wants a number from 1 to 64, not '%s'\n",
                        optarg);
                return -1;
            }
            break;
        case 'B':
            o->baseline = optarg;
            if (!(o->baseline_json = baseline_load(optarg)))
                return -1;
            break;
        case 'F': o->reference = optarg; break;
        case 'P': o->no_plot = true; break;
        case 'q': o->quiet = true; break;
        case 'h': run_usage(stdout); return 1;
        default:
            if (ch >= OPT_EXTERNAL && ch < OPT_EXTERNAL + backend_count) {
                o->external[ch - OPT_EXTERNAL] = optarg;
                break;
            }
            fprintf(stderr, "locklab: run: unknown or incomplete option '%s'\n\n",
                    argv[optind - 1]);
            run_usage(stderr);
            return -1;
        }
    }
    if (!o->reference && o->baseline_json)
        o->reference = json_string_value(json_object_get(o->baseline_json, "reference"));
    for (int i = 0; i < backend_count; i++) {
        struct lab_err err = {0};
        if (o->external[i] && backend_registry[i]->check_external(o->external[i], &err) != 0) {
            fprintf(stderr, "locklab: %s\n", err.msg);
            return -1;
        }
    }
    return 0;
}

/* The index of impl in s's list, -1 when s does not run it. */
static int impl_index(const struct scenario *s, const char *impl)
{
    for (int j = 0; impl && j < s->n_impls; j++)
        if (strcmp(s->impls[j], impl) == 0)
            return j;
    return -1;
}

/* 0 when design ops may run clients on its store as this run has it, else
 * the store's connection limit with why filled (backend_conn_limit). */
static int conn_limit(const struct run_opts *o, const struct lock_ops *ops, int clients,
                      char *why, size_t n)
{
    const struct backend_ops *be = backend_of(ops);
    return backend_conn_limit(ops, clients, be && o->external[backend_index(be)], why, n);
}

/* A design whose every step needs more connections than its embedded
 * store takes cannot run at all: refused before anything starts. Steps
 * past the limit beside steps within it are skipped when their turn
 * comes (run_steps). 0, or -1 when a design of s cannot run. */
static int check_conn_limits(const struct scenario *s, const struct run_opts *o)
{
    struct plan_step st[PLAN_MAX_STEPS];
    int n = plan_steps(s, st), bad = 0;
    for (int j = 0; j < s->n_impls; j++) {
        const struct lock_ops *ops = scenario_impl(s, s->impls[j]);
        int within = 0;
        char why[300] = "";
        for (int i = 0; i < n; i++)
            within += conn_limit(o, ops, st[i].clients, why, sizeof why) == 0;
        if (within == 0) {
            fprintf(stderr, "locklab: %s: %s at %d clients: %s; give fewer clients, or the "
                            "store's own server (--%s)\n", s->path, ops->name, s->clients, why,
                    backend_of(ops)->flag);
            bad++;
        }
    }
    return bad ? -1 : 0;
}

#define STEM_MAX (SCN_NAME_MAX + 32)

/* Every file stem scenario t writes when it is named name (report_stem):
 * one per step of its plan. Returns how many. */
static int stems(const struct scenario *t, const char *name, char (*out)[STEM_MAX])
{
    struct plan_step st[PLAN_MAX_STEPS];
    int n = plan_steps(t, st);
    for (int i = 0; i < n; i++)
        report_stem(out[i], STEM_MAX, name, plan_is_sweep(t), st[i].per_client_keys,
                    st[i].clients, st[i].fencing);
    return n;
}

/* Would scenario t, named name, share a file with one of the first n? */
static bool name_taken(struct scenario **scns, int n, const struct scenario *t, const char *name)
{
    char mine[PLAN_MAX_STEPS][STEM_MAX], theirs[PLAN_MAX_STEPS][STEM_MAX];
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
    int bad = 0; /* every file is read and every error told before giving up */
    for (int i = optind; i < argc; i++) {
        if (*n == MAX_SCENARIOS) {
            fprintf(stderr, "locklab: at most %d scenarios per run\n", MAX_SCENARIOS);
            return -1;
        }
        struct scenario *s = calloc(1, sizeof *s);
        char err[4096];
        if (!s || scenario_load(argv[i], s, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", s ? err : "locklab: out of memory");
            free(s);
            bad++;
            continue;
        }
        scns[(*n)++] = s;
        if (o->impls && apply_impl_filter(s, o->impls) != 0) {
            bad++;
            continue;
        }
        if (o->clients) {
            s->clients = s->client_steps[0] = o->clients;
            s->n_client_steps = 1;
        }
        if (check_conn_limits(s, o) != 0)
            bad++;
    }
    if (bad) {
        if (*n == 0 && o->impls) /* no file loaded to hold them against: the built-in names */
            check_impl_names(NULL, o->impls);
        return -1;
    }
    if (*n == 0) {
        fprintf(stderr, "locklab: run: no scenario given\n\n");
        run_usage(stderr);
        return -1;
    }
    unique_names(scns, *n);
    bool ref_runs = false;
    for (int i = 0; i < *n; i++)
        ref_runs |= impl_index(scns[i], o->reference) >= 0;
    if (o->reference && !ref_runs) {
        fprintf(stderr, "locklab: the reference design '%s' is in no scenario of the run (speed "
                        "is measured as ratios to it)\n", o->reference);
        return -1;
    }
    struct lab_err fp_err = {0};
    struct test_slow slow;
    if (failpoint_check(&fp_err) != 0 || test_slow_read(NULL, &slow, &fp_err) != 0) {
        fprintf(stderr, "locklab: %s\n", fp_err.msg);
        return -1;
    }
    return 0;
}

/* The round under way with --rounds N > 1 (1..N), 0 without; and the
 * reference's run at this step in this round when it is interleaved (1..),
 * 0 when not. */
static int run_round, run_repeat;

/* Run one implementation at one step of a scenario (s as the step runs
 * it, plan_apply), print its row and add it to the report; returns the
 * updated exit code. */
static int run_step(const struct scenario *s, const struct lock_ops *ops,
                    const struct run_env *env, struct run_result *res, struct report *rep,
                    const struct run_opts *o, int code)
{
    struct lab_err err = {0};
    /* an adapter's clients keep its stderr beside the step's other files */
    struct run_env step_env = *env;
    step_env.log_dir[0] = '\0';
    if (adapter_is(ops)) {
        char tag[SCN_NAME_MAX + 32];
        report_step_tag(tag, sizeof tag, s->name, plan_is_sweep(s), s->per_client_keys,
                        s->clients, s->fencing, run_round);
        report_stderr_dir(step_env.log_dir, sizeof step_env.log_dir, rep->dir, ops->name, tag);
    }
    if (runner_run(s, ops, &step_env, &lab_stop, res, &err) != 0) {
        run_result_free_holds(res);
        if (lab_stop)
            return code;
        fprintf(stderr, "locklab: %s on %s: %s\n", ops->name, s->name, err.msg);
        return LAB_EXIT_ENV;
    }
    res->sweep = plan_is_sweep(s);
    res->round = run_round;
    res->repeat = run_repeat;
    if (!o->quiet || !res->pass)
        report_print_row(o->quiet ? stderr : stdout, res);
    if (!res->pass && code == LAB_EXIT_OK)
        code = LAB_EXIT_EXPECT;
    int added = report_add(rep, res, &err);
    run_result_free_holds(res); /* written with the step's files */
    if (added != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        return LAB_EXIT_ENV;
    }
    return code;
}

#define GOING(code) (!lab_stop && (code) != LAB_EXIT_ENV)

/* What a round needs besides the scenario: where results go, and the
 * scenario as the current step runs it (one scratch copy, plan_apply). */
struct round {
    const struct run_opts *o;
    const struct run_env *env;
    struct run_result *res;
    struct report *rep;
    struct scenario *cur;
    struct progress *progress; /* where the invocation stands */
};

/* A step design ops cannot run (why): said where its row would be, kept
 * in the report. Returns the updated exit code. */
static int skip_step(struct round *r, const struct scenario *s, const struct lock_ops *ops,
                     const struct plan_step *st, const char *label, const char *why, int code)
{
    if (!r->o->quiet)
        printf("%s: not run: %s\n", label, why);
    struct lab_err err = {0};
    if (report_skip(r->rep, s->name, ops->name, st->clients,
                    st->per_client_keys ? "per-client" : "hot", why, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        return LAB_EXIT_ENV;
    }
    return code;
}

/* run_step at steps st[0..n) (the steps of one client count and key
 * layout: workload.fencing off and/or on, as the scenario sweeps it). */
static int run_steps(const struct scenario *s, const struct plan_step *st, int n,
                     const struct lock_ops *ops, struct round *r, int code)
{
    for (int i = 0; i < n && GOING(code); i++) {
        plan_apply(s, &st[i], r->cur);
        char label[96];
        report_step_label(label, sizeof label, ops->name, plan_is_sweep(s),
                          st[i].per_client_keys, st[i].clients, st[i].fencing ? FENCING_ON : 0);
        struct progress *p = r->progress;
        char why[300];
        if (conn_limit(r->o, ops, st[i].clients, why, sizeof why)) {
            code = skip_step(r, s, ops, &st[i], label, why, code);
            p->step++;
            continue;
        }
        progress_begin(p, p->scenario, p->step + 1, p->n_steps, label, r->cur);
        r->res->elapsed_s = 0;
        code = run_step(r->cur, ops, r->env, r->res, r->rep, r->o, code);
        progress_end(p, r->res->elapsed_s);
    }
    return code;
}

/* How many steps (a design at a plan step) one round of s runs: every
 * design at every step, and with an interleaved reference (run_round_of)
 * the reference once more per other design. */
static int round_runs(const struct scenario *s, const char *reference)
{
    int k = s->n_impls;
    return plan_runs(s) / k * (k > 1 && impl_index(s, reference) >= 0 ? 2 * k - 1 : k);
}

/* One round of scenario s: every design at every step. With a reference
 * (--reference or the baseline's) among several designs, the steps come
 * first and the reference runs before and after each other design (ref,
 * A, ref, B, ref): a ratio to the reference then compares runs seconds
 * apart, and a shared machine's slow drift hits both sides. */
static int run_round_of(const struct scenario *s, struct round *r, int code)
{
    struct plan_step st[PLAN_MAX_STEPS];
    int n = plan_steps(s, st);
    int group = s->n_fence_modes > 0 ? s->n_fence_modes : 1; /* steps of one count and layout */
    int ref = s->n_impls > 1 ? impl_index(s, r->o->reference) : -1;
    if (ref < 0) {
        for (int j = 0; j < s->n_impls && GOING(code); j++)
            code = run_steps(s, st, n, scenario_impl(s, s->impls[j]), r, code);
        return code;
    }
    const struct lock_ops *ref_ops = scenario_impl(s, s->impls[ref]);
    for (int g = 0; g < n && GOING(code); g += group) {
        int n_ref = 0;
        for (int j = 0; j <= s->n_impls && GOING(code); j++) {
            if (j == ref)
                continue;
            run_repeat = ++n_ref;
            code = run_steps(s, st + g, group, ref_ops, r, code);
            run_repeat = 0;
            if (j < s->n_impls && GOING(code))
                code = run_steps(s, st + g, group, scenario_impl(s, s->impls[j]), r, code);
        }
    }
    return code;
}

/* Run everything; returns the exit code. */
static int run_all(struct scenario **scns, int n, const struct run_opts *o, struct backends *b)
{
    struct report rep;
    struct lab_err err = {0};
    if (report_open(&rep, o->out, (const struct scenario *const *)scns, n, o->junit, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        return LAB_EXIT_ENV;
    }
    report_set_command(&rep, o->argc, o->argv);
    struct progress prog;
    progress_init(&prog, progress_wanted(o->quiet), n);
    for (int i = 0; i < n; i++)
        progress_plan(&prog, scns[i], o->rounds * round_runs(scns[i], o->reference));
    struct run_env env = {
        .stock = {.host = b->stock_srv.host, .port = b->stock_srv.port},
        .progress = prog.on ? &prog : NULL,
    };
    struct run_result *res = malloc(sizeof *res);
    struct scenario *cur = malloc(sizeof *cur);
    struct round r = {.o = o, .env = &env, .res = res, .rep = &rep, .cur = cur, .progress = &prog};
    int code = res && cur ? LAB_EXIT_OK : LAB_EXIT_ENV;
    if (code != LAB_EXIT_OK)
        fprintf(stderr, "locklab: out of memory\n");
    for (int round = 1; round <= o->rounds; round++)
    for (int i = 0; i < n && !lab_stop && code != LAB_EXIT_ENV; i++) {
        run_round = o->rounds > 1 ? round : 0;
        if (!o->quiet) {
            report_print_heading(stdout, scns[i], scns[i]->clients);
            if (run_round)
                printf("(round %d of %d)\n", round, o->rounds);
        }
        int first = rep.n_results;
        prog.scenario = i + 1;
        prog.step = 0;
        prog.n_steps = round_runs(scns[i], o->reference);
        code = run_round_of(scns[i], &r, code);
        if (!o->quiet && rep.n_results - first > 1 && plan_is_sweep(scns[i])) {
            report_print_comparison(stdout, (const struct run_result *const *)rep.results + first,
                                    rep.n_results - first);
            report_print_footprint(stdout, (const struct run_result *const *)rep.results + first,
                                   rep.n_results - first);
        }
    }
    free(res);
    free(cur);
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
    if (o->baseline_json && complete) {
        int b = baseline_check_run(o->baseline_json, rep.dir, NULL);
        if (b != LAB_EXIT_OK && code == LAB_EXIT_OK)
            code = b;
    }
    /* the exit code, then the page for people, after the plots it inlines
     * and the baseline gate it shows */
    if (report_conclude(&rep, lab_stop ? LAB_EXIT_INTERRUPTED : code, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        code = LAB_EXIT_ENV;
    }
    bool page = false;
    if (rep.n_results > 0) {
        struct lab_err herr = {0};
        if (report_html_write(rep.dir, &herr) != 0)
            fprintf(stderr, "locklab: warning: %s\n", herr.msg);
        else
            page = true;
    }
    /* the closing line says what the exit code will be; the page to open
     * comes last */
    int final = lab_stop ? LAB_EXIT_INTERRUPTED : code;
    if (!o->quiet || final != LAB_EXIT_OK)
        report_print_closing(o->quiet || lab_stop ? stderr : stdout, &rep, final);
    if (page && !o->quiet && !lab_stop)
        printf("report:  %s/report.html\n", rep.dir);
    report_free(&rep);
    return final;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts o;
    /* getopt permutes argv: keep the command line as it was typed */
    char **typed = malloc((size_t)(argc + 1) * sizeof *typed);
    if (typed)
        memcpy(typed, argv, (size_t)(argc + 1) * sizeof *typed);
    int rc = parse_opts(argc, argv, &o);
    o.argc = typed ? argc : 0;
    o.argv = typed;
    if (rc != 0) {
        json_decref(o.baseline_json);
        free(typed);
        return rc > 0 ? LAB_EXIT_OK : LAB_EXIT_USAGE;
    }
    struct scenario *scns[MAX_SCENARIOS];
    int n = 0;
    int code = LAB_EXIT_USAGE;
    if (load_all(argc, argv, &o, scns, &n) == 0) {
        stop_install();
        struct backends b;
        backends_init(&b);
        memcpy(b.external, o.external, sizeof b.external);
        for (int i = 0; i < n; i++)
            backends_plan(&b, scns[i]);
        code = lab_up(scns, n, &b);
        if (code == LAB_EXIT_OK) {
            if (net_on() && !o.quiet)
                fprintf(stderr, "locklab: %d hosts up in %.1f ms\n", net_host_count(),
                        (double)net_setup_ns() / 1e6);
            code = run_all(scns, n, &o, &b);
            lab_down(&b);
        }
    }
    for (int i = 0; i < n; i++)
        free(scns[i]);
    json_decref(o.baseline_json);
    free(typed);
    return code;
}
