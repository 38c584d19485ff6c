/*
 * baseline.h - regression checks against a saved baseline: verdicts must
 * not change, and speed, compared as ratios to a reference design measured
 * in the same run (medians over rounds), must not fall by more than a
 * tolerance. Ratios, not absolute times: a slower CI machine slows the
 * reference as much as the rest, a slower design does not.
 */
#ifndef LOCKLAB_BASELINE_H
#define LOCKLAB_BASELINE_H

#include <jansson.h>
#include <stdio.h>

#include "lab.h"

#define BASELINE_TOL_THROUGHPUT 0.30 /* default: ops/s ratio may fall by 30 % */
#define BASELINE_TOL_P50 0.50        /* default: acquire p50 ratio may rise by 50 % */

/* A baseline built from the results of summary (a summary.json object),
 * speed relative to design reference; NULL with err filled when the
 * reference is missing from a scenario step or nothing can be saved. */
json_t *baseline_build(json_t *summary, const char *reference, double tol_throughput,
                       double tol_p50, struct lab_err *err);

/* Compare summary with baseline: print a table to out, write one JUnit
 * testcase per compared figure to junit (a path; NULL: none). Returns 0
 * when nothing regressed, 1 when something did, -1 with err filled when
 * the baseline cannot be read or the JUnit file written. */
int baseline_compare(json_t *baseline, json_t *summary, FILE *out, const char *junit,
                     struct lab_err *err);

#endif
