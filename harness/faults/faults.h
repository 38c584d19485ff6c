/*
 * faults.h - the fault engine: injects a scenario's fault timeline into one
 * run (the parent's side), and fires the faults armed at failpoints (the
 * side of the client that reaches one).
 *
 * The runner calls faults_tick() from its supervision loop; the engine acts
 * on observed state, not on hope: a `holder` target is a client whose
 * shared slot says it is inside its critical section, checked again after
 * it has been stopped (a client that left in between is continued at once
 * and another is looked for, until the entry's window closes: then the
 * fault is recorded `skipped`). Every fault becomes a record in the run's
 * shared fault log (region.h) with the process or server it hit, when it
 * started and ended, and its outcome. faults_release() continues every
 * process a fault paused (before the clients are told to stop, and on any
 * exit path); faults_finish() also brings back every server a fault left
 * down, so the next design of the scenario starts on whole servers (an
 * ensemble that elects is waited for: fault_watch.h).
 *
 * What each action does is its row's (fault_action.h); the engine's state
 * and the pieces the rows' hooks use are its own (fault_engine.h).
 */
#ifndef LOCKLAB_FAULTS_H
#define LOCKLAB_FAULTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "failpoint.h"
#include "lock.h"
#include "region.h"
#include "scenario.h"

struct faults; /* the engine's state, its own (fault_engine.h) */

/* Parent, after the start barrier opened at start: arm the timeline of s
 * for a run of ops; failpoint entries of other designs and server targets
 * ops does not use are recorded `skipped` at once. The parent runs one
 * design at a time: the engine it returns is the one there is, until
 * faults_finish. */
struct faults *faults_begin(const struct scenario *s, const struct lock_ops *ops,
                            struct region *rg, const pid_t *pids, int64_t start);

/* Parent: do what is due at now; returns when the engine next needs to run
 * (INT64_MAX: nothing left; sooner while it waits for a holder). */
int64_t faults_tick(struct faults *F, int64_t now);

/* Parent: has a client published a fault record since the engine last
 * ran (a failpoint's, whose pause must end on time)? Then tick now. */
bool faults_news(struct faults *F);

/* Parent: continue every process a fault has paused (safe to call often). */
void faults_release(struct faults *F);

/* Parent, after every client is reaped: release, bring back every server a
 * fault left down (unless interrupted), and close the open records. */
void faults_finish(struct faults *F, bool interrupted);

/* Before the clients are forked: arm the failpoint entries of s that belong
 * to design ops (the clients inherit them). Returns a mark for
 * faults_disarm(). */
int faults_arm_failpoints(const struct scenario *s, const struct lock_ops *ops);
void faults_disarm(int mark);

/* Client idx, in its process: a failpoint armed from entry fp->fault was
 * reached. Fires it when its count allows: the action's row does it
 * (sleep, or kill or stop this whole process, which the parent continues
 * after the duration; with one_client, a client of a group that shares
 * nothing between its clients, the row asks the group to hold or kill
 * that client alone, through its slot's ctl). */
void faults_at_failpoint(struct region *rg, const struct scenario *s, int idx,
                         const struct failpoint *fp, bool one_client);

#endif
