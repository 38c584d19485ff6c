/*
 * plot_gnuplot.h - running gnuplot for `locklab plot`.
 *
 * A plot is one script from plots/ run as `gnuplot -e ARGS SCRIPT`, where
 * ARGS is a list of name='value'; assignments naming the data file, the
 * titles, the line styles and the output images. This header builds those
 * assignments (plot_args), finds gnuplot and the scripts, and draws one plot
 * into PNG and SVG through .tmp names, so a failed plot never leaves half an
 * image.
 */
#ifndef LOCKLAB_PLOT_GNUPLOT_H
#define LOCKLAB_PLOT_GNUPLOT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "plot_data.h"

#define PLOT_ARGS_MAX 8192 /* the -e assignments */

/* The -e argument: name='value'; pairs, single quotes doubled as gnuplot's
 * single-quoted strings want them (backslashes are literal there). */
struct plot_args {
    char buf[PLOT_ARGS_MAX]; /* "a='x'; n=3; ..." */
    size_t len;              /* bytes used */
    bool overflow;           /* something did not fit */
};

/* How to draw: the gnuplot binary, its scripts, where the images go. */
struct plot_gnuplot {
    char bin[PATH_MAX];        /* the gnuplot binary */
    char script_dir[PATH_MAX]; /* where latency.gp and friends live */
    const char *out_dir;       /* the images go here (the run directory) */
    bool quiet;                /* print only errors */
};

/* Start a's assignments: datafile, scenario and subtitle, then, when set is
 * not NULL, n (its series count) and lts and dts, space-separated lists of
 * the series' linetypes and dash types (a solid line whose linetype is past
 * the 12 colours is dotted, so the second round of colours differs). */
void plot_args_init(struct plot_args *a, const char *scenario, const char *subtitle,
                    const char *datafile, const struct plot_set *set);

/* Append name='value'; to a (quotes doubled); sets a->overflow when it does
 * not fit. */
void plot_args_str(struct plot_args *a, const char *name, const char *value);

/* Append name=value; to a (0 when v is not finite); sets a->overflow when
 * it does not fit. */
void plot_args_num(struct plot_args *a, const char *name, double v);

/* Find gnuplot on PATH (the default path when PATH is unset) and put its
 * path in out (n bytes). 0, or -1 when there is none. */
int plot_gnuplot_find(char *out, size_t n);

/* Where the scripts are: "plots" when ./plots holds them, else the source
 * tree's plots directory (compiled in). Not checked for latency.gp. */
const char *plot_gnuplot_script_dir(void);

/* Draw one plot: g->script_dir/NAME.gp with a's assignments plus png, svg
 * (the .tmp names) and plotdir, into g->out_dir/<scenario>-NAME.png and .svg,
 * renamed from the .tmp names when gnuplot exited 0 and wrote both. Prints
 * errors to stderr and, unless g->quiet, gnuplot's output and a "wrote" line
 * on stdout. Returns LAB_EXIT_OK, LAB_EXIT_USAGE (a path too long, or a's
 * assignments overflowed) or LAB_EXIT_ENV (gnuplot could not run or failed,
 * or the rename failed; the .tmp files are removed). */
int plot_gnuplot_draw(const struct plot_gnuplot *g, const char *scenario, const char *name,
                      struct plot_args *a);

#endif
