/*
 * cmd_explore.c - `locklab explore FILE.yaml...`: draw random fault
 * schedules from each file's explore: section, run every design of the file
 * under each (the servers started once for the invocation, as `run` does),
 * and when a design ends with a verdict its expect: does not allow, shrink
 * the schedule to the smallest that still breaks it (a candidate is kept
 * when it fails in one of k runs), measure how often that one reproduces
 * (n runs), and write it out as <run>/repro-<design>.yaml, a plain scenario
 * `locklab run` reproduces.
 *
 * A trial's scenario is text: the file with its explore: block commented
 * out and a generated faults: list appended (harness/explore/), read by the
 * one loader; a repro file is that text with impls: and expect: narrowed to
 * the design, under a comment saying where it came from. The run folder,
 * <out>/<stamp>-explore-<name>/, keeps report.txt: every trial (schedule,
 * verdict, at stake), each shrink path and what each design came to.
 * Shrinking a break and measuring its reproduction: cmd_explore_shrink.c.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "backend.h"
#include "backends.h"
#include "cli.h"
#include "explore.h"
#include "explore_cmd.h"
#include "lex.h"
#include "lock.h"
#include "net.h"
#include "plan.h"
#include "runner.h"
#include "scenario_load.h"
#include "stop.h"

#define XPL_FILES_MAX 16

bool xcmd_over_budget(const struct xctx *c)
{
    return lab_stop || (c->deadline && lab_now_ns() >= c->deadline - c->reserve_ns);
}

static void explore_usage(FILE *f)
{
    fprintf(f,
            "usage: locklab explore FILE.yaml... [options]\n"
            "\n"
            "Draw random fault schedules from each file's explore: section, run every\n"
            "design of the file under each, and shrink a schedule that breaks a design's\n"
            "expectation to the smallest that still does: written as\n"
            "RUN_DIR/repro-<design>.yaml, a scenario `locklab run` reproduces.\n"
            "\n"
            "options:\n"
            "  --trials N         schedules to draw (default 20)\n"
            "  --budget DUR       stop drawing (and shrinking) after this long, as 10m;\n"
            "                     alone, trials go on until it is spent\n"
            "  --seed S           the generator's seed (default: from the clock, printed)\n"
            "  --out DIR          results root (default: results); the run goes to\n"
            "                     DIR/<stamp>-explore-<name>/\n"
            "  -k N               runs of a shrink candidate, kept when one fails (default 3)\n"
            "  -n N               runs measuring the shrunk schedule's reproduction rate\n"
            "                     (default 10)\n"
            "  --quiet            no progress lines: only what broke\n"
            "  -h, --help         this text\n"
            "\n"
            "exit codes: 0 no design broke, 1 a design broke (repro written), 2 bad usage\n"
            "or file (nothing started), 3 a server would not start, 130 interrupted\n");
}

static int count_arg(const char *opt, const char *v, int lo, int hi, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end || x < lo || x > hi) {
        fprintf(stderr, "locklab: explore: %s wants a number from %d to %d, not '%s'\n", opt, lo,
                hi, v);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int parse_opts(int argc, char **argv, struct xopts *o)
{
    static const struct option longopts[] = {
        {"trials", required_argument, NULL, 't'}, {"budget", required_argument, NULL, 'b'},
        {"seed", required_argument, NULL, 's'},   {"out", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->trials = 20;
    o->out = "results";
    o->k = 3;
    o->n = 10;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "hqk:n:", longopts, NULL)) != -1) {
        switch (ch) {
        case 't':
            if (count_arg("--trials", optarg, 1, 1000000, &o->trials) != 0)
                return -1;
            o->trials_given = true;
            break;
        case 'b':
            if (duration_parse(optarg, &o->budget_ns) != 0 || o->budget_ns <= 0) {
                fprintf(stderr, "locklab: explore: --budget wants a duration, as 10m, not "
                                "'%s'\n", optarg);
                return -1;
            }
            break;
        case 's': {
            char *end;
            errno = 0;
            o->seed = strtoull(optarg, &end, 10);
            if (*optarg == '\0' || *end || errno || *optarg == '-') {
                fprintf(stderr, "locklab: explore: --seed wants a number, not '%s'\n", optarg);
                return -1;
            }
            o->seed_given = true;
            break;
        }
        case 'o': o->out = optarg; break;
        case 'k':
            if (count_arg("-k", optarg, 1, 100, &o->k) != 0)
                return -1;
            break;
        case 'n':
            if (count_arg("-n", optarg, 1, 1000, &o->n) != 0)
                return -1;
            break;
        case 'q': o->quiet = true; break;
        case 'h': explore_usage(stdout); return 1;
        default:
            fprintf(stderr, "locklab: explore: unknown or incomplete option '%s'\n\n",
                    argv[optind - 1]);
            explore_usage(stderr);
            return -1;
        }
    }
    if (o->budget_ns && !o->trials_given)
        o->trials = 1000000;
    if (!o->seed_given)
        o->seed = (uint64_t)time(NULL) % 1000000007ULL;
    return 0;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "locklab: %s: cannot open: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *more = realloc(buf, 2 * cap + 1);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "locklab: out of memory\n");
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int rc = fputs(text, f) < 0 ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

/* a followed by b (malloc'd; NULL: out of memory) */
static char *concat(const char *a, const char *b)
{
    size_t x = strlen(a), y = strlen(b);
    char *out = malloc(x + y + 2);
    if (!out)
        return NULL;
    memcpy(out, a, x);
    size_t k = x;
    if (x && a[x - 1] != '\n')
        out[k++] = '\n';
    memcpy(out + k, b, y + 1);
    return out;
}

