/*
 * explore_shrink.c - the shrinker's candidates: every schedule one step
 * smaller than a failing one, in the order worth trying (an entry dropped
 * first, then one entry rarer, shorter, later, with a smaller clock jump;
 * a time jumps to its bound first, then halfway, never by less than a
 * sixteenth of its range, so a shrink takes a few steps per entry),
 * and the order they descend in (explore_smaller), which is what makes the
 * shrinking end: every candidate is strictly smaller, times are whole
 * milliseconds bounded by the section's ranges, so no chain is infinite.
 * Which candidate is kept (it still fails in one of k runs) is the
 * command's business; how far back along the kept steps the reproduction
 * rate sends it (explore_walk_back) is decided here.
 */
#include <stdio.h>
#include <string.h>

#include "explore.h"

#define MS 1000000LL

static int64_t ms_floor(int64_t ns) { return ns / MS * MS; }

int explore_candidates(const struct explore_spec *sp, const struct xschedule *s,
                       struct xschedule *out, char (*why)[96])
{
    int n = 0;
    char d[32];
    /* drop entry i */
    for (int i = 0; s->n > 1 && i < s->n && n < XPL_CANDIDATES_MAX; i++) {
        struct xschedule *c = &out[n];
        c->n = 0;
        for (int j = 0; j < s->n; j++)
            if (j != i)
                c->f[c->n++] = s->f[j];
        snprintf(why[n++], 96, "dropped %s %.40s", explore_action_words[s->f[i].action],
                 s->f[i].target);
    }
    for (int i = 0; i < s->n && n + 6 <= XPL_CANDIDATES_MAX; i++) {
        const struct xfault *f = &s->f[i];
        /* rarer */
        if (f->count > 1) {
            out[n] = *s;
            out[n].f[i].count--;
            snprintf(why[n++], 96, "entry %d: %d times instead of %d", i + 1, f->count - 1,
                     f->count);
        }
        /* shorter: the shortest the section allows, else halfway there */
        int64_t lo = sp->duration[0] > MS ? sp->duration[0] : MS;
        int64_t step = (sp->duration[1] - lo) / 16 > MS ? (sp->duration[1] - lo) / 16 : MS;
        for (int half = 0; half < 2 && f->duration_ns - lo >= step; half++) {
            int64_t dur = half ? ms_floor(lo + (f->duration_ns - lo) / 2) : lo;
            if (half && f->duration_ns - dur < step)
                break;
            out[n] = *s;
            out[n].f[i].duration_ns = dur;
            explore_dur(d, sizeof d, dur);
            snprintf(why[n++], 96, "entry %d: duration %s", i + 1, d);
        }
        /* later: the latest the section allows, else halfway there (a
         * repeated one still within the run) */
        int64_t hi = sp->at[1];
        int64_t astep = (hi - sp->at[0]) / 16 > MS ? (hi - sp->at[0]) / 16 : MS;
        for (int half = 0; half < 2 && hi - f->at_ns >= astep; half++) {
            int64_t at = half ? ms_floor(f->at_ns + (hi - f->at_ns) / 2) : ms_floor(hi);
            bool fits = f->count == 1 || at * f->count + f->duration_ns <= sp->run_ns * 9 / 10;
            if ((half && at - f->at_ns < astep) || !fits)
                continue;
            out[n] = *s;
            out[n].f[i].at_ns = at;
            explore_dur(d, sizeof d, at);
            snprintf(why[n++], 96, "entry %d: %s %s", i + 1, f->count > 1 ? "every" : "at", d);
        }
        /* a smaller clock jump: halfway to the lease */
        int64_t off = ms_floor(sp->lease_ns + (f->offset_ns - sp->lease_ns) / 2);
        if (f->action == XA_CLOCK_JUMP && off < f->offset_ns && off >= MS) {
            out[n] = *s;
            out[n].f[i].offset_ns = off;
            explore_dur(d, sizeof d, off);
            snprintf(why[n++], 96, "entry %d: offset %s", i + 1, d);
        }
    }
    return n;
}

bool explore_smaller(const struct xschedule *a, const struct xschedule *b)
{
    if (a->n != b->n)
        return a->n < b->n;
    bool strict = false;
    for (int i = 0; i < a->n; i++) {
        const struct xfault *x = &a->f[i], *y = &b->f[i];
        if (x->action != y->action || strcmp(x->target, y->target) != 0 ||
            x->count > y->count || x->duration_ns > y->duration_ns || x->at_ns < y->at_ns ||
            x->offset_ns > y->offset_ns)
            return false;
        strict |= x->count < y->count || x->duration_ns < y->duration_ns ||
                  x->at_ns > y->at_ns || x->offset_ns < y->offset_ns;
    }
    return strict;
}

bool explore_out_of_reach(int fails, int runs, int n) { return (runs - fails) * 10 > 2 * n; }

static bool reaches(int fails, int runs, int n) { return runs >= n && runs > 0 && fails * 10 >= 8 * runs; }

int explore_walk_back(int top, int n, xrate_fn rate, bool (*stop)(void *arg), void *arg,
                      struct xwalk *out)
{
    *out = (struct xwalk){.kept = top};
    if (rate(arg, top, false, &out->top_fails, &out->top_runs) != 0)
        return -1;
    out->fails = out->top_fails;
    out->runs = out->top_runs;
    out->reached = reaches(out->fails, out->runs, n);
    if (out->reached || top == 0)
        return 0;
    /* bisect between a state not known to fail (lo, the trial's own at
     * first) and one that does (hi): a shrink weakens the schedule step by
     * step, so the last state that reproduces is found in about log2(top)
     * measurements instead of one per step */
    int lo = 0, hi = top, good = -1, gf = 0, gr = 0;
    while (hi - lo > 1) {
        if (stop(arg)) {
            out->cut = true;
            break;
        }
        int mid = lo + (hi - lo) / 2, fails, runs;
        if (rate(arg, mid, true, &fails, &runs) != 0)
            return -1;
        if (reaches(fails, runs, n)) {
            lo = mid;
            good = mid, gf = fails, gr = runs;
        } else {
            hi = mid;
        }
    }
    if (good < 0 && lo == 0 && !out->cut) {
        /* nothing after the trial reproduced: the trial's own schedule */
        if (stop(arg)) {
            out->cut = true;
        } else {
            int fails, runs;
            if (rate(arg, 0, true, &fails, &runs) != 0)
                return -1;
            if (reaches(fails, runs, n))
                good = 0, gf = fails, gr = runs;
        }
    }
    if (good >= 0) {
        out->kept = good;
        out->fails = gf;
        out->runs = gr;
        out->reached = true;
    }
    return 0;
}
