/*
 * plan.h - the run steps of a scenario: its sweeps expanded.
 *
 * A scenario may sweep clients, lock.keys and workload.fencing (a list
 * instead of one value). The loaded scenario keeps the lists as the file
 * gave them and is never changed by a run; the plan lists the steps, one
 * per combination, and plan_apply makes the scenario one step runs: a copy
 * with the step's values in the run's own fields (clients,
 * per_client_keys, fencing), the fields the runner and the clients read.
 */
#ifndef LOCKLAB_PLAN_H
#define LOCKLAB_PLAN_H

#include <stdbool.h>

#include "scenario.h"

/* at most: every client count, both key layouts, both fencing settings */
#define PLAN_MAX_STEPS (SCN_MAX_STEPS * 2 * 2)

struct plan_step {
    int clients;         /* clients of this step */
    int per_client_keys; /* enum key_mode */
    int fencing;         /* workload.fencing of this step: 0 or 1 */
};

/* The steps of s in the order a run takes them: key layout, then client
 * count, then fencing (the innermost, so that the fenced step of a design
 * follows its unfenced one). Returns how many (at least 1). */
int plan_steps(const struct scenario *s, struct plan_step out[PLAN_MAX_STEPS]);

/* How many runs s makes: every design at every step. */
int plan_runs(const struct scenario *s);

/* Does s sweep clients or key layouts (its results get one file per step)? */
bool plan_is_sweep(const struct scenario *s);

/* *out = s as step st runs it. */
void plan_apply(const struct scenario *s, const struct plan_step *st, struct scenario *out);

#endif
