/*
 * progress.h - the progress a person at a terminal sees while `locklab
 * run` works: one line rewritten in place (scenario i of n, step j of m,
 * the design, elapsed and planned time of the step, locks granted, an ETA
 * for the whole invocation) and a line of its own for each fault as it
 * fires, at each of its phases (a failover's cut, kill, switch...), and as
 * it lands or ends (from the run's fault log, region.h).
 *
 * The command plans the invocation (progress_plan, once per scenario and
 * round), says when each step begins and ends; the runner, which owns the
 * shared region while a step runs, draws the line and the faults. The
 * ETA counts each remaining step at its planned duration (run.max_duration)
 * plus the setup time steps took so far; a step bounded by
 * run.ops_per_client counts as long as such steps took so far, or its
 * max_duration while none has finished (the ETA then says "<=").
 */
#ifndef LOCKLAB_PROGRESS_H
#define LOCKLAB_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "region.h"
#include "scenario.h"

struct progress {
    bool on;                  /* draw at all (a terminal, or LOCKLAB_PROGRESS=1) */
    int scenario, n_scenarios; /* the scenario under way, 1-based, of how many */
    int step, n_steps;        /* the step under way in it (a design at a plan step) */
    char label[96];           /* the design and the step's tag ("redis-lua +fence") */
    int64_t planned_ns;       /* the step's run.max_duration */
    int64_t ops_bound;        /* the step's run.ops_per_client * clients, 0: by time */
    int64_t begun_ns;         /* when the step began (setup included) */
    /* the invocation's steps not begun yet */
    int64_t left_timed_ns;    /* ... bounded by time: their max_duration, summed */
    int left_timed;
    int64_t left_bounded_max_ns; /* ... bounded by ops: their max_duration, summed */
    int left_bounded;
    /* the steps finished so far */
    int done;
    int64_t setup_ns;         /* their wall time outside the measured window, summed */
    int bounded_done;
    int64_t bounded_wall_ns;  /* wall time of the ops-bounded ones, summed */
    int64_t line_at_ns;       /* a line is drawn (0: none) */
    unsigned char fault_shown[FAULT_RECORDS_MAX]; /* per record: 0, fired, ended */
    unsigned char phases_shown[FAULT_RECORDS_MAX]; /* per record: its phases shown */
};

/* on: draw; false leaves every other call a no-op. LOCKLAB_PROGRESS=1
 * turns it on without a terminal, =0 off (progress_wanted). */
void progress_init(struct progress *p, bool on, int n_scenarios);

/* Is progress wanted on stderr: a terminal, unless quiet; the environment
 * variable LOCKLAB_PROGRESS (1 or 0) overrides the terminal test. */
bool progress_wanted(bool quiet);

/* runs steps of s are part of the invocation (s as it runs: its
 * max_duration and ops_per_client). */
void progress_plan(struct progress *p, const struct scenario *s, int runs);

/* A step begins: scenario i (1-based), step j of m of it, label, s as the
 * step runs it. */
void progress_begin(struct progress *p, int scenario, int step, int n_steps, const char *label,
                    const struct scenario *s);

/* The step ended; measured_s is its measured window (the result's
 * elapsed_s), 0 when it did not run. */
void progress_end(struct progress *p, double measured_s);

/* The runner, while the step runs (start: the start barrier opened):
 * print every fault record that fired or ended since the last call, then,
 * when draw_line, the progress line. */
void progress_tick(struct progress *p, const struct region *rg, int n_clients, int64_t start,
                   bool draw_line);

/* Erase the progress line (the step's row comes next). */
void progress_clear(struct progress *p);

/* "1m12s", "8.0s": a duration for the progress line and `locklab list`. */
const char *progress_fmt_duration(char *buf, size_t n, double seconds);

#endif
