/*
 * cmd_explore_shrink.c - what `locklab explore` does with a break
 * (explore_cmd.h): shrink its schedule (harness/explore/'s candidates, the
 * first that still breaks the design in one of k runs kept), then the
 * file's clients, business and run (each value spliced where the author
 * wrote it); then measure how often the smallest reproduces, walking the
 * shrink path back (explore_walk_back decides how) when a step traded the
 * rate away. Every state of the path is kept for that walk.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore.h"
#include "explore_cmd.h"
#include "lex.h"
#include "stop.h"

/* Does sch still break design d: a failure in one of k runs, with the
 * verdict of the break (a violation shrunk into a blocked run would be
 * another finding)? 1 yes, 0 no, -1 the run could not be made. */
static int still_breaks(struct xctx *c, const struct xfile *x, const struct xdesign *d,
                        const struct xschedule *sch)
{
    char *text = xcmd_schedule_text(x, d, sch);
    if (!text)
        return -1;
    int rc = 0;
    for (int r = 0; r < c->o->k && rc == 0 && !lab_stop; r++) {
        enum verdict v;
        bool pass;
        if (xcmd_run_text(c, x, text, d->ops, &v, &pass) != 0)
            rc = -1;
        else if (!pass && v == d->verdict)
            rc = 1;
    }
    free(text);
    return rc;
}

/* d's present state onto its shrink path: 0, or -1 out of memory. */
int xcmd_push_kept(struct xdesign *d)
{
    if (!d->kept && !(d->kept = calloc(XPL_SHRINK_STEPS_MAX + 1, sizeof *d->kept)))
        return -1;
    if (d->n_kept > XPL_SHRINK_STEPS_MAX)
        return -1;
    struct xkept *k = &d->kept[d->n_kept];
    k->sch = d->final;
    k->base = d->base ? strdup(d->base) : NULL;
    if (d->base && !k->base)
        return -1;
    d->n_kept++;
    return 0;
}

/* A step kept: said on the path and in the log, and remembered. */
static int kept_step(struct xdesign *d, const char *why, FILE *log)
{
    if (d->n_path < 16)
        snprintf(d->path[d->n_path++], sizeof d->path[0], "%s", why);
    d->shrink_steps++;
    if (log) {
        char sh[320];
        explore_short(&d->final, sh, sizeof sh);
        fprintf(log, "  shrink %s: %s -> %s\n", d->ops->name, why, sh);
    }
    return xcmd_push_kept(d);
}

/* Shrink d's failing schedule (d->final) step by step: the first candidate
 * that still breaks it is kept, until none does or the budget is spent.
 * 0, or -1 when a run could not be made. */
int xcmd_shrink_schedule(struct xctx *c, struct xfile *x, struct xdesign *d, FILE *log)
{
    struct xschedule *cand = malloc(sizeof *cand * XPL_CANDIDATES_MAX);
    char (*why)[96] = malloc(sizeof *why * XPL_CANDIDATES_MAX);
    int rc = cand && why ? 0 : -1;
    for (bool more = true; more && rc == 0 && d->shrink_steps < XPL_SHRINK_STEPS_MAX;) {
        int n = explore_candidates(&x->sp, &d->final, cand, why);
        more = false;
        for (int i = 0; i < n && rc == 0; i++) {
            if (xcmd_over_budget(c)) {
                d->shrink_cut = true;
                break;
            }
            int b = still_breaks(c, x, d, &cand[i]);
            if (b < 0) {
                rc = -1;
            } else if (b > 0) {
                d->final = cand[i];
                rc = kept_step(d, why[i], log);
                more = true;
                break;
            }
        }
    }
    free(cand);
    free(why);
    return rc;
}

#define MS INT64_C(1000000)

/* base with the scalar at key replaced by a smaller value (why says
 * which), or NULL when key is not in the text or is as small as it goes:
 * clients halved (at least 2: one client has nobody to overlap with),
 * workload.business halved (to 0 below 2 ms), run.max_duration cut to
 * three quarters (never before the schedule's last fault ends plus twice
 * the lease, at least 500 ms). */
static char *knob_candidate(const char *base, const char *key, const struct xfile *x,
                            const struct xschedule *sch, char *why, size_t n)
{
    size_t a, b, len = strlen(base);
    if (explore_scalar_at(base, len, key, &a, &b) != 0 || b <= a || b - a > 60)
        return NULL;
    char old[64], with[64];
    memcpy(old, base + a, b - a);
    old[b - a] = '\0';
    int64_t v;
    if (!strcmp(key, "clients")) {
        if (int_scan(old, &v) != 0 || v <= 2)
            return NULL;
        snprintf(with, sizeof with, "%" PRId64, v / 2 < 2 ? 2 : v / 2);
    } else if (!strcmp(key, "workload.business")) {
        if (duration_parse(old, &v) != 0 || v < 2 * MS)
            return NULL;
        explore_dur(with, sizeof with, v / 2 / MS * MS);
    } else {
        if (duration_parse(old, &v) != 0)
            return NULL;
        int64_t end = 0, lease = 2 * x->sp.lease_ns > 500 * MS ? 2 * x->sp.lease_ns : 500 * MS;
        for (int i = 0; i < sch->n; i++) {
            const struct xfault *f = &sch->f[i];
            if (f->at_ns * f->count + f->duration_ns > end)
                end = f->at_ns * f->count + f->duration_ns;
        }
        int64_t to = v * 3 / 4 / MS * MS;
        if (to < end + lease)
            to = (end + lease + MS - 1) / MS * MS;
        if (to >= v - 100 * MS)
            return NULL;
        explore_dur(with, sizeof with, to);
    }
    snprintf(why, n, "%.20s %.30s instead of %.30s", key, with, old);
    return explore_splice(base, len, a, b, with);
}

