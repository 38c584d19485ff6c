/*
 * cross_check.h - replay the live holder counter from the interval logs
 * and compare (cross_check.c).
 */
#ifndef LOCKLAB_CROSS_CHECK_H
#define LOCKLAB_CROSS_CHECK_H

#include <stdint.h>

#include "runner.h"

/* Set res->cross_check and res->cross_note from the n intervals all (every
 * client's, the dead ones closed by the parent) against res's live
 * counters: CROSS_OK when they agree, CROSS_MISMATCH (with both figures in
 * the note) when not, CROSS_SKIPPED when the logs cannot be complete (a
 * client died inside a mark, the log was full). Sorts all. Returns 0, or
 * oracle_sequence's error. */
int cross_check(struct run_result *res, struct oracle_interval *all, int64_t n);

#endif
