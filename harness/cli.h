/*
 * cli.h - the locklab subcommands. main.c dispatches on the first argument;
 * each command parses its own options, prints its own --help and returns an
 * exit code from enum lab_exit.
 */
#ifndef LOCKLAB_CLI_H
#define LOCKLAB_CLI_H

int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_plot(int argc, char **argv);

/* Draw run_dir's plots (PNG + SVG per scenario, see cmd_plot.c) with gnuplot.
 * quiet: print nothing but errors. Returns 0 or an exit code (2: run_dir or
 * its summary.json missing; 3: gnuplot missing or failed). */
int plot_run_dir(const char *run_dir, int quiet);

#endif
