/*
 * report.h - everything a run leaves behind: the console table,
 * results/<run-id>/summary.json, per-implementation .hgrm files, junit.xml
 * and the results/latest link.
 *
 * The files are rewritten after every implementation finishes (with
 * "complete": false until the last one), each through a temporary name and
 * a rename, so an interrupted or crashed run still leaves every result
 * measured so far, and never half a file.
 *
 * One job a file: report.c the run directory, summary_json.c, junit.c
 * (the JUnit writer the baseline check shares), hgrm.c, console.c (the
 * table), compare.c (stores side by side); atomic_file.c writes them all.
 */
#ifndef LOCKLAB_REPORT_H
#define LOCKLAB_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "runner.h"
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
    char *const *argv;     /* the command line as run (report_set_command), or NULL */
    int argc;
    int64_t started_ns;    /* CLOCK_MONOTONIC at report_open: the invocation's duration */
    int exit_code;         /* -1 until report_conclude */
    double duration_s;     /* ... and how long the invocation took until then */
    bool complete;         /* as report_finish was told */
};

/* Create the run directory. 0 or -1 with err filled. */
int report_open(struct report *r, const char *root, const struct scenario *const *scenarios,
                int n_scenarios, const char *junit_copy, struct lab_err *err);

/* Add one result (copied), write its .hgrm files and rewrite summary.json
 * and junit.xml as incomplete. 0 or -1 with err filled. */
int report_add(struct report *r, const struct run_result *res, struct lab_err *err);

/* Final rewrite of summary.json and junit.xml with complete as given, the
 * --junit copy, and the results/latest link. 0 or -1 with err filled. */
int report_finish(struct report *r, bool complete, struct lab_err *err);

/* The command line to record (summary.json's command_line: "locklab"
 * and then argv[0..argc), e.g. "run", "x.yaml"); argv must outlive r. */
void report_set_command(struct report *r, int argc, char *const *argv);

/* Once the exit code is known (after the baseline gate, the plots): write
 * it, the invocation's duration and the machine's load into summary.json.
 * 0 or -1 with err filled. */
int report_conclude(struct report *r, int exit_code, struct lab_err *err);

void report_free(struct report *r);

/* The name stem of a result's files: "<scenario>" or, for one step of a
 * sweep, "<scenario>-<hot|keyed>-<clients>", followed by "-fenced" when the
 * step asked for fencing (files <impl>/<stem>.acquire.hgrm, .hold.hgrm,
 * .release.hgrm, .handoff.hgrm, .timeline.tsv). */
void report_result_tag(const struct run_result *x, char *buf, size_t n);

/* The same stem from its parts: scenario name, whether the result is one
 * step of a sweep, and that step's key layout, client count and fencing. */
void report_stem(char *buf, size_t n, const char *scenario, bool sweep, int per_client_keys,
                 int clients, int fencing);

/* A step's stem before it has a result: report_stem's, followed by "-rN"
 * for round N > 1 of run --rounds (as report_result_tag gives it after). */
void report_step_tag(char *buf, size_t n, const char *scenario, bool sweep, int per_client_keys,
                     int clients, int fencing, int round);

/* Console table: a scenario heading, a column header, one row per result. */
void report_print_heading(FILE *f, const struct scenario *s, int clients);
void report_print_row(FILE *f, const struct run_result *res);

/* After a scenario with designs of two stores or more (Redis, ZooKeeper,
 * PostgreSQL...): one row per key layout and client count, each
 * implementation's ops/s and acquire p50/p99 side by side, and for each
 * store after the first the ratio of the first store's best rate to its
 * best. Prints nothing when the results hold fewer than two stores. */
void report_print_comparison(FILE *f, const struct run_result *const *res, int n);

#endif
