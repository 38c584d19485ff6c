/*
 * oracle.h - ground truth for mutual exclusion, independent of any lock.
 *
 * While a run is going, each client marks entry into and exit from the
 * critical section on a per-key slot in shared memory (an atomic holder
 * count, so a second holder is seen the moment it enters) and appends the
 * interval to its own log. After the run the parent hands all logs to
 * oracle_analyze(), which counts overlaps exactly: violating pairs, total
 * time with two or more holders, the highest number of simultaneous holders,
 * and handoff gaps (from one holder's exit to the entry of a client that was
 * already waiting).
 *
 * Entry is marked after the lock service said "granted" and exit before the
 * release is sent, so a logged interval always lies inside the time the lock
 * service believed the client held the lock: an overlap in the logs is a real
 * violation, never an artefact of measurement.
 */
#ifndef LOCKLAB_ORACLE_H
#define LOCKLAB_ORACLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"

/* One key's live state, in shared memory. */
struct oracle_key {
    atomic_int holders;          /* clients inside the critical section now */
    atomic_int max_holders;      /* highest value holders ever reached */
    atomic_llong live_overlaps;  /* entries that found another holder inside */
    atomic_llong entries;        /* entries so far: tells whether anyone entered meanwhile */
};

/* One critical section as a client saw it. */
struct oracle_interval {
    int64_t wait_ns;  /* CLOCK_MONOTONIC when the client started to acquire */
    int64_t enter_ns; /* when the lock was granted (entry marked) */
    int64_t exit_ns;  /* when the client left (before it sent release) */
    uint32_t key;     /* key index */
    uint32_t client;  /* client index */
};

/* Mark entry: increments holders, updates max_holders and live_overlaps.
 * Returns the number of other holders found inside (0 when exclusive). */
int oracle_enter(struct oracle_key *k);

/* Mark exit: decrements holders. */
void oracle_exit(struct oracle_key *k);

/* For telling whether a release hit someone else's lock: take
 * oracle_entries() after marking exit and before sending the release; after
 * the release, oracle_held_throughout() is true when some client was inside
 * the critical section for the whole release (it was inside already and
 * nobody entered meanwhile). A release that deleted a lock during that time
 * deleted that client's lock. Conservative: it may miss a case, it never
 * reports one that did not happen. */
int64_t oracle_entries(struct oracle_key *k);
bool oracle_held_throughout(struct oracle_key *k, int64_t entries_before);

struct oracle_report {
    int64_t intervals;      /* intervals analysed */
    int64_t violations;     /* pairs of intervals on the same key that overlap */
    int64_t overlap_ns;     /* total time during which >= 2 clients held a key */
    int max_concurrent;     /* most simultaneous holders of one key */
    int64_t handoffs;       /* handoff gaps recorded into the histogram */
};

/* Analyse n intervals (any order; the array is sorted in place by key, then
 * entry time). Intervals with exit_ns < enter_ns are invalid: returns -EINVAL
 * without analysing. Two intervals overlap when one enters strictly before
 * the other exits. A handoff gap is recorded (in microseconds, into handoff
 * when not NULL) for an interval whose client was waiting (wait_ns) before
 * the latest exit among the earlier intervals on its key and entered at or
 * after that exit. Returns 0. */
int oracle_analyze(struct oracle_interval *iv, size_t n, struct oracle_report *out,
                   struct hist *handoff);

#endif
