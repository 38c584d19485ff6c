/*
 * bench.h - the pieces the `locklab bench` commands share (cmd_bench_common.c):
 * their option parser and the scenario and run they build on.
 */
#ifndef LOCKLAB_BENCH_H
#define LOCKLAB_BENCH_H

#include <stdbool.h>
#include <stdio.h>

#include "lab.h"
#include "result.h"
#include "scenario.h"

/* One option of a benchmark: what --name sets (one of num, str, flag). */
struct bench_opt {
    const char *name;  /* the long option without "--"; NULL ends a table */
    double *num;       /* a number, read by bench_scan() */
    bool integer;      /* ... a whole one */
    const char **str;  /* a string */
    int *flag;         /* set to 1 when given */
};

#define BENCH_MAX_OPTS 8

/* Parse the options of `bench cmd` (argv[0] is cmd) into what opts point
 * at; --help prints usage to stdout. Returns -1 when every option was read,
 * else the exit code: LAB_EXIT_OK after --help, LAB_EXIT_USAGE after saying
 * on stderr what is wrong. */
int bench_getopt(const char *cmd, int argc, char **argv, const struct bench_opt *opts,
                 void (*usage)(FILE *));

/* A counter-workload scenario on one hot key, for the benchmarks. */
void bench_scenario(struct scenario *s, const char *name, int clients, double seconds);

/* Run impl through s on the started backends; the result (caller frees)
 * when the run completed safe, else NULL with err filled. */
struct run_result *bench_run(const struct scenario *s, const char *impl, struct lab_err *err);

/* Run a bare loop once (args: the servers' connection string, seconds and,
 * when sessions > 0, that many connections at once); cycles per second,
 * or -1. */
double bench_run_bare(const char *bin, const char *conn, double seconds, int sessions);

/* `locklab bench ceiling` (cmd_bench_ceiling.c). */
int bench_ceiling(int argc, char **argv);

#endif
