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

/* Directory holding the shipped scenarios: ./scenarios when it exists,
 * else the source tree's (compiled in). */
const char *cli_scenario_dir(void);

/* Split "host:port" into host (hostlen bytes) and port. 0 or -1. */
int cli_parse_hostport(const char *s, char *host, size_t hostlen, int *port);

#endif
