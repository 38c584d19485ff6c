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
 * table), compare.c (stores side by side), footprint.c (the harness's own
 * cost per step); atomic_file.c writes them all.
 */
#ifndef LOCKLAB_REPORT_H
#define LOCKLAB_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "result.h"
#include "run_dir.h"
#include "scenario.h"
#include "stems.h"

/* Create the run directory. 0 or -1 with err filled. */
int report_open(struct report *r, const char *root, const struct scenario *const *scenarios,
                int n_scenarios, const char *junit_copy, struct lab_err *err);

/* Add one result (copied), write its .hgrm files and rewrite summary.json
 * and junit.xml as incomplete. 0 or -1 with err filled. */
int report_add(struct report *r, const struct run_result *res, struct lab_err *err);

/* A step that was not run, and why (a design at more clients than its
 * store takes connections): kept in summary.json's "skipped" (docs/results.md)
 * and said on report.html; keys is the step's layout ("hot", "per-client").
 * The summary is rewritten. 0 or -1 with err filled. */
int report_skip(struct report *r, const char *scenario, const char *impl, int clients,
                const char *keys, const char *why, struct lab_err *err);

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

/* Console table: a scenario heading, a column header, one row per result. */
void report_print_heading(FILE *f, const struct scenario *s, int clients);
void report_print_row(FILE *f, const struct run_result *res);

/* The closing line: "4 expectations met, 0 unmet; exit 0: every
 * expectation met", counted as report.html's summary counts them (a result
 * with an expectation). */
void report_print_closing(FILE *f, const struct report *r, int exit_code);

/* What exit code means, in the words of `run --help` (the console's
 * closing line and report.html's summary). */
const char *report_exit_meaning(int exit_code);

/* After a scenario with designs of two stores or more (Redis, ZooKeeper,
 * PostgreSQL...): one row per key layout and client count, each
 * implementation's ops/s and acquire p50/p99 side by side, and for each
 * store after the first the ratio of the first store's best rate to its
 * best. Prints nothing when the results hold fewer than two stores. */
void report_print_comparison(FILE *f, const struct run_result *const *res, int n);

/* After a sweep: one row per step with its cycle rate, the client
 * processes that ran it, the clients' and lock servers' cores (! when
 * client-bound), the client processes' peak RSS summed and per client, and
 * the parent's RSS (summary.json's cpu object has the same figures). */
void report_print_footprint(FILE *f, const struct run_result *const *res, int n);

#endif