/* explore_cmd.h; the quiet levels silence stderr around the loader */
int xcmd_load_text(const char *tmp, const char *shown, const char *text, struct scenario *out,
                   int quiet)
{
    char err[4096];
    if (write_text(tmp, text) != 0) {
        fprintf(stderr, "locklab: cannot write %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    int saved = -1;
    if (quiet) {
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            dup2(fileno(null), STDERR_FILENO);
            fclose(null);
        }
    }
    int rc = scenario_load(tmp, out, err, sizeof err);
    if (saved >= 0) {
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
    }
    if (rc != 0 && quiet < 2) {
        size_t t = strlen(tmp);
        fprintf(stderr, "%s%s\n", strncmp(err, tmp, t) == 0 ? shown : "",
                strncmp(err, tmp, t) == 0 ? err + t : err);
    }
    return rc;
}

/* Is name a role of the designs' stores, as a fault target spells it? */
static bool known_role(const struct scenario *s, const char *name, char *roles, size_t n)
{
    roles[0] = '\0';
    bool found = false;
    const struct backend_ops *seen[SCN_MAX_IMPLS];
    int n_seen = 0;
    for (int j = 0; j < s->n_impls; j++) {
        const struct backend_ops *be = backend_of(scenario_impl(s, s->impls[j]));
        bool dup = !be || !be->role_names;
        for (int i = 0; i < n_seen && !dup; i++)
            dup = seen[i] == be;
        if (dup)
            continue;
        seen[n_seen++] = be;
        for (const struct backend_role_name *r = be->role_names; r->name; r++) {
            size_t u = strlen(roles), l = strlen(r->name);
            snprintf(roles + u, n - u, "%s%s%s", *roles ? ", " : "", r->name,
                     r->indexed == 2 ? ":I" : r->indexed == 1 ? "[:I]" : "");
            if (strncmp(name, r->name, l) == 0 &&
                ((name[l] == '\0' && r->indexed < 2) || (name[l] == ':' && r->indexed > 0)))
                found = true;
        }
    }
    return found;
}

/* The roles every design of s could be aimed at before its servers run
 * (a role a name alone takes; an indexed one at 0), for the checks made
 * before anything starts. */
static void static_roles(const struct scenario *s, struct explore_env *env)
{
    for (int j = 0; j < s->n_impls; j++) {
        const struct backend_ops *be = backend_of(scenario_impl(s, s->impls[j]));
        for (const struct backend_role_name *r = be && be->role_names ? be->role_names : NULL;
             r && r->name && env->n_roles < XPL_TARGETS_MAX; r++) {
            char name[XPL_NAME_MAX];
            snprintf(name, sizeof name, r->indexed == 2 ? "%s:0" : "%s", r->name);
            bool dup = false;
            for (int i = 0; i < env->n_roles && !dup; i++)
                dup = !strcmp(env->roles[i], name);
            if (dup)
                continue;
            env->role_clock[env->n_roles] = r->clock;
            snprintf(env->roles[env->n_roles++], XPL_NAME_MAX, "%s", name);
        }
    }
}

/* The roles of the servers the designs of s run on, asked of the running
 * stores (backend_ops.roles). */
static void running_roles(const struct scenario *s, struct explore_env *env)
{
    env->n_roles = 0;
    for (int j = 0; j < s->n_impls; j++) {
        const struct lock_ops *ops = scenario_impl(s, s->impls[j]);
        const struct backend_ops *be = backend_of(ops);
        struct backend_role r[XPL_TARGETS_MAX];
        int n = be && be->roles ? be->roles(ops, s, r, XPL_TARGETS_MAX) : 0;
        for (int i = 0; i < n && env->n_roles < XPL_TARGETS_MAX; i++) {
            char name[XPL_NAME_MAX];
            if (r[i].index >= 0)
                snprintf(name, sizeof name, "%s:%d", r[i].name, r[i].index);
            else
                snprintf(name, sizeof name, "%s", r[i].name);
            bool dup = false;
            for (int k = 0; k < env->n_roles && !dup; k++)
                dup = !strcmp(env->roles[k], name);
            if (dup)
                continue;
            bool clock = false;
            for (const struct backend_role_name *rn = be->role_names; rn && rn->name; rn++)
                clock |= !strcmp(rn->name, r[i].name) && rn->clock;
            env->role_clock[env->n_roles] = clock;
            snprintf(env->roles[env->n_roles++], XPL_NAME_MAX, "%s", name);
        }
    }
}

static void scenario_env(const struct scenario *s, struct explore_env *env)
{
    memset(env, 0, sizeof *env);
    env->ttl_ns = s->ttl_ns;
    env->business_ns = s->business_ns;
    env->run_ns = s->max_duration_ns;
    for (int h = 0; h < s->n_hosts && env->n_hosts < XPL_TARGETS_MAX; h++)
        snprintf(env->hosts[env->n_hosts++], XPL_NAME_MAX, "%s", s->hosts[h].name);
}

/* A schedule with one entry of every action the section draws: loaded
 * before anything starts, it checks the actions against the file (a
 * failover needs the sentinel topology, a clock-jump a Redis server) and
 * tells the stores what to start with (a clock shim). */
static void probe_schedule(const struct explore_spec *sp, struct xschedule *out)
{
    memset(out, 0, sizeof *out);
    for (int a = 0; a < XA_COUNT; a++) {
        if (!(sp->actions & (1u << a)))
            continue;
        struct xfault *f = &out->f[out->n++];
        f->action = (enum xaction)a;
        f->count = 1;
        f->at_ns = sp->at[0] > 0 ? sp->at[0] : 1000000;
        f->duration_ns = sp->duration[0] > 0 ? sp->duration[0] : 1000000;
        const char *t = sp->n_client ? sp->client[0] : sp->server[0];
        if (a == XA_KILL || a == XA_PAUSE)
            f->duration_ns = a == XA_PAUSE ? f->duration_ns : 0;
        if (a == XA_RESTART)
            t = sp->server[0];
        if (a == XA_FAILOVER) {
            t = "redis-master";
            f->duration_ns = 0;
        }
        if (a == XA_CLOCK_JUMP) {
            t = sp->clock[0];
            f->offset_ns = sp->lease_ns;
            f->duration_ns = 0;
        }
        if (a == XA_PARTITION)
            t = sp->isolate[0];
        if (a == XA_DELAY) {
            t = sp->hosts[0];
            snprintf(f->target2, sizeof f->target2, "%s", sp->hosts[1]);
            f->latency_ns = 1000000;
        }
        snprintf(f->target, sizeof f->target, "%s", t);
    }
}

/* Read, check and load one explore file; nothing starts. 0 or -1. */
static int prepare_file(struct xfile *x, const char *tmp)
{
    char err[4096];
    struct xtop top[XPL_TOP_MAX];
    int n_top = 0;
    if (!(x->text = read_file(x->path, &x->len)))
        return -1;
    if (explore_top_keys(x->text, x->len, x->path, top, &n_top, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    for (int i = 0; i < n_top; i++)
        if (strcmp(top[i].key, "faults") == 0) {
            fprintf(stderr, "%s:%d:%d: an explore file has no faults: of its own (its "
                            "schedules are drawn from explore:); move the entries out, or run "
                            "the file with `locklab run` without its explore: section\n",
                    x->path, top[i].line, top[i].column);
            return -1;
        }
    if (explore_spec_read(x->text, x->len, x->path, &x->sp, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    if (!(x->base = explore_comment_key(x->text, x->len, top, n_top, "explore")) ||
        !(x->s = calloc(1, sizeof *x->s)) || !(x->probe = calloc(1, sizeof *x->probe))) {
        fprintf(stderr, "locklab: out of memory\n");
        return -1;
    }
    if (xcmd_load_text(tmp, x->path, x->base, x->s, 0) != 0)
        return -1;
    struct scenario *s = x->s;
    if (s->n_expect == 0) {
        fprintf(stderr, "%s: explore needs expect: (what each design must show; a verdict "
                        "outside it is a break)\n", x->path);
        return -1;
    }
    if (s->n_client_steps > 1 || s->n_key_modes > 1 || s->n_fence_modes > 1) {
        fprintf(stderr, "%s: explore runs one step: give one clients count, one lock.keys "
                        "and one workload.fencing (no sweeps)\n", x->path);
        return -1;
    }
    for (int i = 0; i < x->sp.n_targets; i++) {
        const char *t = x->sp.targets[i];
        char roles[1024];
        if (!strcmp(t, "holder") || !strcmp(t, "random-client") || !strncmp(t, "client:", 7) ||
            known_role(s, t, roles, sizeof roles))
            continue;
        fprintf(stderr, "%s:%d:%d: explore.targets: '%s' is no server role of the designs' "
                        "stores (roles: %s) nor a client target (holder, random-client, "
                        "client:N)\n", x->path, x->sp.target_line[i], x->sp.target_column[i], t,
                roles);
        return -1;
    }
    /* resolved once against the roles a name takes, for the checks and
     * the probe; again against the running servers once they run */
    struct explore_env env;
    scenario_env(s, &env);
    static_roles(s, &env);
    if (explore_spec_resolve(&x->sp, &env, x->path, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    struct xschedule probe;
    char yaml[4096];
    probe_schedule(&x->sp, &probe);
    explore_faults_yaml(&probe, yaml, sizeof yaml);
    char *text = concat(x->base, yaml);
    if (!text) {
        fprintf(stderr, "locklab: out of memory\n");
        return -1;
    }
    int rc = xcmd_load_text(tmp, x->path, text, x->probe, 1);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "%s:%d:%d: explore: the loader refused a fault these actions make "
                        "(above: its line is past the file's end, in the generated faults:)\n",
                x->path, x->sp.line, x->sp.column);
        return -1;
    }
    x->n_designs = s->n_impls;
    for (int j = 0; j < s->n_impls; j++) {
        x->d[j].ops = scenario_impl(s, s->impls[j]);
        x->d[j].expected = scenario_expected(s, s->impls[j]);
        x->d[j].at_stake = 0;
    }
    return 0;
}

/* explore_cmd.h */
int xcmd_run_text(struct xctx *c, const struct xfile *x, const char *text,
                  const struct lock_ops *ops, enum verdict *v, bool *pass)
{
    struct scenario *s = calloc(1, sizeof *s);
    if (!s || xcmd_load_text(c->tmp, c->tmp, text, s, 1) != 0) {
        if (!s)
            fprintf(stderr, "locklab: out of memory\n");
        free(s);
        return -1;
    }
    struct plan_step st[PLAN_MAX_STEPS];
    plan_steps(s, st);
    plan_apply(s, &st[0], c->cur);
    struct lab_err err = {0};
    int rc = runner_run(c->cur, ops, &c->env, &lab_stop, c->res, &err);
    run_result_free_holds(c->res);
    free(s);
    if (rc != 0) {
        if (!lab_stop)
            fprintf(stderr, "locklab: %s on %s: %s\n", ops->name, x->path, err.msg);
        return -1;
    }
    const struct run_result *r = c->res;
    *v = r->verdict;
    /* a trial whose faults never put the lock at stake tested nothing, nor
     * did one whose schedule could not land (an entry aimed at a holder
     * another entry had already paused: the error verdict says only that):
     * neither is a break, whatever the file expects */
    bool unlanded = r->verdict == VERDICT_ERROR && r->faults_missed > 0 && r->errors == 0 &&
                    r->release_errors == 0 && r->clients_crashed == 0 &&
                    r->clients_failed_start == 0;
    *pass = r->pass || r->verdict == VERDICT_NOT_EXERCISED || unlanded;
    return 0;
}

/* explore_cmd.h */
char *xcmd_schedule_text(const struct xfile *x, const struct xdesign *d,
                         const struct xschedule *sch)
{
    char yaml[8192];
    explore_faults_yaml(sch, yaml, sizeof yaml);
    return concat(d && d->base ? d->base : x->base, yaml);
}

/* text with top-level key commented out (its lines kept), freeing text. */
static char *comment_out(char *text, const char *key)
{
    struct xtop top[XPL_TOP_MAX];
    int n = 0;
    char err[512];
    if (!text || explore_top_keys(text, strlen(text), "repro", top, &n, err, sizeof err) != 0) {
        free(text);
        return NULL;
    }
    char *out = explore_comment_key(text, strlen(text), top, n, key);
    free(text);
    return out;
}

/* <dir>/repro-<design>.yaml: the shrunk schedule's text, impls: narrowed
 * to the design and expect: set to the verdict that broke it (so that CI
 * can keep the file: `locklab run` passes while the design still breaks
 * so, and a design that stops breaking shows as a changed verdict), under
 * a comment saying where it came from. */
static int write_repro(const struct xctx *c, const struct xfile *x, struct xdesign *d)
{
    char *text = xcmd_schedule_text(x, d, &d->final);
    text = comment_out(comment_out(text, "impls"), "expect");
    if (!text)
        return -1;
    char sh[400], head[2048], tail[256], want[160];
    explore_short(&d->final, sh, sizeof sh);
    verdict_set_name(d->expected, want, sizeof want);
    int len = snprintf(head, sizeof head,
             "# locklab explore: a schedule that breaks %s, shrunk.\n"
             "# from: %s, seed %" PRIu64 ", trial %d (%s where %s was expected)\n"
             "# shrunk in %d step%s%s: %s\n"
             "# reproduced: %d of %d runs (%s)\n"
             "# expect: is what broke, so `locklab run` on this file passes while %s still\n"
             "# breaks so (exit 0), and fails when it holds; the expectation it broke was\n"
             "# {%s: %s}. The file's explore: block, impls: and expect: are commented out\n"
             "# below; the schedule is the faults: list at the end.\n",
             d->ops->name, x->path, c->o->seed, d->broke, verdict_name(d->verdict),
             want, d->shrink_steps, d->shrink_steps == 1 ? "" : "s",
             d->shrink_cut ? " (stopped by the budget)" : "", sh, d->repro_fails, d->repro_runs,
             verdict_name(d->verdict), d->ops->name, d->ops->name, want);
    for (int i = 0; i < d->n_path && len > 0 && (size_t)len < sizeof head; i++)
        len += snprintf(head + len, sizeof head - (size_t)len, "#   step %d: %s\n", i + 1,
                        d->path[i]);
    snprintf(tail, sizeof tail, "impls: [%s]\nexpect: {%s: %s}\n", d->ops->name, d->ops->name,
             verdict_name(d->verdict));
    /* the faults: list stays last: put impls and expect before it */
    char *faults = strstr(text, "\nfaults:");
    int rc = -1;
    snprintf(d->repro, sizeof d->repro, "%s/repro-%s.yaml", x->dir, d->ops->name);
    FILE *f = fopen(d->repro, "w");
    if (f && faults) {
        fputs(head, f);
        fwrite(text, 1, (size_t)(faults - text) + 1, f);
        fputs(tail, f);
        fputs(faults + 1, f);
        rc = ferror(f) ? -1 : 0;
    }
    if (f && fclose(f) != 0)
        rc = -1;
    free(text);
    if (rc != 0)
        fprintf(stderr, "locklab: cannot write %s: %s\n", d->repro, strerror(errno));
    return rc;
}

static int add_trial(struct xfile *x, const struct xtrial *t)
{
    if (x->n_t == x->cap_t) {
        int cap = x->cap_t ? 2 * x->cap_t : 64;
        struct xtrial *more = realloc(x->t, sizeof *more * (size_t)cap);
        if (!more)
            return -1;
        x->t = more;
        x->cap_t = cap;
    }
    x->t[x->n_t++] = *t;
    return 0;
}

/* <out>/<stamp>-explore-<name>/ */
static int make_dir(const struct xopts *o, struct xfile *x)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    if (atomic_file_mkdir_p(o->out) != 0) {
        fprintf(stderr, "locklab: cannot create %s: %s\n", o->out, strerror(errno));
        return -1;
    }
    for (int k = 1; k < 100; k++) {
        if (k == 1)
            snprintf(x->dir, sizeof x->dir, "%s/%s-explore-%s", o->out, stamp, x->s->name);
        else
            snprintf(x->dir, sizeof x->dir, "%s/%s-explore-%s-%d", o->out, stamp, x->s->name, k);
        if (mkdir(x->dir, 0755) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    fprintf(stderr, "locklab: cannot create %s: %s\n", x->dir, strerror(errno));
    return -1;
}

static void design_line(FILE *f, const struct xdesign *d)
{
    if (d->broke) {
        char sh[400], want[160];
        explore_short(&d->final, sh, sizeof sh);
        fprintf(f, "%s: broke in trial %d after %.1f s: %s where %s was expected; shrunk in "
                   "%d step%s%s to %d entr%s: %s; reproduced %d of %d; %s\n",
                d->ops->name, d->broke, (double)d->found_ns / 1e9, verdict_name(d->verdict),
                verdict_set_name(d->expected, want, sizeof want),
                d->shrink_steps, d->shrink_steps == 1 ? "" : "s",
                d->shrink_cut ? " (the budget stopped it)" : "", d->final.n,
                d->final.n == 1 ? "y" : "ies", sh, d->repro_fails, d->repro_runs, d->repro);
    } else {
        fprintf(f, "%s: held in %d trial%s that put it at stake (of %d)\n", d->ops->name,
                d->at_stake, d->at_stake == 1 ? "" : "s", d->trials);
    }
}

static void write_report(const struct xctx *c, const struct xfile *x, int64_t took_ns)
{
    char path[1500];
    snprintf(path, sizeof path, "%s/report.txt", x->dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "locklab: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fprintf(f, "# locklab explore: %s\n\nfile: %s  \nseed: %" PRIu64 "  \ntrials: %d  \n"
               "took: %.1f s\n\n## What each design came to\n\n",
            x->s->name, x->path, c->o->seed, x->n_t ? x->t[x->n_t - 1].trial : 0,
            (double)took_ns / 1e9);
    for (int j = 0; j < x->n_designs; j++) {
        fputs("- ", f);
        design_line(f, &x->d[j]);
        for (int i = 0; i < x->d[j].n_path; i++)
            fprintf(f, "  - shrink step %d: %s\n", i + 1, x->d[j].path[i]);
    }
    fprintf(f, "\n## Every trial\n\n| trial | design | schedule | verdict | expected | at stake |\n"
               "|---|---|---|---|---|---|\n");
    for (int i = 0; i < x->n_t; i++) {
        const struct xtrial *t = &x->t[i];
        fprintf(f, "| %d | %s | %s | %s | %s | %s |\n", t->trial, x->d[t->design].ops->name,
                t->schedule, verdict_name(t->verdict), t->pass ? "met" : "NOT MET",
                t->at_stake ? "yes" : "no");
    }
    fclose(f);
}

/* Explore one file: trials until the count or the budget, every design
 * not yet broken under each. Returns an exit code. */
static int explore_file(struct xctx *c, struct xfile *x)
{
    const struct xopts *o = c->o;
    struct explore_env env;
    char err[4096];
    scenario_env(x->s, &env);
    running_roles(x->s, &env);
    if (explore_spec_resolve(&x->sp, &env, x->path, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return LAB_EXIT_USAGE;
    }
    if (make_dir(o, x) != 0)
        return LAB_EXIT_ENV;
    snprintf(c->tmp, sizeof c->tmp, "%s/trial.yaml", x->dir);
    char logpath[1500];
    snprintf(logpath, sizeof logpath, "%s/shrink.log", x->dir);
    FILE *log = fopen(logpath, "w");
    if (!o->quiet)
        printf("explore %s: seed %" PRIu64 ", %s%d designs; results in %s\n", x->path, o->seed,
               "", x->n_designs, x->dir);
    struct xrng rng;
    xrng_seed(&rng, o->seed);
    int64_t t0 = lab_now_ns(), shrinking_ns = 0;
    int code = LAB_EXIT_OK, left = x->n_designs;
    for (int trial = 1; trial <= o->trials && left > 0 && !xcmd_over_budget(c); trial++) {
        struct xschedule sch;
        explore_draw(&x->sp, &rng, &sch);
        char sh[320];
        explore_short(&sch, sh, sizeof sh);
        char *text = xcmd_schedule_text(x, NULL, &sch);
        if (!text)
            return LAB_EXIT_ENV;
        for (int j = 0; j < x->n_designs && !lab_stop; j++) {
            struct xdesign *d = &x->d[j];
            if (d->broke)
                continue;
            enum verdict v;
            bool pass;
            int64_t run_t0 = lab_now_ns();
            if (xcmd_run_text(c, x, text, d->ops, &v, &pass) != 0) {
                free(text);
                if (log)
                    fclose(log);
                return lab_stop ? LAB_EXIT_INTERRUPTED : LAB_EXIT_ENV;
            }
            int64_t run_ns = lab_now_ns() - run_t0;
            d->trials++;
            int staked = c->res->stake_yes > 0;
            d->at_stake += staked;
            struct xtrial t = {.trial = trial, .design = j, .verdict = v, .pass = pass,
                               .at_stake = staked};
            snprintf(t.schedule, sizeof t.schedule, "%s", sh);
            if (add_trial(x, &t) != 0) {
                free(text);
                return LAB_EXIT_ENV;
            }
            if (!o->quiet || !pass) {
                char count[32];
                snprintf(count, sizeof count, o->trials < 1000000 ? "%d/%d" : "%d", trial,
                         o->trials);
                char what[192], want[160];
                snprintf(what, sizeof what, "BREAKS: expected %s",
                         verdict_set_name(d->expected, want, sizeof want));
                printf("trial %-7s %-16s %s  %s, %s  %s\n", count, d->ops->name, sh,
                       verdict_name(v), staked ? "at stake" : "not at stake", pass ? "ok" : what);
                fflush(stdout);
            }
            if (pass)
                continue;
            d->broke = trial;
            d->found_ns = lab_now_ns() - t0 - shrinking_ns;
            d->verdict = v;
            d->final = sch;
            left--;
            code = LAB_EXIT_EXPECT;
            if (xcmd_push_kept(d) != 0) {
                free(text);
                return LAB_EXIT_ENV;
            }
            if (log)
                fprintf(log, "%s broke in trial %d: %s (%s)\n", d->ops->name, trial, sh,
                        verdict_name(v));
            int64_t shrink_t0 = lab_now_ns();
            /* shrinking leaves of the budget what measuring the repro (n
             * runs) and a walk back (about as many) need, at most half */
            if (c->deadline) {
                int64_t left = c->deadline - shrink_t0;
                c->reserve_ns = 2 * o->n * run_ns < left / 2 ? 2 * o->n * run_ns : left / 2;
            }
            int rc = xcmd_shrink_schedule(c, x, d, log);
            if (rc == 0 && !d->shrink_cut)
                rc = xcmd_shrink_text(c, x, d, log);
            c->reserve_ns = 0;
            if (rc != 0 || xcmd_reproduce(c, x, d) != 0) {
                free(text);
                if (log)
                    fclose(log);
                return lab_stop ? LAB_EXIT_INTERRUPTED : LAB_EXIT_ENV;
            }
            shrinking_ns += lab_now_ns() - shrink_t0;
            write_repro(c, x, d);
            if (!o->quiet) {
                fputs("  ", stdout);
                design_line(stdout, d);
                fflush(stdout);
            }
        }
        free(text);
    }
    if (log)
        fclose(log);
    unlink(c->tmp);
    write_report(c, x, lab_now_ns() - t0);
    for (int j = 0; j < x->n_designs; j++)
        if (!x->d[j].broke || o->quiet)
            design_line(o->quiet && x->d[j].broke ? stderr : stdout, &x->d[j]);
    if (!o->quiet)
        printf("report: %s/report.txt\n", x->dir);
    return lab_stop ? LAB_EXIT_INTERRUPTED : code;
}

int cmd_explore(int argc, char **argv)
{
    struct xopts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? LAB_EXIT_OK : LAB_EXIT_USAGE;
    int n = argc - optind;
    if (n <= 0 || n > XPL_FILES_MAX) {
        fprintf(stderr, n <= 0 ? "locklab: explore: no file given\n\n"
                               : "locklab: explore: at most 16 files\n\n");
        explore_usage(stderr);
        return LAB_EXIT_USAGE;
    }
    struct xfile *files = calloc((size_t)n, sizeof *files);
    struct xctx c = {.o = &o};
    const char *tmpdir = getenv("TMPDIR");
    snprintf(c.tmp, sizeof c.tmp, "%s/locklab-explore-%d.yaml", tmpdir && *tmpdir ? tmpdir : "/tmp",
             (int)getpid());
    int code = files ? LAB_EXIT_OK : LAB_EXIT_ENV;
    for (int i = 0; files && i < n; i++) {
        files[i].path = argv[optind + i];
        if (prepare_file(&files[i], c.tmp) != 0)
            code = LAB_EXIT_USAGE;
    }
    unlink(c.tmp);
    struct scenario *probes[XPL_FILES_MAX];
    for (int i = 0; code == LAB_EXIT_OK && i < n; i++)
        probes[i] = files[i].probe;
    if (code == LAB_EXIT_OK) {
        stop_install();
        struct backends b;
        backends_init(&b);
        for (int i = 0; i < n; i++)
            backends_plan(&b, probes[i]);
        c.res = malloc(sizeof *c.res);
        c.cur = malloc(sizeof *c.cur);
        if (!c.res || !c.cur) {
            fprintf(stderr, "locklab: out of memory\n");
            code = LAB_EXIT_ENV;
        } else if ((code = lab_up(probes, n, &b)) == LAB_EXIT_OK) {
            c.env.stock.host = b.stock_srv.host;
            c.env.stock.port = b.stock_srv.port;
            if (o.budget_ns)
                c.deadline = lab_now_ns() + o.budget_ns;
            for (int i = 0; i < n && !lab_stop; i++) {
                int fc = explore_file(&c, &files[i]);
                if (fc > code)
                    code = fc;
                if (fc == LAB_EXIT_ENV || fc == LAB_EXIT_USAGE)
                    break;
            }
            lab_down(&b);
        }
        free(c.res);
        free(c.cur);
    }
    for (int i = 0; files && i < n; i++) {
        free(files[i].text);
        free(files[i].base);
        free(files[i].s);
        free(files[i].probe);
        free(files[i].t);
        for (int j = 0; j < files[i].n_designs; j++) {
            free(files[i].d[j].base);
            for (int k = 0; k < files[i].d[j].n_kept; k++)
                free(files[i].d[j].kept[k].base);
            free(files[i].d[j].kept);
        }
    }
    free(files);
    return lab_stop ? LAB_EXIT_INTERRUPTED : code;
}
