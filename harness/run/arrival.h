/*
 * arrival.h - the open-loop schedule of one client (arrival: in a
 * scenario): the instants at which it is meant to start its acquires,
 * whether or not the last one has returned. A closed-loop client asks
 * again only when its last acquire returned, so a slow lock slows the
 * questions down and hides its own queueing (coordinated omission); an
 * open-loop client keeps the schedule, and its latency is measured from
 * the intended start, as wrk2 and HdrHistogram do, so waiting behind a
 * slow lock shows in the histogram. A start that comes more than
 * arrival.late after its instant (the client was still busy with the last
 * one) is counted late: the fraction says how well the generator kept the
 * schedule.
 *
 * Each client has a schedule of its own at rate / clients: Poisson gaps
 * (each client's own random stream, so n independent Poisson streams add
 * up to one of the whole rate) or constant ones (each client shifted by
 * idx / rate, so the whole run asks at even gaps of 1 / rate). Both the
 * one-process-per-client loop (client.c) and an event loop that runs many
 * clients can use it: arrival_next gives the instant, arrival_took counts
 * a start; arrival_wait is the blocking pair for the former.
 */
#ifndef LOCKLAB_ARRIVAL_H
#define LOCKLAB_ARRIVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "scenario.h"

struct arrival {
    bool open;           /* false: closed loop, nothing scheduled */
    int dist;            /* enum arrival_dist */
    double gap_ns;       /* mean gap between this client's starts */
    int64_t late_ns;     /* a start this far behind counts as late */
    double next_ns;      /* the next intended start (CLOCK_MONOTONIC) */
    uint64_t rng;        /* this client's own stream (Poisson) */
};

/* Client idx's schedule for s (closed loop when s has no arrival rate),
 * starting at start_ns (the start barrier). */
void arrival_init(struct arrival *a, const struct scenario *s, int idx, int64_t start_ns);

/* The intended start of the next acquire, and the schedule moves on by one
 * gap. Only for an open schedule. */
int64_t arrival_next(struct arrival *a);

/* A start at now of the acquire meant for intended: 1 when it is late
 * (more than late_ns behind), else 0. */
int arrival_took(const struct arrival *a, int64_t intended, int64_t now);

/* The blocking form: sleep until the next intended start (at once when it
 * has passed), count the start in *starts and a late one in *late, and
 * return the instant the acquire's latency counts from: the intended
 * start, or now in a closed loop. Returns 0 when stop was set or the
 * instant lies past deadline_ns (nothing is counted). */
int64_t arrival_wait(struct arrival *a, int64_t deadline_ns, const volatile int *stop,
                     int64_t *starts, int64_t *late);

#endif
