/*
 * cmd_plot.c - `locklab plot RUN_DIR`: draw a run's results with gnuplot.
 *
 * For each scenario in RUN_DIR/summary.json, four plots, each written next to
 * the results as RUN_DIR/<scenario>-<plot>.png and .svg: acquire latency by
 * percentile (from the .hgrm files, drawn the way HdrHistogram's plotter draws
 * them), throughput against clients, wakeups per release, and acquire latency
 * over time (from the .timeline.tsv files, when the run wrote them).
 *
 * The C side only gathers numbers. It reads summary.json with jansson and the
 * per-implementation files, writes small whitespace-separated data files into
 * RUN_DIR/plot-data/, and runs gnuplot (fork/exec, no shell) on a script from
 * plots/ with -e variables naming the data, the outputs and the titles. All
 * drawing lives in the scripts, so a plot's look changes without a rebuild.
 * Images are drawn to *.tmp names and renamed when gnuplot succeeded, as the
 * other result files are, so a failed plot never leaves half an image.
 *
 * An implementation keeps its colour across the plots of a scenario: the C
 * side numbers implementations in summary.json's order and passes each
 * series its gnuplot linetype.
 *
 * plot_run_dir() is the whole command without option parsing, for `locklab
 * run` to call after a run when gnuplot is installed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "subproc.h"
#include "lab.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

#define PLOT_FLOOR_US 1.0         /* latencies under 1 us (recorded as 0) drawn at 1 us */
#define PLOT_MS_ABOVE_US 10000.0  /* largest latency above 10 ms: the y unit is ms */
#define PLOT_TIMELINE_POINTS 24000 /* timeline budget over all series (SVG size) */
#define PLOT_TIMELINE_MIN 1000    /* ... but at least this many points per series */
#define PLOT_OUTPUT_KEEP 4096     /* bytes of gnuplot's output kept for messages */
#define PLOT_ARGS_MAX 8192        /* the -e assignments */
#define PLOT_MAX_IMPLS 256        /* implementations per scenario */
#define PLOT_MAX_PICK 1024        /* entries per scenario in one plot */

/* ------------------------------------------------------------------- types */

/* One entry of summary.json's results[]; strings point into the JSON. */
struct plot_entry {
    const char *impl;     /* implementation name (an identifier) */
    const char *scenario; /* scenario name (an identifier) */
    const char *keys;     /* key mode: "hot" (default) or "per-client" */
    const char *files;    /* stem of <impl>/<stem>.acquire.hgrm etc. (default: scenario) */
    long clients;         /* client processes */
    double throughput;    /* throughput_per_s, NAN when absent */
    double wakeups;       /* wakeups_per_release, NAN when absent */
};

/* One line (or bar group) of a plot. */
struct plot_series {
    char title[160]; /* legend text */
    int lt;          /* gnuplot linetype: the implementation's colour */
    int dt;          /* gnuplot dash type: the key mode */
    double *x, *y;   /* points, n of them, room for cap */
    size_t n, cap;
};

/* The series of one plot. */
struct plot_set {
    struct plot_series *s; /* n series, room for cap */
    int n, cap;
};

/* State of one plot_run_dir() call. */
struct plot_ctx {
    const char *run_dir;        /* as given */
    const char *run_id;         /* summary.json's run_id, for subtitles */
    char data_dir[PATH_MAX];    /* RUN_DIR/plot-data */
    char script_dir[PATH_MAX];  /* where latency.gp and friends live */
    char gnuplot[PATH_MAX];     /* the gnuplot binary */
    bool quiet;                 /* print only errors */
    struct plot_entry *e;       /* the usable results[] entries */
    int n;                      /* how many */
    int code;                   /* worst exit code so far */
};

/* --------------------------------------------------------------- utilities */

