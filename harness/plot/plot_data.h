/*
 * plot_data.h - the numbers behind `locklab plot`: a run's results read into
 * series, and the series written out as gnuplot data files.
 *
 * summary.json's results[] becomes an array of plot_entry; the per-
 * implementation .hgrm and .timeline.tsv files become plot_series (x, y
 * points with a legend title and a line style), gathered per plot into a
 * plot_set and written to RUN_DIR/plot-data/ as whitespace-separated blocks
 * that the scripts in plots/ read. Nothing here knows which plot a set is
 * for; cmd_plot.c decides that.
 */
#ifndef LOCKLAB_PLOT_DATA_H
#define LOCKLAB_PLOT_DATA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define PLOT_FLOOR_US 1.0 /* latencies under 1 us (recorded as 0) drawn at 1 us */

/* One entry of summary.json's results[]; strings point into the JSON. */
struct plot_entry {
    const char *impl;     /* implementation name (an identifier) */
    const char *scenario; /* scenario name (an identifier) */
    const char *keys;     /* key mode: "hot" (default) or "per-client" */
    const char *files;    /* stem of <impl>/<stem>.acquire.hgrm etc. (default: scenario) */
    bool fenced;          /* fencing "on" or "unsupported" (asked for): a fenced step */
    long clients;         /* client processes */
    double throughput;    /* throughput_per_s, NAN when absent */
    double acquire_p99;   /* latency_us.acquire.p99 in us, NAN when absent */
    double wakeups;       /* wakeups_per_release, NAN when absent */
    json_t *faults;       /* its faults[] (borrowed), NULL when absent */
};

/* A loaded summary.json: the usable results[] entries, in file order. */
struct plot_summary {
    json_t *root;         /* the parsed file; the entries' strings live here */
    const char *run_id;   /* run_id, "?" when absent */
    struct plot_entry *e; /* the usable entries */
    int n;                /* how many */
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

/* printf into buf (n bytes); -1 when it did not fit (a path too long to
 * use), else 0. */
int plot_fmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Parse the summary.json at path into *s (zeroed first). An entry without
 * usable impl and scenario names is skipped, with a note on stderr unless
 * quiet; absent keys and files default to "hot" and the scenario name.
 * Prints its own errors. Returns LAB_EXIT_OK, LAB_EXIT_USAGE (unparseable,
 * or no results[] array) or LAB_EXIT_ENV (out of memory). Call
 * plot_summary_free() afterwards whatever it returned. */
int plot_summary_load(const char *path, bool quiet, struct plot_summary *s);

/* Release what plot_summary_load() kept; s is zeroed. */
void plot_summary_free(struct plot_summary *s);

/* Append the point (x, y) to s. 0, or -1 when out of memory. */
int plot_series_push(struct plot_series *s, double x, double y);

/* Sort s's points by x (stable: equal x keep their order). */
void plot_series_sort_x(struct plot_series *s);

/* Thin s to at most limit points, keeping the largest y of each run of
 * `stride` consecutive points, so stalls survive. Returns the stride (1 when
 * nothing was dropped). */
size_t plot_series_thin(struct plot_series *s, size_t limit);

/* A new empty series at the end of set with linetype lt and dash type dt;
 * NULL when out of memory. The title keeps only characters that cannot
 * break gnuplot's quoted column header (others become '_'). The pointer is
 * valid until the next plot_set_add(). */
struct plot_series *plot_set_add(struct plot_set *set, const char *title, int lt, int dt);

/* Drop the last series of set (it turned out empty); set->n must be > 0. */
void plot_set_drop_last(struct plot_set *set);

/* Free every series and the set's array; set is zeroed, ready for reuse. */
void plot_set_free(struct plot_set *set);

/* Largest y over every series (0 when empty). */
double plot_set_ymax(const struct plot_set *set);

/* Write the set to path as gnuplot blocks: a quoted title line (read back
 * with `title columnheader(1)`), the rows "x y", two blank lines between
 * blocks. Each y is divided by yscale and raised to yfloor first (log axes
 * drop zeros). 0, or -1 when the file could not be written. */
int plot_set_write(const struct plot_set *set, const char *path, double yscale, double yfloor);

/* Append an .hgrm percentile distribution to s: x = 1/(1-percentile),
 * y = value in us. The last row (percentile 1, the maximum) has no finite
 * x; it is drawn at x = total count, where the top one of N values sits,
 * when that lies past the previous row. Sets *floored when a value is under
 * PLOT_FLOOR_US. Returns 0, or -1 when the file cannot be opened or memory
 * ran out. */
int plot_hgrm_read(const char *path, struct plot_series *s, bool *floored);

/* Append a .timeline.tsv ("# t_s acquire_us hold_us client" then rows) to
 * s: x = t_s, y = acquire_us. Sets *floored when a latency is under
 * PLOT_FLOOR_US and raises *tmax to the largest t_s. Returns 0, or -1 when
 * the file cannot be opened or memory ran out. */
int plot_timeline_read(const char *path, struct plot_series *s, bool *floored, double *tmax);

#endif
