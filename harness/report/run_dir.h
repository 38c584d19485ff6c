/*
 * run_dir.h - one invocation's results folder as the report keeps it: where
 * it is, what ran, and every result so far (report.c opens and fills it;
 * the writers of summary.json, .hgrm and JUnit read it).
 */
#ifndef LOCKLAB_RUN_DIR_H
#define LOCKLAB_RUN_DIR_H

#include <stdbool.h>
#include <stdint.h>

#include "result.h"
#include "scenario.h"

struct report {
    char root[1024];       /* results root (--out, default "results") */
    char dir[1200];        /* root/run_id */
    char run_id[128];      /* e.g. 20261121-164012-oversell */
    char started_at[32];   /* ISO 8601 UTC */
    char host[256];        /* hostname */
    char junit_copy[1024]; /* --junit FILE, or "" */
    const struct scenario *const *scenarios; /* every scenario of this invocation */
    int n_scenarios;
    struct run_result **results; /* owned copies, in run order */
    int n_results, cap_results;
    struct json_t *skipped; /* steps not run (report_skip): a JSON array, owned; NULL
                               until the first */
    char *const *argv;     /* the command line as run (report_set_command), or NULL */
    int argc;
    int64_t started_ns;    /* CLOCK_MONOTONIC at report_open: the invocation's duration */
    int exit_code;         /* -1 until report_conclude */
    double duration_s;     /* ... and how long the invocation took until then */
    bool complete;         /* as report_finish was told */
};

#endif
