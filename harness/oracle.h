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
};

/* One critical section as a client saw it. */
struct oracle_interval {
    int64_t wait_ns;  /* CLOCK_MONOTONIC when the client started to acquire */
    int64_t enter_ns; /* when the lock was granted (entry marked) */
    int64_t exit_ns;  /* when the client left (before it sent release) */
    int64_t release_ns; /* when the release returned */
    uint32_t key;     /* key index */
    uint32_t client;  /* client index */
    uint32_t flags;   /* ORACLE_RELEASED_KEY when the release removed a lock from the store */
};

/* The release said it removed a lock (a DEL that deleted, a script that
 * returned 1) from a store shared by the clients. */
#define ORACLE_RELEASED_KEY 1u

/* Mark entry: increments holders, updates max_holders and live_overlaps.
 * Returns the number of other holders found inside (0 when exclusive). */
int oracle_enter(struct oracle_key *k);

/* Mark exit: decrements holders. */
void oracle_exit(struct oracle_key *k);

/* Count releases that removed another client's lock: interval A whose
 * release removed a lock (ORACLE_RELEASED_KEY) while a client B that was
 * granted the lock after A (B entered after A entered) was inside for the
 * whole release (B entered before A's exit mark, left after A's release
 * returned). The lock in the store was then B's, so A deleted it. Needs iv
 * sorted by key and entry time, as oracle_analyze() leaves it. A client that
 * crashed leaves no interval, so it cannot be mistaken for a holder. */
int64_t oracle_misdeletes(const struct oracle_interval *iv, size_t n);

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
