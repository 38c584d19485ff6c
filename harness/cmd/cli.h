/*
 * cli.h - the locklab subcommands. main.c dispatches on the first argument;
 * each command parses its own options, prints its own --help and returns an
 * exit code from enum lab_exit.
 */
#ifndef LOCKLAB_CLI_H
#define LOCKLAB_CLI_H

#include <jansson.h>

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

/* `locklab bench adapter` (cmd_bench_adapter.c), dispatched by cmd_bench. */
int bench_adapter(int argc, char **argv);

#endif
