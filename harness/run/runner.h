/*
 * runner.h - run one implementation through one scenario.
 *
 * The parent maps one shared region, forks a process per client, waits
 * until every client has opened its connections (or failed to), releases
 * them all at once through a start barrier, stops them at the duration
 * bound or on a signal, reaps every one of them, and turns what they left
 * in their slots into a struct run_result: counters, merged histograms, the
 * oracle's overlap analysis, the workload's damage report and a verdict.
 */
#ifndef LOCKLAB_RUNNER_H
#define LOCKLAB_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include "lab.h"
#include "lock.h"
#include "result.h"
#include "run_env.h"
#include "scenario.h"



/* Run ops through s. Returns 0 with *res filled (also when the run was
 * interrupted: res->complete is false), or -1 with err filled when the run
 * could not be set up at all (then res holds nothing). stop is the
 * process-wide stop flag set by the signal handler. */
int runner_run(const struct scenario *s, const struct lock_ops *ops, const struct run_env *env,
               volatile int *stop, struct run_result *res, struct lab_err *err);

/* Async-signal-safe: SIGKILL every client of the run in progress. */
void runner_kill_all_now(void);


#endif
