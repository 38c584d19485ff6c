/*
 * plot_holds.h - the hold timeline of one step as a gnuplot plot
 * (plots/holds.gp): who held the lock when, lane by lane, overlaps red.
 */
#ifndef LOCKLAB_PLOT_HOLDS_H
#define LOCKLAB_PLOT_HOLDS_H

#include "plot_gnuplot.h"

/* One step to draw. */
struct plot_holds_step {
    const char *tsv;       /* its <impl>/<files>.holds.tsv */
    const char *datafile;  /* the data file to write (plot-data/...) */
    const char *name;      /* output stem: RUN_DIR/<name>-holds.png and .svg */
    const char *title;     /* the plot's title: scenario and step */
    const char *subtitle;
    const char *bands;     /* fault bands, "start end kind ..." (timeline.gp's) */
    int clients;           /* lanes */
};

/* Draw st (nothing when its .holds.tsv is absent or empty). Returns
 * LAB_EXIT_OK, LAB_EXIT_USAGE or LAB_EXIT_ENV as plot_gnuplot_draw. */
int plot_holds_draw(const struct plot_gnuplot *gp, const struct plot_holds_step *st);

#endif
