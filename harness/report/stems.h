/*
 * stems.h - the names of a result's files: one stem per scenario step, the
 * same for the files a run writes, the console, JUnit and the plots that
 * read them back (stems.c).
 */
#ifndef LOCKLAB_STEMS_H
#define LOCKLAB_STEMS_H

#include <stdbool.h>
#include <stddef.h>

#include "result.h"

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

/* A step's label for people, as the table's first column gives it:
 * "redis-lua", "redis-lua hot/16" (a sweep's step), then " +fence" when
 * fenced (FENCING_ON), " -fence" when asked for but not given. */
void report_step_label(char *buf, size_t n, const char *impl, bool sweep, int per_client_keys,
                       int clients, int fencing);

#endif