/* Does d's text with its final schedule load (quietly)? */
static bool text_loads(struct xctx *c, const struct xfile *x, const struct xdesign *d)
{
    char *text = xcmd_schedule_text(x, d, &d->final);
    struct scenario *s = text ? calloc(1, sizeof *s) : NULL;
    bool ok = s && xcmd_load_text(c->tmp, c->tmp, text, s, 2) == 0;
    free(s);
    free(text);
    return ok;
}

/* After the schedule: fewer clients, shorter business, a shorter run, each
 * kept when the design still breaks (explore_scalar_at finds the value
 * where the author wrote it; a key the file does not give is left alone). */
int xcmd_shrink_text(struct xctx *c, struct xfile *x, struct xdesign *d, FILE *log)
{
    static const char *const knobs[] = {"clients", "workload.business", "run.max_duration"};
    int rc = 0;
    for (bool more = true; more && rc == 0 && d->shrink_steps < XPL_SHRINK_STEPS_MAX;) {
        more = false;
        for (size_t k = 0; k < sizeof knobs / sizeof knobs[0] && rc == 0; k++) {
            if (xcmd_over_budget(c)) {
                d->shrink_cut = true;
                return 0;
            }
            char why[96];
            char *cand = knob_candidate(d->base ? d->base : x->base, knobs[k], x, &d->final,
                                        why, sizeof why);
            if (!cand)
                continue;
            char *keep = d->base;
            d->base = cand;
            /* a value the rest of the file does not allow (fewer clients
             * than its hosts: name) is no candidate */
            int b = text_loads(c, x, d) ? still_breaks(c, x, d, &d->final) : 0;
            if (b > 0) {
                free(keep);
                rc = kept_step(d, why, log);
                more = true;
                break;
            }
            d->base = keep;
            free(cand);
            rc = b < 0 ? -1 : 0;
        }
    }
    return rc;
}

/* How often d's final schedule, on d's text, breaks it with the same
 * verdict in n runs (*fails of *runs). With give_up, the runs stop once 8
 * of n can no longer be reached. 0, or -1 when a run could not be made. */
static int repro_rate(struct xctx *c, const struct xfile *x, const struct xdesign *d,
                      bool give_up, int *fails, int *runs)
{
    char *text = xcmd_schedule_text(x, d, &d->final);
    if (!text)
        return -1;
    *fails = *runs = 0;
    for (int r = 0; r < c->o->n && !lab_stop; r++) {
        if (give_up && explore_out_of_reach(*fails, *runs, c->o->n))
            break;
        enum verdict v;
        bool pass;
        if (xcmd_run_text(c, x, text, d->ops, &v, &pass) != 0) {
            free(text);
            return -1;
        }
        (*runs)++;
        *fails += !pass && v == d->verdict;
    }
    free(text);
    return 0;
}

/* d at state i of its shrink path. 0, or -1 out of memory. */
static int take_kept(struct xdesign *d, int i)
{
    char *base = d->kept[i].base ? strdup(d->kept[i].base) : NULL;
    if (d->kept[i].base && !base)
        return -1;
    free(d->base);
    d->base = base;
    d->final = d->kept[i].sch;
    return 0;
}

struct xwalk_arg {
    struct xctx *c;
    const struct xfile *x;
    struct xdesign *d;
};

static int walk_rate(void *arg, int state, bool give_up, int *fails, int *runs)
{
    struct xwalk_arg *w = arg;
    if (take_kept(w->d, state) != 0)
        return -1;
    return repro_rate(w->c, w->x, w->d, give_up, fails, runs);
}

static bool walk_stop(void *arg) { return xcmd_over_budget(((struct xwalk_arg *)arg)->c); }

/* d's reproduction rate, its shrink path walked back (bisected) to the
 * last state that reproduces in 8 of n (explore_walk_back); the path says
 * where it went. */
int xcmd_reproduce(struct xctx *c, const struct xfile *x, struct xdesign *d)
{
    struct xwalk_arg arg = {c, x, d};
    struct xwalk w;
    int top = d->n_kept - 1;
    if (explore_walk_back(top, c->o->n, walk_rate, walk_stop, &arg, &w) != 0 ||
        take_kept(d, w.kept) != 0)
        return -1;
    d->repro_fails = w.fails;
    d->repro_runs = w.runs;
    if (top == 0 || (w.kept == top && w.reached))
        return 0; /* nothing to walk back, or no need */
    if (w.kept < top) {
        d->shrink_steps = w.kept;
        d->n_path = w.kept < 15 ? w.kept : 15;
    } else if (d->n_path > 15) {
        d->n_path = 15;
    }
    if (w.kept < top)
        snprintf(d->path[d->n_path++], sizeof d->path[0],
                 "walked back %d step%s: %d of %d runs here, %d of %d after step %d",
                 top - w.kept, top - w.kept == 1 ? "" : "s", w.fails, w.runs, w.top_fails,
                 w.top_runs, top);
    else
        snprintf(d->path[d->n_path++], sizeof d->path[0],
                 "%s: no earlier state reproduced in 8 of %d",
                 w.cut ? "the budget stopped the walk back" : "walked back to the trial",
                 c->o->n);
    return 0;
}

