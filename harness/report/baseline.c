/*
 * baseline.c - build and compare baselines (see baseline.h). A result is
 * known by its step: scenario, design, clients, key mode and fencing.
 * Within each round of a run, every design's throughput and acquire p50
 * are divided by the reference design's at the same step and round (the
 * mean of the reference's runs just before and after it: `run` interleaves
 * them, ref, A, ref, B, ref); the median over the rounds is the figure. A figure whose result (or the
 * reference's) was client-bound in any round is left out: it measured the
 * client machine; with one client it is compared all the same (client_bound). Verdicts are compared in every round: a change either
 * way is a regression (a design that was safe now breaks, or an
 * expectation stopped testing anything), as is a step the run no longer
 * has.
 */
#include "baseline.h"
#include "junit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The step a result belongs to, as text: "scenario impl clients keys fencing". */
static void step_of(json_t *r, const char *impl, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s %d %s %s", str(r, "scenario"), impl ? impl : str(r, "impl"),
             (int)num(r, "clients"), str(r, "keys"), str(r, "fencing"));
}

static int round_of(json_t *r)
{
    json_t *v = json_object_get(r, "round");
    return json_is_integer(v) ? (int)json_integer_value(v) : 1;
}

/* Was r client-bound in a way that hides the design's speed? Not with one
 * client: its throughput is that client's chain of round trips, its own
 * CPU a part of every cycle whatever else runs, and a slower client path is
 * exactly what the ratio is for (a single-client gate pinned to one CPU, as
 * the project's own smoke runs, is "client-bound" by the rule's letter in
 * every round). */
static bool client_bound(json_t *r)
{
    json_t *clients = json_object_get(r, "clients");
    if (json_is_integer(clients) && json_integer_value(clients) == 1)
        return false;
    return json_is_true(json_object_get(json_object_get(r, "cpu"), "client_bound"));
}

static double p50(json_t *r)
{
    return num(json_object_get(json_object_get(r, "latency_us"), "acquire"), "p50");
}

