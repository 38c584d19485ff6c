/*
 * plot_run.c - draw a run's results with gnuplot (see plot.h; the command
 * `locklab plot RUN_DIR` is cmd/cmd_plot.c).
 *
 * For each scenario in RUN_DIR/summary.json, four plots, each written next to
 * the results as RUN_DIR/<scenario>-<plot>.png and .svg: acquire latency by
 * percentile (from the .hgrm files, drawn the way HdrHistogram's plotter draws
 * them), throughput and acquire p99 against clients (two panels), wakeups per
 * release, and acquire latency
 * over time (from the .timeline.tsv files, when the run wrote them).
 *
 * The C side only gathers numbers. This file decides what each plot shows:
 * which results[] entries, their legend titles, colours, units and notes.
 * Reading the results and writing the data files into RUN_DIR/plot-data/
 * is plot_data.c; running gnuplot on a script from plots/ with -e variables
 * naming the data, the outputs and the titles is plot_gnuplot.c. All drawing
 * lives in the scripts, so a plot's look changes without a rebuild.
 *
 * An implementation keeps its colour across the plots of a scenario: the C
 * side numbers implementations in summary.json's order and passes each
 * series its gnuplot linetype.
 *
 * plot_run_dir() is the whole command without option parsing, also called
 * by `locklab run` after a run when gnuplot is installed.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot.h"
#include "lab.h"
#include "plot_data.h"
#include "plot_gnuplot.h"
#include "plot_holds.h"

#define PLOT_MS_ABOVE_US 10000.0  /* largest latency above 10 ms: the y unit is ms */
#define PLOT_TIMELINE_POINTS 24000 /* timeline budget over all series (SVG size) */
#define PLOT_TIMELINE_MIN 1000    /* ... but at least this many points per series */
#define PLOT_MAX_IMPLS 256        /* implementations per scenario */
#define PLOT_MAX_PICK 1024        /* entries per scenario in one plot */

/* State of one plot_run_dir() call. */
struct plot_ctx {
    const char *run_dir;        /* as given */
    const char *run_id;         /* summary.json's run_id, for subtitles */
    char data_dir[PATH_MAX];    /* RUN_DIR/plot-data */
    struct plot_gnuplot gp;     /* gnuplot, its scripts, images into run_dir */
    bool quiet;                 /* print only errors */
    const struct plot_entry *e; /* the usable results[] entries */
    int n;                      /* how many */
    int code;                   /* worst exit code so far */
};

/* --------------------------------------------------------------- utilities */

