/*
 * cli.h - the locklab subcommands. main.c dispatches on the first argument;
 * each command parses its own options, prints its own --help and returns an
 * exit code from enum lab_exit.
 */
#ifndef LOCKLAB_CLI_H
#define LOCKLAB_CLI_H

#include <jansson.h>

#include "backends.h"
#include "scenario.h"

int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_explore(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_compare(int argc, char **argv);

/* cmd_baseline.c, for run --baseline: a baseline file read and checked
 * (NULL, message printed, when it is not one), and a run directory checked
 * against it (an exit code; junit NULL: RUN_DIR/baseline-junit.xml). */
json_t *baseline_load(const char *path);
int baseline_check_run(json_t *baseline, const char *run_dir, const char *junit);

/* cmd_lab_up.c, for run and explore: bring up the hosts, the slow links
 * and the servers the backends b planned for scns need (LAB_EXIT_OK, or the
 * exit code after saying why, with nothing left up), and take them down. */
int lab_up(struct scenario *const *scns, int n, struct backends *b);
void lab_down(struct backends *b);

/* `locklab bench adapter` (cmd_bench_adapter.c), dispatched by cmd_bench. */
int bench_adapter(int argc, char **argv);

#endif