/* printf into buf; -1 when it did not fit (a path too long to use). */
static int plot_fmt(char *buf, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int plot_fmt(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

/* A name that is safe in a file name: letters, digits, '_', '.', '-', not
 * starting with '.' (scenario names and implementation names are such). */
static bool plot_ident(const char *s)
{
    if (!s || !*s || *s == '.')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '.' || *s == '-'))
            return false;
    return true;
}

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

/* ------------------------------------------------------------ series sets */

static int series_push(struct plot_series *s, double x, double y)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        double *nx = realloc(s->x, cap * sizeof *nx);
        if (!nx)
            return -1;
        s->x = nx;
        double *ny = realloc(s->y, cap * sizeof *ny);
        if (!ny)
            return -1;
        s->y = ny;
        s->cap = cap;
    }
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
    return 0;
}

/* A new empty series at the end of set; NULL when out of memory. The title
 * keeps only characters that cannot break gnuplot's quoted column header. */
static struct plot_series *set_add(struct plot_set *set, const char *title, int lt, int dt)
{
    if (set->n == set->cap) {
        int cap = set->cap ? set->cap * 2 : 16;
        struct plot_series *ns = realloc(set->s, (size_t)cap * sizeof *ns);
        if (!ns)
            return NULL;
        set->s = ns;
        set->cap = cap;
    }
    struct plot_series *s = &set->s[set->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->title, sizeof s->title, "%s", title);
    for (char *p = s->title; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
            *p = '_';
    s->lt = lt;
    s->dt = dt;
    return s;
}

static void set_free(struct plot_set *set)
{
    for (int i = 0; i < set->n; i++) {
        free(set->s[i].x);
        free(set->s[i].y);
    }
    free(set->s);
    memset(set, 0, sizeof *set);
}

/* Largest y over every series (0 when empty). */
static double set_ymax(const struct plot_set *set)
{
    double m = 0;
    for (int i = 0; i < set->n; i++)
        for (size_t j = 0; j < set->s[i].n; j++)
            if (set->s[i].y[j] > m)
                m = set->s[i].y[j];
    return m;
}

/* Write the set as gnuplot blocks: a quoted title line (read back with
 * `title columnheader(1)`), the rows, two blank lines between blocks. Each
 * y is divided by yscale and raised to yfloor first (log axes drop zeros). */
static int set_write(const struct plot_set *set, const char *path, double yscale, double yfloor)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (int i = 0; i < set->n; i++) {
        const struct plot_series *s = &set->s[i];
        fprintf(f, "%s\"%s\" y\n", i ? "\n\n" : "", s->title);
        for (size_t j = 0; j < s->n; j++) {
            double y = s->y[j] / yscale;
            fprintf(f, "%.9g %.9g\n", s->x[j], y < yfloor ? yfloor : y);
        }
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

/* "lts='1 2 3'" style lists of the series' linetypes and dash types. */
static void set_styles(const struct plot_set *set, char *lts, char *dts, size_t n)
{
    size_t a = 0, b = 0;
    lts[0] = dts[0] = '\0';
    for (int i = 0; i < set->n && a + 16 < n && b + 16 < n; i++) {
        a += (size_t)snprintf(lts + a, n - a, "%s%d", i ? " " : "", set->s[i].lt);
        /* colours cycle after 12: the second round of a solid line is dotted */
        int dt = set->s[i].dt == 1 && set->s[i].lt > 12 ? 3 : set->s[i].dt;
        b += (size_t)snprintf(dts + b, n - b, "%s%d", i ? " " : "", dt);
    }
}

/* ----------------------------------------------------- gnuplot invocation */

/* The -e argument: name='value'; pairs, single quotes doubled as gnuplot's
 * single-quoted strings want them (backslashes are literal there). */
struct plot_args {
    char buf[PLOT_ARGS_MAX]; /* "a='x'; n=3; ..." */
    size_t len;              /* bytes used */
    bool overflow;           /* something did not fit */
};

static void args_str(struct plot_args *a, const char *name, const char *value)
{
    char tmp[PATH_MAX * 2 + 64];
    size_t t = (size_t)snprintf(tmp, sizeof tmp, "%s='", name);
    for (const char *p = value; *p && t + 4 < sizeof tmp; p++) {
        if (*p == '\'')
            tmp[t++] = '\'';
        tmp[t++] = *p;
    }
    if (t + 4 >= sizeof tmp)
        a->overflow = true;
    tmp[t++] = '\'';
    tmp[t++] = ';';
    tmp[t++] = ' ';
    tmp[t] = '\0';
    if (a->len + t >= sizeof a->buf) {
        a->overflow = true;
        return;
    }
    memcpy(a->buf + a->len, tmp, t + 1);
    a->len += t;
}

static void args_num(struct plot_args *a, const char *name, double v)
{
    char tmp[128];
    int t = snprintf(tmp, sizeof tmp, "%s=%.17g; ", name, isfinite(v) ? v : 0.0);
    if (a->len + (size_t)t >= sizeof a->buf) {
        a->overflow = true;
        return;
    }
    memcpy(a->buf + a->len, tmp, (size_t)t + 1);
    a->len += (size_t)t;
}

/* gnuplot on PATH (the default path when PATH is unset); 0 or -1. */
static int plot_find_gnuplot(char *out, size_t n)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (;;) {
        const char *colon = strchr(path, ':');
        int len = colon ? (int)(colon - path) : (int)strlen(path);
        struct stat st;
        if (plot_fmt(out, n, "%.*s%sgnuplot", len, path, len ? "/" : "./") == 0 &&
            stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        if (!colon)
            return -1;
        path = colon + 1;
    }
}

/* Where the scripts are: ./plots when it holds them, else the source tree's. */
static const char *plot_script_dir(void)
{
    if (access("plots/latency.gp", R_OK) == 0 && access("plots/common.gp", R_OK) == 0)
        return "plots";
    return LOCKLAB_SOURCE_DIR "/plots";
}

/* Run `gnuplot -e ARGS SCRIPT`, output captured into out (truncated).
 * Returns the wait status, or -1. */
static int plot_exec(const char *gnuplot, const char *args, const char *script, char *out,
                     size_t outlen)
{
    char *argv[] = {(char *)gnuplot, "-e", (char *)args, (char *)script, NULL};
    return subproc_capture(argv, out, outlen);
}

static bool plot_nonempty(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* Draw one plot: script NAME.gp with the assignments in a, into
 * RUN_DIR/<scenario>-NAME.png and .svg (through .tmp names). */
static void plot_draw(struct plot_ctx *c, const char *scenario, const char *name,
                      struct plot_args *a)
{
    char script[PATH_MAX], png[PATH_MAX], svg[PATH_MAX], png_tmp[PATH_MAX], svg_tmp[PATH_MAX];
    if (plot_fmt(script, sizeof script, "%s/%s.gp", c->script_dir, name) ||
        plot_fmt(png, sizeof png, "%s/%s-%s.png", c->run_dir, scenario, name) ||
        plot_fmt(svg, sizeof svg, "%s/%s-%s.svg", c->run_dir, scenario, name) ||
        plot_fmt(png_tmp, sizeof png_tmp, "%s.tmp", png) ||
        plot_fmt(svg_tmp, sizeof svg_tmp, "%s.tmp", svg)) {
        fprintf(stderr, "locklab plot: path too long under %s\n", c->run_dir);
        plot_fail(c, LAB_EXIT_USAGE);
        return;
    }
    args_str(a, "png", png_tmp);
    args_str(a, "svg", svg_tmp);
    args_str(a, "plotdir", c->script_dir);
    if (a->overflow) {
        fprintf(stderr, "locklab plot: %s-%s: too many series for gnuplot's arguments\n",
                scenario, name);
        plot_fail(c, LAB_EXIT_USAGE);
        return;
    }
    char out[PLOT_OUTPUT_KEEP];
    int status = plot_exec(c->gnuplot, a->buf, script, out, sizeof out);
    bool ok = status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
              plot_nonempty(png_tmp) && plot_nonempty(svg_tmp);
    if (ok && (rename(png_tmp, png) != 0 || rename(svg_tmp, svg) != 0)) {
        fprintf(stderr, "locklab plot: cannot rename into %s: %s\n", c->run_dir,
                strerror(errno));
        ok = false;
    }
    if (!ok) {
        if (status < 0)
            fprintf(stderr, "locklab plot: cannot run %s: %s\n", c->gnuplot, strerror(errno));
        else
            fprintf(stderr, "locklab plot: gnuplot failed on %s (%s %d)%s%s", script,
                    WIFEXITED(status) ? "exit" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                    out[0] ? ":\n" : "\n", out);
        unlink(png_tmp);
        unlink(svg_tmp);
        plot_fail(c, LAB_EXIT_ENV);
        return;
    }
    if (out[0] && !c->quiet)
        fprintf(stderr, "locklab plot: gnuplot said, on %s-%s:\n%s", scenario, name, out);
    if (!c->quiet)
        printf("wrote %s and .svg\n", png);
}

/* ---------------------------------------------------------- scenario data */

/* One scenario of the run, as the plots see it. */
struct plot_scn {
    const char *name;                 /* scenario name */
    const char *impls[PLOT_MAX_IMPLS]; /* in summary.json's order: linetype = index + 1 */
    int ni;                           /* how many */
    bool mixed;                       /* some entry not on the hot key: titles say which */
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

/* Linetype of an entry: its implementation's colour. */
static int entry_lt(const struct plot_scn *s, const struct plot_entry *e)
{
    for (int k = 0; k < s->ni; k++)
        if (!strcmp(s->impls[k], e->impl))
            return k + 1;
    return 1;
}

/* Dash type of an entry: solid for the hot key, dashed for a key per client. */
static int entry_dt(const struct plot_entry *e)
{
    return !strcmp(e->keys, "hot") ? 1 : !strcmp(e->keys, "per-client") ? 2 : 3;
}

/* Legend text of an entry: the implementation, and the key mode when the
 * scenario ran more than one. */
static void entry_title(const struct plot_scn *s, const struct plot_entry *e, char *buf,
                        size_t n)
{
    if (!s->mixed)
        snprintf(buf, n, "%s", e->impl);
    else if (!strcmp(e->keys, "hot"))
        snprintf(buf, n, "%s, one hot key", e->impl);
    else if (!strcmp(e->keys, "per-client"))
        snprintf(buf, n, "%s, key per client", e->impl);
    else
        snprintf(buf, n, "%s, keys %s", e->impl, e->keys);
}

/* The entries the per-implementation plots draw (latency, wakeups,
 * timeline): all of them outside a sweep; in a sweep, of each
 * implementation and key mode the one with the most clients. With
 * one_per_impl, a single entry per implementation: the hot key first, then
 * the most clients. Fills sel with indices into c->e, in implementation
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
            while (j < n && !(strcmp(c->e[sel[j]].impl, e->impl) == 0 &&
                              (one_per_impl || strcmp(c->e[sel[j]].keys, e->keys) == 0)))
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

/* Common -e assignments of a plot of scenario. */
static void plot_args_base(struct plot_args *a, const char *scenario, const char *subtitle,
                           const char *datafile, const struct plot_set *set)
{
    memset(a, 0, sizeof *a);
    char lts[2048], dts[2048];
    args_str(a, "datafile", datafile);
    args_str(a, "scenario", scenario);
    args_str(a, "subtitle", subtitle);
    if (set) {
        set_styles(set, lts, dts, sizeof lts);
        args_num(a, "n", set->n);
        args_str(a, "lts", lts);
        args_str(a, "dts", dts);
    }
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

/* Drop the last series of set (it turned out empty). */
static void set_drop_last(struct plot_set *set)
{
    struct plot_series *s = &set->s[--set->n];
    free(s->x);
    free(s->y);
}

/* -------------------------------------------------- 1. latency percentiles */

/* Read an .hgrm percentile distribution: x = 1/(1-percentile), y = value.
 * The last row (percentile 1, the maximum) has no finite x; it is drawn at
 * x = total count, where the top one of N values sits, when that lies past
 * the previous row. Returns 0, or -1 when the file cannot be opened. */
static int hgrm_read(const char *path, struct plot_series *s, bool *floored)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    double last_x = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        double v, p, x;
        long long total;
        int k = sscanf(line, "%lf %lf %lld %lf", &v, &p, &total, &x);
        if (k < 3 || !isfinite(v))
            continue;
        if (k == 4 && isfinite(x) && x >= 1 && x >= last_x)
            last_x = x;
        else if (k == 3 && p >= 1.0 && (double)total > last_x)
            x = last_x = (double)total;
        else
            continue;
        if (v < PLOT_FLOOR_US)
            *floored = true;
        rc = series_push(s, x, v);
    }
    fclose(f);
    return rc;
}

static void plot_latency(struct plot_ctx *c, const struct plot_scn *scn)
{
    int sel[PLOT_MAX_PICK];
    int ns = scenario_pick(c, scn, false, sel, PLOT_MAX_PICK);
    struct plot_set set = {0};
    bool floored = false;
    double xmax = 1;
    for (int i = 0; i < ns; i++) {
        const struct plot_entry *e = &c->e[sel[i]];
        char path[PATH_MAX], title[160];
        if (plot_fmt(path, sizeof path, "%s/%s/%s.acquire.hgrm", c->run_dir, e->impl,
                     e->files) != 0)
            continue;
        entry_title(scn, e, title, sizeof title);
        struct plot_series *s = set_add(&set, title, entry_lt(scn, e), entry_dt(e));
        if (!s || hgrm_read(path, s, &floored) != 0 || s->n == 0) {
            plot_note(c, "%s: no acquire latencies in %s: %s left out of the latency plot",
                      scn->name, path, title);
            if (s)
                set_drop_last(&set);
            continue;
        }
        if (s->x[s->n - 1] > xmax)
            xmax = s->x[s->n - 1];
    }
    if (set.n == 0) {
        plot_note(c, "%s: no .acquire.hgrm files: no latency plot", scn->name);
        set_free(&set);
        return;
    }
    const char *unit;
    double scale = latency_unit(set_ymax(&set), &unit);
    char data[PATH_MAX], subtitle[256];
    pick_subtitle(c, scn, sel, ns, subtitle, sizeof subtitle);
    if (plot_datafile(c, data, sizeof data, scn->name, "latency") == 0) {
        if (set_write(&set, data, scale, PLOT_FLOOR_US / scale) != 0) {
            plot_write_failed(c, data);
        } else {
            struct plot_args a;
            plot_args_base(&a, scn->name, subtitle, data, &set);
            args_str(&a, "unit", unit);
            args_num(&a, "xmax", xmax);
            args_str(&a, "note",
                     floored ? "latencies under 1 µs (recorded as 0) are drawn at 1 µs; "
                               "the last point of a line is the maximum, at 1/(1-p) = count"
                             : "the last point of each line is the maximum, drawn at "
                               "1/(1-p) = sample count");
            plot_draw(c, scn->name, "latency", &a);
        }
    }
    set_free(&set);
}

/* ------------------------------------------------- 2. throughput / clients */

static void series_sort_x(struct plot_series *s)
{
    for (size_t i = 1; i < s->n; i++)
        for (size_t j = i; j > 0 && s->x[j - 1] > s->x[j]; j--) {
            double tx = s->x[j], ty = s->y[j];
            s->x[j] = s->x[j - 1];
            s->y[j] = s->y[j - 1];
            s->x[j - 1] = tx;
            s->y[j - 1] = ty;
        }
}

static void plot_throughput(struct plot_ctx *c, const struct plot_scn *scn)
{
    struct plot_set set = {0};
    double ylo = INFINITY, yhi = 0;
    for (int k = 0; k < scn->ni; k++)
        for (int i = 0; i < c->n; i++) {
            const struct plot_entry *e = &c->e[i];
            if (strcmp(e->scenario, scn->name) != 0 || strcmp(e->impl, scn->impls[k]) != 0 ||
                !isfinite(e->throughput) || e->clients < 1)
                continue;
            char title[160];
            entry_title(scn, e, title, sizeof title);
            struct plot_series *s = NULL;
            for (int j = 0; j < set.n && !s; j++)
                if (!strcmp(set.s[j].title, title))
                    s = &set.s[j];
            if (!s)
                s = set_add(&set, title, k + 1, entry_dt(e));
            if (!s || series_push(s, (double)e->clients, e->throughput) != 0) {
                fprintf(stderr, "locklab plot: out of memory\n");
                plot_fail(c, LAB_EXIT_ENV);
                set_free(&set);
                return;
            }
            ylo = fmin(ylo, e->throughput);
            yhi = fmax(yhi, e->throughput);
        }
    if (set.n == 0) {
        plot_note(c, "%s: no throughput figures: no throughput plot", scn->name);
        set_free(&set);
        return;
    }
    bool single = true;
    for (int j = 0; j < set.n; j++) {
        series_sort_x(&set.s[j]);
        if (set.s[j].x[0] != set.s[j].x[set.s[j].n - 1])
            single = false;
    }
    if (single)
        plot_note(c, "%s: one client count per implementation: the throughput plot shows "
                  "single points (a sweep over clients draws lines)", scn->name);
    char data[PATH_MAX];
    if (plot_datafile(c, data, sizeof data, scn->name, "throughput") == 0) {
        if (set_write(&set, data, 1.0, -INFINITY) != 0) {
            plot_write_failed(c, data);
        } else {
            struct plot_args a;
            plot_args_base(&a, scn->name, scn->subtitle, data, &set);
            args_num(&a, "xmin", (double)(scn->lo > 0 ? scn->lo : 1));
            args_num(&a, "xmax", (double)(scn->hi > 0 ? scn->hi : 1));
            args_num(&a, "logy", ylo > 0 && yhi / ylo > 20);
            args_str(&a, "note",
                     single ? "one client count per implementation: each is a single point"
                            : "");
            plot_draw(c, scn->name, "throughput", &a);
        }
    }
    set_free(&set);
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
    plot_args_base(&a, scn->name, subtitle, data, NULL);
    args_num(&a, "n", bars);
    args_str(&a, "note", "");
    plot_draw(c, scn->name, "wakeups", &a);
}

/* ------------------------------------------------------------ 4. timeline */

/* Read a .timeline.tsv ("# t_s acquire_us hold_us client" then rows): x =
 * t_s, y = acquire_us. Returns 0, or -1 when the file cannot be opened. */
static int timeline_read(const char *path, struct plot_series *s, bool *floored, double *tmax)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        double t, v;
        if (line[0] == '#' || sscanf(line, "%lf %lf", &t, &v) != 2 || !isfinite(t) ||
            !isfinite(v))
            continue;
        if (v < PLOT_FLOOR_US)
            *floored = true;
        if (t > *tmax)
            *tmax = t;
        rc = series_push(s, t, v);
    }
    fclose(f);
    return rc;
}

/* Thin s to at most limit points, keeping the slowest acquire of each run
 * of `stride` consecutive ones, so stalls survive. Returns the stride. */
static size_t series_thin(struct plot_series *s, size_t limit)
{
    if (s->n <= limit || limit == 0)
        return 1;
    size_t stride = (s->n + limit - 1) / limit, out = 0;
    for (size_t i = 0; i < s->n; i += stride) {
        size_t best = i;
        for (size_t j = i + 1; j < i + stride && j < s->n; j++)
            if (s->y[j] > s->y[best])
                best = j;
        s->x[out] = s->x[best];
        s->y[out] = s->y[best];
        out++;
    }
    s->n = out;
    return stride;
}

static void plot_timeline(struct plot_ctx *c, const struct plot_scn *scn)
{
    int sel[PLOT_MAX_PICK];
    int ns = scenario_pick(c, scn, true, sel, PLOT_MAX_PICK);
    struct plot_set set = {0};
    bool floored = false;
    double tmax = 0;
    for (int i = 0; i < ns; i++) {
        const struct plot_entry *e = &c->e[sel[i]];
        char path[PATH_MAX], title[160];
        if (plot_fmt(path, sizeof path, "%s/%s/%s.timeline.tsv", c->run_dir, e->impl,
                     e->files) != 0 ||
            access(path, F_OK) != 0)
            continue;
        entry_title(scn, e, title, sizeof title);
        struct plot_series *s = set_add(&set, title, entry_lt(scn, e), 1);
        if (!s || timeline_read(path, s, &floored, &tmax) != 0 || s->n == 0) {
            plot_note(c, "%s: nothing readable in %s: %s left out of the timeline", scn->name,
                      path, title);
            if (s)
                set_drop_last(&set);
        }
    }
    if (set.n == 0) {
        plot_note(c, "%s: no <impl>/<files>.timeline.tsv files in %s: no timeline plot",
                  scn->name, c->run_dir);
        set_free(&set);
        return;
    }
    size_t limit = PLOT_TIMELINE_POINTS / (size_t)set.n, stride = 1;
    if (limit < PLOT_TIMELINE_MIN)
        limit = PLOT_TIMELINE_MIN;
    for (int i = 0; i < set.n; i++) {
        size_t st = series_thin(&set.s[i], limit);
        stride = st > stride ? st : stride;
    }
    const char *unit;
    double scale = latency_unit(set_ymax(&set), &unit);
    char note[256] = "", data[PATH_MAX], subtitle[256];
    if (stride > 1)
        snprintf(note, sizeof note, "thinned: the slowest acquire of every %zu is drawn%s",
                 stride, floored ? "; latencies under 1 µs drawn at 1 µs" : "");
    else if (floored)
        snprintf(note, sizeof note, "latencies under 1 µs (recorded as 0) are drawn at 1 µs");
    pick_subtitle(c, scn, sel, ns, subtitle, sizeof subtitle);
    if (plot_datafile(c, data, sizeof data, scn->name, "timeline") == 0) {
        if (set_write(&set, data, scale, PLOT_FLOOR_US / scale) != 0) {
            plot_write_failed(c, data);
        } else {
            struct plot_args a;
            plot_args_base(&a, scn->name, subtitle, data, &set);
            args_str(&a, "unit", unit);
            args_num(&a, "tmax", tmax);
            args_str(&a, "note", note);
            plot_draw(c, scn->name, "timeline", &a);
        }
    }
    set_free(&set);
}

/* ----------------------------------------------------------- summary.json */

static double json_num_or_nan(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Collect the usable entries of results[] into c->e. 0, or an exit code. */
static int plot_load_entries(struct plot_ctx *c, json_t *root, const char *path)
{
    json_t *results = json_object_get(root, "results");
    if (!json_is_array(results)) {
        fprintf(stderr, "locklab plot: %s has no results[] array\n", path);
        return LAB_EXIT_USAGE;
    }
    json_t *id = json_object_get(root, "run_id");
    c->run_id = json_is_string(id) ? json_string_value(id) : "?";
    size_t n = json_array_size(results);
    c->e = calloc(n ? n : 1, sizeof *c->e);
    if (!c->e) {
        fprintf(stderr, "locklab plot: out of memory\n");
        return LAB_EXIT_ENV;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(results, i);
        const char *impl = json_string_value(json_object_get(r, "impl"));
        const char *scn = json_string_value(json_object_get(r, "scenario"));
        if (!plot_ident(impl) || !plot_ident(scn)) {
            plot_note(c, "%s: results[%zu] has no usable impl and scenario names: skipped",
                      path, i);
            continue;
        }
        struct plot_entry *e = &c->e[c->n++];
        e->impl = impl;
        e->scenario = scn;
        e->keys = json_string_value(json_object_get(r, "keys"));
        if (!plot_ident(e->keys))
            e->keys = "hot";
        e->files = json_string_value(json_object_get(r, "files"));
        if (!plot_ident(e->files))
            e->files = scn;
        json_t *cl = json_object_get(r, "clients");
        e->clients = json_is_integer(cl) ? (long)json_integer_value(cl) : 0;
        e->throughput = json_num_or_nan(r, "throughput_per_s");
        e->wakeups = json_num_or_nan(r, "wakeups_per_release");
    }
    return LAB_EXIT_OK;
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
    json_error_t jerr;
    json_t *root = json_load_file(summary, 0, &jerr);
    if (!root) {
        fprintf(stderr, "locklab plot: %s:%d:%d: %s\n", summary, jerr.line, jerr.column,
                jerr.text);
        return LAB_EXIT_USAGE;
    }
    int code = plot_load_entries(&c, root, summary);
    if (code == LAB_EXIT_OK && plot_find_gnuplot(c.gnuplot, sizeof c.gnuplot) != 0) {
        fprintf(stderr, "locklab plot: gnuplot is not installed (not found on PATH): install "
                        "gnuplot-nox (apt-get install gnuplot-nox) to draw plots\n");
        code = LAB_EXIT_ENV;
    }
    if (code == LAB_EXIT_OK) {
        snprintf(c.script_dir, sizeof c.script_dir, "%s", plot_script_dir());
        char probe[PATH_MAX];
        if (plot_fmt(probe, sizeof probe, "%s/latency.gp", c.script_dir) != 0 ||
            access(probe, R_OK) != 0) {
            fprintf(stderr, "locklab plot: gnuplot scripts not found (looked in ./plots and "
                            "%s)\n", c.script_dir);
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
        free(p);
    }
    if (code == LAB_EXIT_OK)
        code = c.code;
    free(c.e);
    json_decref(root);
    return code;
}

/* ----------------------------------------------------------------- command */

static void plot_usage(FILE *f)
{
    fprintf(f,
            "usage: locklab plot RUN_DIR [--quiet]\n"
            "\n"
            "Draw a run's results with gnuplot, as PNG and SVG beside them: for each\n"
            "scenario in RUN_DIR/summary.json,\n"
            "  <scenario>-latency     acquire latency by percentile, one line per implementation\n"
            "  <scenario>-throughput  throughput against clients, per implementation and key mode\n"
            "  <scenario>-wakeups     wakeups per release, one bar per implementation\n"
            "  <scenario>-timeline    every acquire's latency over the run (when the run wrote\n"
            "                         <impl>/<scenario>.timeline.tsv)\n"
            "The numbers gnuplot reads are left in RUN_DIR/plot-data/; the scripts are\n"
            "./plots/*.gp or %s/plots/*.gp.\n"
            "\n"
            "options:\n"
            "  -q, --quiet   print only errors\n"
            "  -h, --help    this text\n"
            "\n"
            "exit codes: 0 plots written, 2 bad usage or RUN_DIR/summary.json missing,\n"
            "3 gnuplot not installed (install gnuplot-nox) or it failed\n",
            LOCKLAB_SOURCE_DIR);
}

int cmd_plot(int argc, char **argv)
{
    static const struct option longopts[] = {{"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int quiet = 0, ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
        switch (ch) {
        case 'q': quiet = 1; break;
        case 'h': plot_usage(stdout); return LAB_EXIT_OK;
        default:
            fprintf(stderr, "locklab: plot: unknown option '%s'\n\n", argv[optind - 1]);
            plot_usage(stderr);
            return LAB_EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "locklab: plot: %s\n\n",
                argc - optind ? "give exactly one RUN_DIR" : "no RUN_DIR given");
        plot_usage(stderr);
        return LAB_EXIT_USAGE;
    }
    return plot_run_dir(argv[optind], quiet);
}
