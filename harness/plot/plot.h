/*
 * plot.h - the plots of a run, drawn by gnuplot from its results folder:
 * for each scenario, acquire latency by percentile, throughput against
 * clients, wakeups per release and latency over time (plot_run.c decides
 * what each shows; plot_data.c gathers the numbers; plot_gnuplot.c runs the
 * scripts in plots/).
 */
#ifndef LOCKLAB_PLOT_H
#define LOCKLAB_PLOT_H

/* Draw run_dir's plots (PNG + SVG per scenario) with gnuplot. quiet: print
 * nothing but errors. Returns 0 or an exit code (2: run_dir or its
 * summary.json missing; 3: gnuplot missing or failed). */
int plot_run_dir(const char *run_dir, int quiet);

#endif
