/*
 * plot_data.c - a run's results read into series and series written as
 * gnuplot data files, for `locklab plot` (see plot_data.h).
 *
 * Kept apart from the plots themselves so that what each plot shows
 * (cmd_plot.c) and how gnuplot is run (plot_gnuplot.c) never touch file
 * formats: summary.json is read with jansson, the .hgrm and .timeline.tsv
 * files with stdio, and bad rows are skipped rather than fatal.
 */
#include "plot_data.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

int plot_fmt(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

/* ----------------------------------------------------------- summary.json */

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

static double json_num_or_nan(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Collect the usable entries of root's results[] into s. 0, or an exit code. */
static int summary_entries(struct plot_summary *s, bool quiet, const char *path)
{
    json_t *results = json_object_get(s->root, "results");
    if (!json_is_array(results)) {
        fprintf(stderr, "locklab plot: %s has no results[] array\n", path);
        return LAB_EXIT_USAGE;
    }
    json_t *id = json_object_get(s->root, "run_id");
    s->run_id = json_is_string(id) ? json_string_value(id) : "?";
    size_t n = json_array_size(results);
    s->e = calloc(n ? n : 1, sizeof *s->e);
    if (!s->e) {
        fprintf(stderr, "locklab plot: out of memory\n");
        return LAB_EXIT_ENV;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(results, i);
        const char *impl = json_string_value(json_object_get(r, "impl"));
        const char *scn = json_string_value(json_object_get(r, "scenario"));
        if (!plot_ident(impl) || !plot_ident(scn)) {
            if (!quiet)
                fprintf(stderr, "locklab plot: %s: results[%zu] has no usable impl and "
                                "scenario names: skipped\n", path, i);
            continue;
        }
        json_t *round = json_object_get(r, "round");
        if (json_is_integer(round) && json_integer_value(round) > 1)
            continue; /* run --rounds: the plots show the first round */
        struct plot_entry *e = &s->e[s->n++];
        e->impl = impl;
        e->scenario = scn;
        e->keys = json_string_value(json_object_get(r, "keys"));
        if (!plot_ident(e->keys))
            e->keys = "hot";
        e->files = json_string_value(json_object_get(r, "files"));
        if (!plot_ident(e->files))
            e->files = scn;
        const char *fencing = json_string_value(json_object_get(r, "fencing"));
        e->fenced = fencing && strcmp(fencing, "off") != 0;
        json_t *cl = json_object_get(r, "clients");
        e->clients = json_is_integer(cl) ? (long)json_integer_value(cl) : 0;
        e->throughput = json_num_or_nan(r, "throughput_per_s");
        e->acquire_p99 = json_num_or_nan(
            json_object_get(json_object_get(r, "latency_us"), "acquire"), "p99");
        e->wakeups = json_num_or_nan(r, "wakeups_per_release");
        e->faults = json_is_array(json_object_get(r, "faults")) ? json_object_get(r, "faults")
                                                                : NULL;
    }
    return LAB_EXIT_OK;
}

int plot_summary_load(const char *path, bool quiet, struct plot_summary *s)
{
    memset(s, 0, sizeof *s);
    json_error_t jerr;
    s->root = json_load_file(path, 0, &jerr);
    if (!s->root) {
        fprintf(stderr, "locklab plot: %s:%d:%d: %s\n", path, jerr.line, jerr.column,
                jerr.text);
        return LAB_EXIT_USAGE;
    }
    return summary_entries(s, quiet, path);
}

void plot_summary_free(struct plot_summary *s)
{
    free(s->e);
    json_decref(s->root);
    memset(s, 0, sizeof *s);
}

/* ----------------------------------------------------------------- series */

int plot_series_push(struct plot_series *s, double x, double y)
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

void plot_series_sort_x(struct plot_series *s)
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

size_t plot_series_thin(struct plot_series *s, size_t limit)
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

/* -------------------------------------------------------------------- sets */

struct plot_series *plot_set_add(struct plot_set *set, const char *title, int lt, int dt)
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

void plot_set_drop_last(struct plot_set *set)
{
    struct plot_series *s = &set->s[--set->n];
    free(s->x);
    free(s->y);
}

void plot_set_free(struct plot_set *set)
{
    for (int i = 0; i < set->n; i++) {
        free(set->s[i].x);
        free(set->s[i].y);
    }
    free(set->s);
    memset(set, 0, sizeof *set);
}

double plot_set_ymax(const struct plot_set *set)
{
    double m = 0;
    for (int i = 0; i < set->n; i++)
        for (size_t j = 0; j < set->s[i].n; j++)
            if (set->s[i].y[j] > m)
                m = set->s[i].y[j];
    return m;
}

int plot_set_write(const struct plot_set *set, const char *path, double yscale, double yfloor)
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

/* ------------------------------------------------------ per-impl results */

int plot_hgrm_read(const char *path, struct plot_series *s, bool *floored)
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
        rc = plot_series_push(s, x, v);
    }
    fclose(f);
    return rc;
}

int plot_timeline_read(const char *path, struct plot_series *s, bool *floored, double *tmax)
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
        rc = plot_series_push(s, t, v);
    }
    fclose(f);
    return rc;
}
