/*
 * fault_record.h - what a run records of one firing of a fault: what it
 * hit, when it landed and ended, its outcome, and how the store recovered.
 *
 * The engine (harness/faults/) fills the records in the run's shared log
 * (region.h); the verdict rules, the result (result.h) and the reports
 * read them, so they are plain data beside the oracle.
 */
#ifndef LOCKLAB_FAULT_RECORD_H
#define LOCKLAB_FAULT_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "fault_spec.h"

#define FAULT_RECORDS_MAX 128 /* faults one run records */
#define FAULT_PHASES_MAX 6 /* named instants of a fault with phases (a failover) */

enum fault_outcome { FAULT_DONE = 0, FAULT_SKIPPED, FAULT_FAILED, FAULT_ACTIVE };

/* Did a fault put the lock at stake (at_stake.h)? n/a: not a fault that
 * can cost a working holder its lock (a holder killed, a non-holder hit,
 * a failpoint), or it never landed. */
enum fault_stake { STAKE_NA = 0, STAKE_NO, STAKE_YES };

/* What one firing of a fault did, in a run. */
struct fault_record {
    int spec;               /* index in the scenario's faults */
    enum fault_action action;
    char target[48];        /* the entry's target as written (or its failpoint) */
    enum fault_outcome outcome;
    char hit[96];           /* "client 3 (pid 1234)", "redis (pid 99)", "" when skipped */
    int client;             /* the client hit, -1 for a server or none */
    int pid;                /* the process hit, 0 for none */
    int64_t start_ns;       /* CLOCK_MONOTONIC when it landed (or was given up) */
    int64_t end_ns;         /* when it ended (a pause continued, a server back); = start when instant */
    char note[320];         /* why skipped or failed; what else happened (a partition:
                               its probes) */
    bool not_used;          /* skipped because the design does not use the target */
    bool holder;            /* the client hit held the lock (or was taking it, at a failpoint) */
    bool one_client;        /* a client of a group hit alone (its slot's ctl), not its
                               process (group.c) */
    int64_t recovery_ns;    /* a killed client: from the kill to the next grant; a server
                               fault (and a partition): from back_ns to the first grant
                               after it; -1 none */
    int64_t taken_ns;       /* a partition cutting off a holder (when: holder): from the cut
                               to the first grant to another client; -1 none */
    int64_t left_ns;        /* the same: from the cut until that holder left its critical
                               section; -1 not seen */
    int64_t back_ns;        /* a server fault: when the store itself said it served again
                               (its health check), 0 while (or when never) back */
    bool excusing;          /* a fault on a server that acted: lock errors are its doing */
    bool whole_store;       /* ... on the design's only server: nobody could be granted
                               from its action until back_ns (an acquire whose wait
                               overlapped that outage and timed out is the fault's) */
    int64_t grace_ns;       /* a server fault: lock errors are the fault's from just before
                               its action until back_ns + this */
    int64_t errors_before;  /* a server fault: lock errors of all clients when it fired */
    int64_t errors_after;   /* ... and those that came after it (errors_before taken off) */
    int n_phases;           /* a fault with phases (failover): its instants, in order */
    struct {
        char name[24];      /* "cut", "granted", "killed", "switched", "writable", "rejoined" */
        int64_t at_ns;      /* CLOCK_MONOTONIC */
    } phase[FAULT_PHASES_MAX];
    char leader[32];        /* a server fault on a store that elects (fault_watch.h): who
                               led once it served again, "" when not watched */
    int64_t leader_ns;      /* ... when a leader served again after the fault took the
                               store's away (an election), 0 when it never went */
    int64_t jump_ns;        /* clock-jump: how far the server's clock was seen to move */
    int64_t in_section_ns;  /* a fault aimed at a holder (target: holder, a failover's
                               kill): how far into that holder's critical section it
                               landed, from its grant; -1 none */
    /* at stake, judged after the run from the intervals (at_stake.c) */
    enum fault_stake at_stake;
    int64_t stake_from_ns;  /* the window: from the lock's end under its holder (another's
                               grant, or the store serving again) ... */
    int64_t stake_to_ns;    /* ... to that holder's exit; both 0 when none */
    int stake_waiters;      /* other clients asking in the window */
    char stake_why[144];    /* in words, yes or no */
};

/* Did r take a server's service away (a server fault that acted: not a
 * client's, not a clock's, not one skipped)? Those are the faults whose
 * store's return is timed (back_ns, recovery_ns, errors_after). */
static inline bool fault_took_service(const struct fault_record *r)
{
    return r->excusing && r->outcome != FAULT_SKIPPED;
}

#endif
