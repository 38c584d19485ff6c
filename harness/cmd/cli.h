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

/* `locklab bench adapter` (cmd_bench_adapter.c), dispatched by cmd_bench. */
int bench_adapter(int argc, char **argv);

#endif