/* The result of step (with impl replaced) in round, or NULL. */
static json_t *find(json_t *results, json_t *like, const char *impl, int round)
{
    char want[512], have[512];
    step_of(like, impl, want, sizeof want);
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        step_of(r, NULL, have, sizeof have);
        if (round_of(r) == round && strcmp(want, have) == 0)
            return r;
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    if (n == 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* What the run says of the step of r: its verdict in every round (verdicts
 * joined by "/" when they differ), and the median speed ratios to the
 * reference (NAN when not measured or client-bound). */
struct step_figures {
    char verdict[64];
    double throughput, p50;
    int rounds;
    bool bound;
};

/* The reference's runs nearest before and after results[at] in run order at
 * the same step and round (NULL where there is none). A run interleaves
 * the reference (ref, A, ref, B, ref), so these bracket it; an older run
 * has the reference once per round, before or after. */
static void bracket(json_t *results, size_t at, const char *reference, json_t **before,
                    json_t **after)
{
    json_t *like = json_array_get(results, at);
    char want[512], have[512];
    step_of(like, reference, want, sizeof want);
    *before = *after = NULL;
    size_t n = json_array_size(results);
    for (size_t i = at; i-- > 0 && !*before;) {
        json_t *r = json_array_get(results, i);
        step_of(r, NULL, have, sizeof have);
        if (round_of(r) == round_of(like) && strcmp(want, have) == 0)
            *before = r;
    }
    for (size_t i = at + 1; i < n && !*after; i++) {
        json_t *r = json_array_get(results, i);
        step_of(r, NULL, have, sizeof have);
        if (round_of(r) == round_of(like) && strcmp(want, have) == 0)
            *after = r;
    }
}

/* The reference's figure around a run: the mean of the runs bracketing it. */
static double ref_figure(json_t *before, json_t *after, double (*get)(json_t *))
{
    if (before && after)
        return (get(before) + get(after)) / 2;
    return get(before ? before : after);
}

static double throughput(json_t *r)
{
    return num(r, "throughput_per_s");
}

static int figures(json_t *results, json_t *like, const char *reference, struct step_figures *f,
                   struct lab_err *err)
{
    size_t n = json_array_size(results);
    double *tp = calloc(n + 1, sizeof *tp), *lat = calloc(n + 1, sizeof *lat);
    if (!tp || !lat) {
        free(tp);
        free(lat);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    int m = 0;
    bool is_ref = strcmp(str(like, "impl"), reference) == 0;
    char want[512], have[512];
    step_of(like, NULL, want, sizeof want);
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(results, i);
        step_of(r, NULL, have, sizeof have);
        if (strcmp(want, have) != 0)
            continue;
        f->rounds++;
        const char *v = str(r, "verdict");
        if (!f->verdict[0])
            snprintf(f->verdict, sizeof f->verdict, "%s", v);
        else if (!strstr(f->verdict, v)) {
            size_t len = strlen(f->verdict);
            snprintf(f->verdict + len, sizeof f->verdict - len, "/%s", v);
        }
        if (is_ref)
            continue;
        json_t *before, *after;
        bracket(results, i, reference, &before, &after);
        if (!before && !after) {
            char step[512];
            step_of(like, reference, step, sizeof step);
            lab_err_set(err, ENOENT, "the reference design has no result at step %s, round %d",
                        step, round_of(r));
            free(tp);
            free(lat);
            return -1;
        }
        if (client_bound(r) || (before && client_bound(before)) || (after && client_bound(after))) {
            f->bound = true;
            continue;
        }
        tp[m] = throughput(r) / ref_figure(before, after, throughput);
        lat[m++] = p50(r) / ref_figure(before, after, p50);
    }
    f->throughput = f->bound || is_ref ? NAN : median(tp, m);
    f->p50 = f->bound || is_ref ? NAN : median(lat, m);
    free(tp);
    free(lat);
    return 0;
}

json_t *baseline_build(json_t *summary, const char *reference, double tol_throughput,
                       double tol_p50, struct lab_err *err)
{
    json_t *results = json_object_get(summary, "results");
    json_t *out = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        if (round_of(r) != 1 || json_integer_value(json_object_get(r, "repeat")) > 1)
            continue;
        struct step_figures f;
        if (figures(results, r, reference, &f, err) != 0) {
            json_decref(out);
            return NULL;
        }
        json_t *e = json_pack("{s:s, s:s, s:i, s:s, s:s, s:s}", "scenario", str(r, "scenario"),
                              "impl", str(r, "impl"), "clients", (int)num(r, "clients"), "keys",
                              str(r, "keys"), "fencing", str(r, "fencing"), "verdict", f.verdict);
        if (!isnan(f.throughput) && !isnan(f.p50) && strcmp(str(r, "impl"), reference) != 0) {
            json_object_set_new(e, "throughput", json_real(f.throughput));
            json_object_set_new(e, "acquire_p50", json_real(f.p50));
        }
        json_array_append_new(out, e);
    }
    if (json_array_size(out) == 0) {
        json_decref(out);
        lab_err_set(err, ENOENT, "no results to save");
        return NULL;
    }
    return json_pack("{s:i, s:s, s:s, s:{s:f, s:f}, s:o}", "locklab_baseline", 1, "reference",
                     reference, "run_id", str(summary, "run_id"), "tolerance", "throughput",
                     tol_throughput, "acquire_p50", tol_p50, "results", out);
}

/* ------------------------------------------------------------ comparing */

struct check {
    char name[560];   /* the testcase: step and figure */
    char detail[200]; /* baseline, now, change */
    bool failed;
};

struct checks {
    struct check *v;
    int n, cap;
};

static struct check *add(struct checks *c)
{
    if (c->n == c->cap) {
        int cap = c->cap ? c->cap * 2 : 64;
        struct check *v = realloc(c->v, (size_t)cap * sizeof *v);
        if (!v)
            return NULL;
        c->v = v;
        c->cap = cap;
    }
    memset(&c->v[c->n], 0, sizeof c->v[0]);
    return &c->v[c->n++];
}

/* One testcase per compared figure, its detail the failure message. */
static int write_junit(const struct checks *c, const char *path, struct lab_err *err)
{
    struct junit_case *jc = calloc((size_t)c->n + 1, sizeof *jc);
    if (!jc) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    for (int i = 0; i < c->n; i++)
        jc[i] = (struct junit_case){.classname = "baseline", .name = c->v[i].name,
                                    .failure = c->v[i].failed ? c->v[i].detail : NULL};
    struct junit_suite s = {.title = "locklab baseline", .name = "baseline", .cases = jc,
                            .n = c->n};
    int rc = junit_write(path, &s, err);
    free(jc);
    return rc;
}

/* A speed figure: ratio now against ratio then; higher_is_better says
 * which way a regression goes. */
static void speed_check(struct checks *c, const char *step, const char *what, double then,
                        double now, double tol, bool higher_is_better, FILE *out)
{
    struct check *k = add(c);
    if (!k)
        return;
    snprintf(k->name, sizeof k->name, "%s %s", step, what);
    double change = now / then - 1;
    k->failed = higher_is_better ? change < -tol : change > tol;
    snprintf(k->detail, sizeof k->detail, "%s ratio to the reference %.3f, baseline %.3f "
             "(%+.0f %%, tolerance %.0f %%)", what, now, then, change * 100, tol * 100);
    fprintf(out, "%-52s %-12s %9.3f %9.3f %+7.0f%%  %s\n", step, what, then, now, change * 100,
            k->failed ? "REGRESSED" : "ok");
}

int baseline_compare(json_t *baseline, json_t *summary, FILE *out, const char *junit,
                     struct lab_err *err)
{
    const char *reference = str(baseline, "reference");
    json_t *tol = json_object_get(baseline, "tolerance");
    double tol_tp = isnan(num(tol, "throughput")) ? BASELINE_TOL_THROUGHPUT : num(tol, "throughput");
    double tol_lat = isnan(num(tol, "acquire_p50")) ? BASELINE_TOL_P50 : num(tol, "acquire_p50");
    json_t *entries = json_object_get(baseline, "results");
    if (!*reference || !json_is_array(entries)) {
        lab_err_set(err, EINVAL, "not a locklab baseline (no reference or results)");
        return -1;
    }
    json_t *results = json_object_get(summary, "results");
    struct checks c = {0};
    fprintf(out, "\nbaseline (reference %s; speed as ratios to it, medians over rounds)\n"
                 "%-52s %-12s %9s %9s %8s\n", reference, "step", "figure", "baseline", "now",
            "change");
    size_t i;
    json_t *e;
    int rc = 0;
    json_array_foreach(entries, i, e) {
        char step[512];
        step_of(e, NULL, step, sizeof step);
        struct check *k = add(&c);
        if (!k)
            break;
        snprintf(k->name, sizeof k->name, "%s verdict", step);
        json_t *first = find(results, e, NULL, 1);
        if (!first) {
            k->failed = true;
            snprintf(k->detail, sizeof k->detail, "the run has no result at this step");
            fprintf(out, "%-52s %-12s %9s %9s %8s  REGRESSED (missing)\n", step, "verdict",
                    str(e, "verdict"), "-", "");
            continue;
        }
        struct step_figures f;
        if (figures(results, e, reference, &f, err) != 0) {
            rc = -1;
            break;
        }
        k->failed = strcmp(f.verdict, str(e, "verdict")) != 0;
        snprintf(k->detail, sizeof k->detail, "verdict %s, baseline %s", f.verdict,
                 str(e, "verdict"));
        fprintf(out, "%-52s %-12s %9s %9s %8s  %s\n", step, "verdict", str(e, "verdict"),
                f.verdict, "", k->failed ? "REGRESSED" : "ok");
        json_t *etol = json_object_get(e, "tolerance"); /* per step, optional */
        double t_tp = isnan(num(etol, "throughput")) ? tol_tp : num(etol, "throughput");
        double t_lat = isnan(num(etol, "acquire_p50")) ? tol_lat : num(etol, "acquire_p50");
        if (isnan(num(e, "throughput")))
            continue;
        if (f.bound) {
            fprintf(out, "%-52s %-12s %9s %9s %8s  not compared: client-bound\n", step, "speed",
                    "", "", "");
            continue;
        }
        speed_check(&c, step, "throughput", num(e, "throughput"), f.throughput, t_tp, true, out);
        speed_check(&c, step, "acquire_p50", num(e, "acquire_p50"), f.p50, t_lat, false, out);
    }
    int failed = 0;
    for (int k = 0; k < c.n; k++)
        failed += c.v[k].failed;
    if (rc == 0) {
        fprintf(out, "%d figures compared, %d regressed\n", c.n, failed);
        if (junit && write_junit(&c, junit, err) != 0)
            rc = -1;
    }
    free(c.v);
    return rc < 0 ? -1 : failed > 0;
}