static bool plot_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void plot_note(const struct plot_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void plot_note(const struct plot_ctx *c, const char *fmt, ...)
{
    if (c->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("locklab plot: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Keep the worst exit code: environment beats usage beats ok. */
static void plot_fail(struct plot_ctx *c, int code)
{
    if (code == LAB_EXIT_ENV || c->code == LAB_EXIT_OK)
        c->code = code;
}

/* Draw one plot of scenario (see plot_gnuplot_draw()), keeping the worst
 * exit code. */
static void plot_draw(struct plot_ctx *c, const char *scenario, const char *name,
                      struct plot_args *a)
{
    int code = plot_gnuplot_draw(&c->gp, scenario, name, a);
    if (code != LAB_EXIT_OK)
        plot_fail(c, code);
}

/* ---------------------------------------------------------- scenario data */

/* One scenario of the run, as the plots see it. */
struct plot_scn {
    const char *name;                 /* scenario name */
    const char *impls[PLOT_MAX_IMPLS]; /* in summary.json's order: linetype = index + 1 */
    int ni;                           /* how many */
    bool mixed;                       /* some entry not on the hot key: titles say which */
    bool fence_mixed;                 /* fenced and unfenced steps: titles say which */
    bool sweep;                       /* several client counts */
    long lo, hi;                      /* smallest and largest client count */
    char subtitle[256];               /* "run <id>, 32 clients" */
};

static void scenario_init(const struct plot_ctx *c, const char *name, struct plot_scn *s)
{
    memset(s, 0, sizeof *s);
    s->name = name;
    s->lo = LONG_MAX;
    for (int i = 0; i < c->n; i++) {
        const struct plot_entry *e = &c->e[i];
        if (strcmp(e->scenario, name) != 0)
            continue;
        int j = 0;
        while (j < s->ni && strcmp(s->impls[j], e->impl) != 0)
            j++;
        if (j == s->ni && s->ni < PLOT_MAX_IMPLS)
            s->impls[s->ni++] = e->impl;
        s->mixed |= strcmp(e->keys, "hot") != 0;
        s->fence_mixed |= e->fenced;
        s->lo = e->clients < s->lo ? e->clients : s->lo;
        s->hi = e->clients > s->hi ? e->clients : s->hi;
    }
    s->sweep = s->lo != s->hi;
    if (!s->sweep)
        snprintf(s->subtitle, sizeof s->subtitle, "run %s, %ld client%s", c->run_id, s->lo,
                 s->lo == 1 ? "" : "s");
    else
        snprintf(s->subtitle, sizeof s->subtitle, "run %s, %ld to %ld clients", c->run_id,
                 s->lo, s->hi);
}

/* Linetype of an entry: its implementation's colour; a fenced step of a
 * scenario that also ran unfenced ones takes a colour of its own after
 * the implementations' (so the two steps never read as one). */
static int entry_lt(const struct plot_scn *s, const struct plot_entry *e)
{
    for (int k = 0; k < s->ni; k++)
        if (!strcmp(s->impls[k], e->impl))
            return k + 1 + (e->fenced && s->fence_mixed ? s->ni : 0);
    return 1;
}

/* Do a and b belong to the same line of a per-implementation plot: the
 * same implementation and fencing, and the same key mode unless only one
 * entry per implementation and fencing is wanted? */
static bool same_line(const struct plot_entry *a, const struct plot_entry *b, bool any_keys)
{
    return !strcmp(a->impl, b->impl) && a->fenced == b->fenced &&
           (any_keys || !strcmp(a->keys, b->keys));
}

/* Dash type of an entry: solid for the hot key, dashed for a key per client. */
static int entry_dt(const struct plot_entry *e)
{
    return !strcmp(e->keys, "hot") ? 1 : !strcmp(e->keys, "per-client") ? 2 : 3;
}

/* Legend text of an entry: the implementation, the key mode when the
 * scenario ran more than one, fenced or unfenced when it ran both. */
static void entry_title(const struct plot_scn *s, const struct plot_entry *e, char *buf,
                        size_t n)
{
    const char *fence = !s->fence_mixed ? "" : e->fenced ? ", fenced" : ", unfenced";
    if (!s->mixed)
        snprintf(buf, n, "%s%s", e->impl, fence);
    else if (!strcmp(e->keys, "hot"))
        snprintf(buf, n, "%s, one hot key%s", e->impl, fence);
    else if (!strcmp(e->keys, "per-client"))
        snprintf(buf, n, "%s, key per client%s", e->impl, fence);
    else
        snprintf(buf, n, "%s, keys %s%s", e->impl, e->keys, fence);
}

/* The entries the per-implementation plots draw (latency, wakeups,
 * timeline): all of them outside a sweep; in a sweep, of each
 * implementation, fencing and key mode the one with the most clients.
 * With one_per_impl, a single entry per implementation and fencing: the
 * hot key first, then the most clients. Fills sel with indices into c->e, in implementation
 * order; returns how many. */
static int scenario_pick(const struct plot_ctx *c, const struct plot_scn *s, bool one_per_impl,
                         int *sel, int max)
{
    int n = 0;
    for (int k = 0; k < s->ni; k++)
        for (int i = 0; i < c->n; i++) {
            const struct plot_entry *e = &c->e[i];
            if (strcmp(e->scenario, s->name) != 0 || strcmp(e->impl, s->impls[k]) != 0)
                continue;
            int j = 0;
            while (j < n && !same_line(&c->e[sel[j]], e, one_per_impl))
                j++;
            if (j == n || (!s->sweep && !one_per_impl)) {
                if (n < max)
                    sel[n++] = i;
                continue;
            }
            const struct plot_entry *old = &c->e[sel[j]];
            bool e_hot = !strcmp(e->keys, "hot"), old_hot = !strcmp(old->keys, "hot");
            if ((one_per_impl && e_hot && !old_hot) ||
                (e_hot == old_hot && e->clients > old->clients))
                sel[j] = i;
        }
    return n;
}

/* Subtitle of a plot drawing the entries sel picked: in a sweep, say which
 * step each line is. */
static void pick_subtitle(const struct plot_ctx *c, const struct plot_scn *s, const int *sel,
                          int n, char *buf, size_t len)
{
    bool same = true;
    for (int i = 1; i < n; i++)
        same &= c->e[sel[i]].clients == c->e[sel[0]].clients;
    if (!s->sweep || n == 0)
        snprintf(buf, len, "%s", s->subtitle);
    else if (same)
        snprintf(buf, len, "run %s, %ld clients (the largest step of the %ld to %ld sweep)",
                 c->run_id, c->e[sel[0]].clients, s->lo, s->hi);
    else
        snprintf(buf, len, "run %s, each at its largest client count (sweep %ld to %ld)",
                 c->run_id, s->lo, s->hi);
}

static int plot_datafile(struct plot_ctx *c, char *buf, size_t n, const char *scenario,
                         const char *name)
{
    if (plot_fmt(buf, n, "%s/%s-%s.dat", c->data_dir, scenario, name) != 0) {
        fprintf(stderr, "locklab plot: path too long under %s\n", c->data_dir);
        plot_fail(c, LAB_EXIT_USAGE);
        return -1;
    }
    return 0;
}

static void plot_write_failed(struct plot_ctx *c, const char *path)
{
    fprintf(stderr, "locklab plot: cannot write %s: %s\n", path, strerror(errno));
    plot_fail(c, LAB_EXIT_ENV);
}

/* The y unit for latencies up to max_us: "µs" (scale 1) or "ms" (1000). */
static double latency_unit(double max_us, const char **unit)
{
    *unit = max_us > PLOT_MS_ABOVE_US ? "ms" : "µs";
    return max_us > PLOT_MS_ABOVE_US ? 1000.0 : 1.0;
}


/* ------------------------------------- latency plots: the shared steps */

/* Read one entry's file into s: sets *floored when a latency was under
 * PLOT_FLOOR_US and raises *xmax to the largest x. 0, or -1. */
typedef int (*latency_reader)(const char *path, struct plot_series *s, bool *floored,
                              double *xmax);

/* What sets the latency and timeline plots apart in reading their files. */
struct latency_kind {
    const char *suffix;     /* file read per entry: <run_dir>/<impl>/<files><suffix> */
    bool optional;          /* a missing file is passed over without a note */
    bool solid;             /* every line solid (else dashed by key mode) */
    latency_reader read;    /* fills a series from the file */
    const char *unreadable; /* note on a file with nothing usable ... */
    const char *left_out;   /* ... and what it is left out of */
};

/* Add a series to set for each entry of sel whose file reads, in sel's
 * order; an entry whose file has nothing usable is left out with a note. */
static void latency_read(struct plot_ctx *c, const struct plot_scn *scn,
                         const struct latency_kind *k, const int *sel, int ns,
                         struct plot_set *set, bool *floored, double *xmax)
{
    for (int i = 0; i < ns; i++) {
        const struct plot_entry *e = &c->e[sel[i]];
        char path[PATH_MAX], title[160];
        if (plot_fmt(path, sizeof path, "%s/%s/%s%s", c->run_dir, e->impl, e->files,
                     k->suffix) != 0 ||
            (k->optional && access(path, F_OK) != 0))
            continue;
        entry_title(scn, e, title, sizeof title);
        struct plot_series *s =
            plot_set_add(set, title, entry_lt(scn, e), k->solid ? 1 : entry_dt(e));
        if (!s || k->read(path, s, floored, xmax) != 0 || s->n == 0) {
            plot_note(c, "%s: %s in %s: %s left out of the %s", scn->name, k->unreadable,
                      path, title, k->left_out);
            if (s)
                plot_set_drop_last(set);
        }
    }
}

/* Write set (latencies in µs, scaled to µs or ms) to the plot's data file
 * and draw plot name with the subtitle of sel, unit, x_name = x and note;
 * frees set. */
static void latency_draw(struct plot_ctx *c, const struct plot_scn *scn, const char *name,
                         const int *sel, int ns, struct plot_set *set, const char *x_name,
                         double x, const char *note, const char *bands)
{
    const char *unit;
    double scale = latency_unit(plot_set_ymax(set), &unit);
    char data[PATH_MAX], subtitle[256];
    pick_subtitle(c, scn, sel, ns, subtitle, sizeof subtitle);
    if (plot_datafile(c, data, sizeof data, scn->name, name) == 0) {
        if (plot_set_write(set, data, scale, PLOT_FLOOR_US / scale) != 0) {
            plot_write_failed(c, data);
        } else {
            struct plot_args a;
            plot_args_init(&a, scn->name, subtitle, data, set);
            plot_args_str(&a, "unit", unit);
            plot_args_num(&a, x_name, x);
            plot_args_str(&a, "note", note);
            if (bands)
                plot_args_str(&a, "bands", bands);
            plot_draw(c, scn->name, name, &a);
        }
    }
    plot_set_free(set);
}

/* -------------------------------------------------- 1. latency percentiles */

/* plot_hgrm_read(), raising *xmax to the series' last x (its 1/(1-p)). */
static int latency_hgrm_read(const char *path, struct plot_series *s, bool *floored,
                             double *xmax)
{
    if (plot_hgrm_read(path, s, floored) != 0)
        return -1;
    if (s->n > 0 && s->x[s->n - 1] > *xmax)
        *xmax = s->x[s->n - 1];
    return 0;
}

static void plot_latency(struct plot_ctx *c, const struct plot_scn *scn)
{
    static const struct latency_kind kind = {
        .suffix = ".acquire.hgrm", .read = latency_hgrm_read,
        .unreadable = "no acquire latencies", .left_out = "latency plot"};
    int sel[PLOT_MAX_PICK];
    int ns = scenario_pick(c, scn, false, sel, PLOT_MAX_PICK);
    struct plot_set set = {0};
    bool floored = false;
    double xmax = 1;
    latency_read(c, scn, &kind, sel, ns, &set, &floored, &xmax);
    if (set.n == 0) {
        plot_note(c, "%s: no .acquire.hgrm files: no latency plot", scn->name);
        plot_set_free(&set);
        return;
    }
    latency_draw(c, scn, "latency", sel, ns, &set, "xmax", xmax,
                 floored ? "latencies under 1 µs (recorded as 0) are drawn at 1 µs; "
                           "the last point of a line is the maximum, at 1/(1-p) = count"
                         : "the last point of each line is the maximum, drawn at "
                           "1/(1-p) = sample count", NULL);
}

/* ------------------------------------------------- 2. throughput / clients */

/* The series of entry e's line in set (the same title), a new one when it
 * has none yet; NULL when out of memory. */
static struct plot_series *line_of(struct plot_set *set, const char *title, int lt, int dt)
{
    for (int j = 0; j < set->n; j++)
        if (!strcmp(set->s[j].title, title))
            return &set->s[j];
    return plot_set_add(set, title, lt, dt);
}

/* Throughput (top panel) and acquire p99 (bottom panel) against clients,
 * one line per implementation, key mode and fencing in both: set holds the
 * throughput, p99 the same lines' p99 in us (a step without a p99 is left
 * out of the bottom panel only). */
static void plot_throughput(struct plot_ctx *c, const struct plot_scn *scn)
{
    struct plot_set set = {0}, p99 = {0};
    double ylo = INFINITY, yhi = 0;
    bool floored = false; /* a p99 under 1 us: drawn at 1 us */
    for (int k = 0; k < scn->ni; k++)
        for (int i = 0; i < c->n; i++) {
            const struct plot_entry *e = &c->e[i];
            if (strcmp(e->scenario, scn->name) != 0 || strcmp(e->impl, scn->impls[k]) != 0 ||
                !isfinite(e->throughput) || e->clients < 1)
                continue;
            floored |= e->acquire_p99 < PLOT_FLOOR_US;
            char title[160];
            entry_title(scn, e, title, sizeof title);
            struct plot_series *s = line_of(&set, title, k + 1, entry_dt(e));
            struct plot_series *q = line_of(&p99, title, k + 1, entry_dt(e));
            if (!s || !q || plot_series_push(s, (double)e->clients, e->throughput) != 0 ||
                (isfinite(e->acquire_p99) &&
                 plot_series_push(q, (double)e->clients, e->acquire_p99) != 0)) {
                fprintf(stderr, "locklab plot: out of memory\n");
                plot_fail(c, LAB_EXIT_ENV);
                plot_set_free(&set);
                plot_set_free(&p99);
                return;
            }
            ylo = fmin(ylo, e->throughput);
            yhi = fmax(yhi, e->throughput);
        }
    if (set.n == 0) {
        plot_note(c, "%s: no throughput figures: no throughput plot", scn->name);
        plot_set_free(&set);
        plot_set_free(&p99);
        return;
    }
    bool single = true;
    for (int j = 0; j < set.n; j++) {
        plot_series_sort_x(&set.s[j]);
        plot_series_sort_x(&p99.s[j]);
        if (set.s[j].x[0] != set.s[j].x[set.s[j].n - 1])
            single = false;
    }
    if (single) { /* nothing to compare along the x axis: no plot */
        plot_note(c, "%s: one client count per step: no throughput-against-clients plot "
                  "(the tables give the figures; a sweep over clients draws lines)", scn->name);
        plot_set_free(&set);
        plot_set_free(&p99);
        return;
    }
    const char *unit;
    double scale = latency_unit(plot_set_ymax(&p99), &unit);
    char data[PATH_MAX], pdata[PATH_MAX];
    if (plot_datafile(c, data, sizeof data, scn->name, "throughput") == 0 &&
        plot_datafile(c, pdata, sizeof pdata, scn->name, "throughput-p99") == 0) {
        if (plot_set_write(&set, data, 1.0, -INFINITY) != 0) {
            plot_write_failed(c, data);
        } else if (plot_set_write(&p99, pdata, scale, PLOT_FLOOR_US / scale) != 0) {
            plot_write_failed(c, pdata);
        } else {
            struct plot_args a;
            plot_args_init(&a, scn->name, scn->subtitle, data, &set);
            plot_args_num(&a, "xmin", (double)(scn->lo > 0 ? scn->lo : 1));
            plot_args_num(&a, "xmax", (double)(scn->hi > 0 ? scn->hi : 1));
            plot_args_num(&a, "logy", ylo > 0 && yhi / ylo > 20);
            plot_args_str(&a, "p99file", pdata);
            plot_args_str(&a, "unit", unit);
            plot_args_str(&a, "note", floored ? "an acquire p99 under 1 µs (recorded as 0) is "
                                                "drawn at 1 µs" : "");
            plot_draw(c, scn->name, "throughput", &a);
        }
    }
    plot_set_free(&set);
    plot_set_free(&p99);
}

/* ------------------------------------------------------------- 3. wakeups */

static void plot_wakeups(struct plot_ctx *c, const struct plot_scn *scn)
{
    int sel[PLOT_MAX_PICK];
    int ns = scenario_pick(c, scn, false, sel, PLOT_MAX_PICK);
    int count[PLOT_MAX_IMPLS] = {0}; /* bars per implementation */
    for (int i = 0; i < ns; i++)
        count[entry_lt(scn, &c->e[sel[i]]) - 1]++;
    char data[PATH_MAX], subtitle[256];
    if (plot_datafile(c, data, sizeof data, scn->name, "wakeups") != 0)
        return;
    FILE *f = fopen(data, "w");
    if (!f) {
        plot_write_failed(c, data);
        return;
    }
    int bars = 0;
    for (int i = 0; i < ns; i++) {
        const struct plot_entry *e = &c->e[sel[i]];
        if (!isfinite(e->wakeups))
            continue;
        char title[160];
        int lt = entry_lt(scn, e);
        entry_title(scn, e, title, sizeof title);
        if (count[lt - 1] > 1 && !scn->sweep) /* repeated runs: tell them apart */
            fprintf(f, "%d %d %.9g \"%s, %ld clients\"\n", bars++, lt, e->wakeups, title,
                    e->clients);
        else
            fprintf(f, "%d %d %.9g \"%s\"\n", bars++, lt, e->wakeups, title);
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad) {
        plot_write_failed(c, data);
        return;
    }
    if (bars == 0) {
        plot_note(c, "%s: no wakeups_per_release figures: no wakeups plot", scn->name);
        return;
    }
    pick_subtitle(c, scn, sel, ns, subtitle, sizeof subtitle);
    struct plot_args a;
    plot_args_init(&a, scn->name, subtitle, data, NULL);
    plot_args_num(&a, "n", bars);
    plot_args_str(&a, "note", "");
    plot_draw(c, scn->name, "wakeups", &a);
}

/* ------------------------------------------------------------ 4. timeline */

/* Append band "start end kind" (s) to out; false when out is full. A band
 * too thin to see (a kill is an instant) is drawn 5 ms wide. */
static bool add_band(char *out, size_t n, size_t *used, double a, double b, int kind)
{
    if (b - a < 0.005)
        b = a + 0.005;
    int w = snprintf(out + *used, n - *used, "%.3f %.3f %d ", a, b, kind);
    if (w < 0 || (size_t)w >= n - *used) {
        out[*used] = '\0';
        return false;
    }
    *used += (size_t)w;
    return true;
}

/* The phases of a failover (phases_ms) as three bands: replication cut
 * until the kill (kind 1), the master down until the sentinels' switch
 * (kind 2), the switch until the new master took a write (kind 3). 1 when
 * drawn, 0 when f has no such phases, -1 when out is full. */
static int phase_bands(json_t *f, char *out, size_t n, size_t *used)
{
    json_t *ph = json_object_get(f, "phases_ms");
    static const char *const names[] = {"cut", "killed", "switched", "writable"};
    double t[4];
    for (int k = 0; k < 4; k++) {
        json_t *v = json_object_get(ph, names[k]);
        if (!json_is_number(v))
            return 0;
        t[k] = json_number_value(v) / 1e3;
    }
    for (int k = 0; k < 3; k++)
        if (!add_band(out, n, used, t[k], t[k + 1], k + 1))
            return -1;
    return 1;
}

/* "start end kind ..." in seconds: every fault of the picked results that
 * landed, for timeline.gp to shade (as Jepsen's plots do); kind 0 a whole
 * fault, 1 to 3 a failover's phases (phase_bands). *phased is set when a
 * failover was drawn by its phases. */
static void fault_bands(const struct plot_ctx *c, const int *sel, int ns, char *out, size_t n,
                        bool *phased)
{
    size_t used = 0;
    out[0] = '\0';
    *phased = false;
    for (int i = 0; i < ns; i++) {
        json_t *faults = c->e[sel[i]].faults, *f;
        size_t k;
        json_array_foreach(faults, k, f) {
            const char *outcome = json_string_value(json_object_get(f, "outcome"));
            json_t *t0 = json_object_get(f, "start_ms"), *t1 = json_object_get(f, "end_ms");
            if (!outcome || strcmp(outcome, "done") != 0 || !json_is_number(t0) ||
                !json_is_number(t1))
                continue;
            int p = phase_bands(f, out, n, &used);
            if (p < 0)
                return;
            if (p > 0) {
                *phased = true;
                continue;
            }
            if (!add_band(out, n, &used, json_number_value(t0) / 1e3,
                          json_number_value(t1) / 1e3, 0))
                return;
        }
    }
}

static void plot_timeline(struct plot_ctx *c, const struct plot_scn *scn)
{
    static const struct latency_kind kind = {
        .suffix = ".timeline.tsv", .optional = true, .solid = true,
        .read = plot_timeline_read, .unreadable = "nothing readable",
        .left_out = "timeline"};
    int sel[PLOT_MAX_PICK];
    int ns = scenario_pick(c, scn, true, sel, PLOT_MAX_PICK);
    struct plot_set set = {0};
    bool floored = false;
    double tmax = 0;
    latency_read(c, scn, &kind, sel, ns, &set, &floored, &tmax);
    if (set.n == 0) {
        plot_note(c, "%s: no <impl>/<files>.timeline.tsv files in %s: no timeline plot",
                  scn->name, c->run_dir);
        plot_set_free(&set);
        return;
    }
    size_t limit = PLOT_TIMELINE_POINTS / (size_t)set.n, stride = 1;
    if (limit < PLOT_TIMELINE_MIN)
        limit = PLOT_TIMELINE_MIN;
    for (int i = 0; i < set.n; i++) {
        size_t st = plot_series_thin(&set.s[i], limit);
        stride = st > stride ? st : stride;
    }
    char note[256] = "";
    if (stride > 1)
        snprintf(note, sizeof note, "thinned: the slowest acquire of every %zu is drawn%s",
                 stride, floored ? "; latencies under 1 µs drawn at 1 µs" : "");
    else if (floored)
        snprintf(note, sizeof note, "latencies under 1 µs (recorded as 0) are drawn at 1 µs");
    char bands[3072];
    bool phased;
    fault_bands(c, sel, ns, bands, sizeof bands, &phased);
    if (phased) {
        size_t len = strlen(note);
        snprintf(note + len, sizeof note - len, "%sfailover: yellow replication cut, red master "
                 "down until the switch, blue until it took a write", len ? "; " : "");
    }
    latency_draw(c, scn, "timeline", sel, ns, &set, "tmax", tmax, note, bands);
}

/* -------------------------------------------------------- 5. hold timelines */

/* One plot per step (not for a sweep's many steps: report.html has
 * those), named after the step's files and design so that no two steps
 * share a file. */
static void plot_holds(struct plot_ctx *c, const struct plot_scn *scn)
{
    if (scn->sweep) {
        plot_note(c, "%s: a sweep over clients: its hold timelines are in report.html only",
                  scn->name);
        return;
    }
    for (int i = 0; i < c->n; i++) {
        const struct plot_entry *e = &c->e[i];
        if (strcmp(e->scenario, scn->name) != 0)
            continue;
        char tsv[PATH_MAX], data[PATH_MAX], name[PATH_MAX], title[256], bands[3072];
        bool phased;
        entry_title(scn, e, title + snprintf(title, sizeof title, "%s, ", scn->name),
                    sizeof title - strlen(scn->name) - 2);
        if (plot_fmt(tsv, sizeof tsv, "%s/%s/%s.holds.tsv", c->run_dir, e->impl, e->files) ||
            plot_fmt(name, sizeof name, "%s-%s", e->files, e->impl) ||
            plot_datafile(c, data, sizeof data, name, "holds") != 0)
            continue;
        fault_bands(c, &i, 1, bands, sizeof bands, &phased);
        struct plot_holds_step st = {.tsv = tsv, .datafile = data, .name = name,
                                     .title = title, .subtitle = scn->subtitle, .bands = bands,
                                     .clients = (int)e->clients};
        int code = plot_holds_draw(&c->gp, &st);
        if (code != LAB_EXIT_OK)
            plot_fail(c, code);
    }
}

/* ------------------------------------------------------------------ public */

/* Draw every plot of run_dir (a results/<run-id>/ directory) as PNG and SVG
 * beside its results; the data files go to run_dir/plot-data/. quiet: print
 * only errors. Returns 0, 2 (run_dir or summary.json missing or unreadable),
 * or 3 (gnuplot or its scripts missing, gnuplot failed, a file could not be
 * written). A plot with nothing to draw is skipped, with a note unless quiet. */
int plot_run_dir(const char *run_dir, int quiet)
{
    struct plot_ctx c = {.run_dir = run_dir, .quiet = quiet != 0, .code = LAB_EXIT_OK};
    char summary[PATH_MAX];
    if (!plot_is_dir(run_dir)) {
        fprintf(stderr, "locklab plot: %s is not a results directory (%s)\n", run_dir,
                access(run_dir, F_OK) == 0 ? "not a directory" : strerror(errno));
        return LAB_EXIT_USAGE;
    }
    if (plot_fmt(summary, sizeof summary, "%s/summary.json", run_dir) != 0 ||
        access(summary, R_OK) != 0) {
        fprintf(stderr, "locklab plot: no summary.json in %s (looked for %s/summary.json)\n",
                run_dir, run_dir);
        return LAB_EXIT_USAGE;
    }
    struct plot_summary sum;
    int code = plot_summary_load(summary, c.quiet, &sum);
    c.run_id = sum.run_id;
    c.e = sum.e;
    c.n = sum.n;
    c.gp.out_dir = run_dir;
    c.gp.quiet = c.quiet;
    if (code == LAB_EXIT_OK && plot_gnuplot_find(c.gp.bin, sizeof c.gp.bin) != 0) {
        fprintf(stderr, "locklab plot: gnuplot is not installed (not found on PATH): install "
                        "gnuplot-nox (apt-get install gnuplot-nox) to draw plots\n");
        code = LAB_EXIT_ENV;
    }
    if (code == LAB_EXIT_OK) {
        snprintf(c.gp.script_dir, sizeof c.gp.script_dir, "%s", plot_gnuplot_script_dir());
        char probe[PATH_MAX];
        if (plot_fmt(probe, sizeof probe, "%s/latency.gp", c.gp.script_dir) != 0 ||
            access(probe, R_OK) != 0) {
            fprintf(stderr, "locklab plot: gnuplot scripts not found (looked in ./plots and "
                            "%s)\n", c.gp.script_dir);
            code = LAB_EXIT_ENV;
        }
    }
    if (code == LAB_EXIT_OK &&
        (plot_fmt(c.data_dir, sizeof c.data_dir, "%s/plot-data", run_dir) != 0 ||
         (mkdir(c.data_dir, 0755) != 0 && errno != EEXIST))) {
        fprintf(stderr, "locklab plot: cannot create %s/plot-data: %s\n", run_dir,
                strerror(errno));
        code = LAB_EXIT_ENV;
    }
    if (code == LAB_EXIT_OK && c.n == 0)
        plot_note(&c, "%s has no results: nothing to plot", summary);
    for (int i = 0; code == LAB_EXIT_OK && i < c.n; i++) {
        const char *scn = c.e[i].scenario;
        int seen = 0;
        while (seen < i && strcmp(c.e[seen].scenario, scn) != 0)
            seen++;
        if (seen < i)
            continue; /* drawn with its first entry */
        struct plot_scn *p = malloc(sizeof *p);
        if (!p) {
            fprintf(stderr, "locklab plot: out of memory\n");
            plot_fail(&c, LAB_EXIT_ENV);
            break;
        }
        scenario_init(&c, scn, p);
        plot_latency(&c, p);
        plot_throughput(&c, p);
        plot_wakeups(&c, p);
        plot_timeline(&c, p);
        plot_holds(&c, p);
        free(p);
    }
    if (code == LAB_EXIT_OK)
        code = c.code;
    plot_summary_free(&sum);
    return code;
}
