/*
 * plot_holds.c - the hold timeline as gnuplot draws it (see plot_holds.h):
 * the same view as report.html's, for people who read plots outside a
 * browser. One plot per step, RUN_DIR/<files>-<impl>-holds.png and .svg:
 * a lane per client, each critical section a bar from entry to exit, red
 * when it overlapped another on its key, orange when the fenced store
 * refused it, purple when its lock was taken early or its holder died,
 * the step's faults shaded behind.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "oracle.h"
#include "plot_holds.h"

#define PLOT_HOLDS_MAX 20000 /* bars per plot (SVG size); the first ones are drawn */

struct bar {
    double e, x;
    int client, key, cls; /* cls: gnuplot linetype, common.gp's colours */
    unsigned flags;
};

/* Read up to PLOT_HOLDS_MAX rows of a .holds.tsv; *total counts them all. */
static struct bar *bars_read(FILE *in, size_t *n, size_t *total, int *keys)
{
    struct bar *v = malloc(PLOT_HOLDS_MAX * sizeof *v);
    char line[256];
    *n = *total = 0;
    *keys = 0;
    while (v && fgets(line, sizeof line, in)) {
        struct bar b = {.cls = 1};
        long long token;
        if (line[0] == '#' || sscanf(line, "%lf %lf %d %d %lld %u", &b.e, &b.x, &b.client,
                                     &b.key, &token, &b.flags) != 6 || b.key < 0 || b.client < 0)
            continue;
        if ((*total)++ >= PLOT_HOLDS_MAX)
            continue;
        *keys = b.key + 1 > *keys ? b.key + 1 : *keys;
        v[(*n)++] = b;
    }
    return v;
}

/* Colour every bar: overlapping another on its key (red, 2), refused by
 * the fenced store (orange, 4), lock lost early or holder died (purple, 5).
 * Rows are in entry order; a later bar overlaps an earlier one that exits
 * after it enters. */
static int bars_classify(struct bar *v, size_t n, int keys)
{
    size_t *open = malloc((n ? n : 1) * sizeof *open); /* active bars, all keys */
    if (!open)
        return -1;
    size_t n_open = 0;
    (void)keys;
    for (size_t i = 0; i < n; i++) {
        size_t keep = 0;
        for (size_t q = 0; q < n_open; q++) {
            struct bar *o = &v[open[q]];
            if (o->x <= v[i].e)
                continue; /* gone before this one entered */
            open[keep++] = open[q];
            if (o->key == v[i].key)
                o->cls = v[i].cls = 2;
        }
        open[keep++] = i;
        n_open = keep;
    }
    free(open);
    for (size_t i = 0; i < n; i++) {
        if (v[i].cls == 1 && (v[i].flags & ORACLE_REFUSED))
            v[i].cls = 4;
        else if (v[i].cls == 1 && (v[i].flags & (ORACLE_LOST_EARLY | ORACLE_DIED)))
            v[i].cls = 5;
    }
    return 0;
}

int plot_holds_draw(const struct plot_gnuplot *gp, const struct plot_holds_step *st)
{
    FILE *in = fopen(st->tsv, "r");
    if (!in)
        return LAB_EXIT_OK; /* no hold data in this run directory: nothing to draw */
    size_t n, total;
    int keys;
    struct bar *v = bars_read(in, &n, &total, &keys);
    fclose(in);
    if (!v || bars_classify(v, n, keys) != 0) {
        free(v);
        fprintf(stderr, "locklab plot: out of memory\n");
        return LAB_EXIT_ENV;
    }
    FILE *f = fopen(st->datafile, "w");
    if (!f) {
        free(v);
        fprintf(stderr, "locklab plot: cannot write %s\n", st->datafile);
        return LAB_EXIT_ENV;
    }
    double tmax = 0;
    int overlapping = 0;
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%.9f %.9f %d %d\n", v[i].e, v[i].x, v[i].client, v[i].cls);
        tmax = v[i].x > tmax ? v[i].x : tmax;
        overlapping += v[i].cls == 2;
    }
    bool bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    free(v);
    if (bad) {
        fprintf(stderr, "locklab plot: cannot write %s\n", st->datafile);
        return LAB_EXIT_ENV;
    }
    if (n == 0)
        return LAB_EXIT_OK;
    char note[320];
    int len = snprintf(note, sizeof note, "red: overlapped another holder (%d sections), orange: "
                       "refused by the fenced store, purple: lock lost early or holder died",
                       overlapping);
    if (total > n && len > 0 && (size_t)len < sizeof note)
        snprintf(note + len, sizeof note - len, "; the first %zu of %zu sections (to %.2f s)", n,
                 total, tmax);
    struct plot_args a;
    plot_args_init(&a, st->title, st->subtitle, st->datafile, NULL);
    plot_args_num(&a, "clients", st->clients);
    plot_args_num(&a, "tmax", tmax);
    plot_args_str(&a, "note", note);
    plot_args_str(&a, "bands", st->bands);
    return plot_gnuplot_draw(gp, st->name, "holds", &a);
}
