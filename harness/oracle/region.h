/*
 * region.h - the shared memory of one run, as the parent and its forked
 * clients both see it (see runner.c for the parent, client.c for a client).
 *
 * One MAP_SHARED region holds a small head (the stop flag, the ready count
 * and the start barrier's futex word), one slot per lock key (the oracle's
 * live state and the counter workload's value) and one slot per client
 * (its counters, histograms, error text and the interval it is in the
 * middle of), followed by every client's interval log. Nothing in it is a
 * pointer, so a client that dies leaves it readable, and the parent reads
 * a slot only after the client has exited or through its atomics.
 */
#ifndef LOCKLAB_REGION_H
#define LOCKLAB_REGION_H

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "fault_record.h"
#include "hist.h"
#include "lock.h"
#include "oracle.h"

/* One client's CPU time (its own, every thread, the children it reaped,
 * and its adapter child's) at the two ends of the measured window, taken
 * by the client itself into its shared slot. */
struct cpu_window {
    int64_t at_start_ns;    /* at the start barrier */
    int64_t child_at_start_ns; /* ... of which its adapter child's */
    int64_t at_end_ns;      /* when its loop ended */
    int taken;              /* CPU_AT_START | CPU_AT_END: which were taken */
};
#define CPU_AT_START 1
#define CPU_AT_END 2

enum slot_state { SLOT_INIT = 0, SLOT_READY, SLOT_FAILED, SLOT_RUNNING, SLOT_DONE };

/* Where a client's interval in progress stands, so that the parent can
 * close it exactly if the client dies. ENTERING and EXITING bracket the
 * atomic oracle marks: a client that dies there leaves it unknown whether
 * the live count saw the mark. */
enum iv_phase { IV_NONE = 0, IV_ENTERING, IV_INSIDE, IV_EXITING, IV_RELEASING };

/* The run's fault records: the engine in the parent and the clients that
 * hit a failpoint both append (a slot is reserved with one atomic add and
 * published by setting its state last). */
struct fault_log {
    atomic_int n;                        /* records reserved */
    atomic_int fired[FAULT_SPECS_MAX];   /* failpoint entries: times fired, all clients */
    atomic_int published[FAULT_RECORDS_MAX]; /* record i is filled in */
    struct fault_record rec[FAULT_RECORDS_MAX];
};

struct shared_head {
    volatile int stop;        /* set by the parent: clients stop at the next check */
    atomic_int ready;         /* clients that finished opening (ok or failed) */
    atomic_int go;            /* the start barrier's futex word */
    int64_t start_ns;         /* the start barrier opened (fault times count from it) */
    /* a server fault is under way, or ended less than a settle time ago,
     * until then (CLOCK_MONOTONIC; 0 none, INT64_MAX while one lasts): a
     * lock operation that fails meanwhile is the fault's doing, counted
     * apart from the errors that make a verdict `error` (faults.c) */
    atomic_llong excused_until_ns;
    /* the latest fault that took the design's only server away (whole_store):
     * from its action until the store served again (INT64_MAX while down;
     * 0, 0 none). An acquire that timed out after a wait overlapping it
     * could not have been granted by any design: the fault's timeout. */
    atomic_llong outage_from_ns, outage_until_ns;
    struct fault_log faults;
};

/* Per lock key (one, or one per client): the oracle's live state and the
 * counter workload's value. */
struct key_slot {
    struct oracle_key oracle;
    volatile int64_t counter;
};

/* What a fault asks of one logical client of a group (client_slot.ctl):
 * run on, be held as a stopped process is, or die as a killed one does. */
enum client_ctl { CLIENT_RUN = 0, CLIENT_PAUSE, CLIENT_KILL };

struct client_slot {
    atomic_int state;          /* enum slot_state */
    int group_first;           /* the clients sharing its process (a client group,
                                  run.clients_per_process): the first of them... */
    int group_n;               /* ... and how many (1: a process of its own) */
    atomic_int fault_killed;   /* a fault killed it (not a crash) */
    atomic_int ctl;            /* a fault aimed at this one client of a group: enum
                                  client_ctl, set by the parent, which then wakes the
                                  group (SIGUSR2)... */
    atomic_int ctl_ack;        /* ... and the one the group has applied */
    int64_t acquired;          /* acquires granted */
    int64_t timeouts;          /* acquires that ran out of wait budget */
    int64_t errors;            /* acquire and workload errors */
    int64_t released;          /* releases of a lock still ours */
    int64_t released_unchecked; /* ... of them, given back without knowing (RELEASE_UNCHECKED) */
    int64_t release_not_owner; /* releases that found the lock no longer ours */
    int64_t release_errors;    /* releases that failed */
    int64_t nested_acquired;   /* reentrant workload: nested acquires granted */
    int64_t nested_timeouts;   /* reentrant workload: nested acquires that ran out of time */
    int64_t units;             /* workload units done */
    int64_t stale_refused;     /* fencing: units the stock store refused as stale */
    int64_t arrivals;          /* open loop: acquires started on the schedule (run/arrival.h) */
    int64_t late_starts;       /* ... of them, started over arrival.late behind it */
    int64_t aborted;           /* units abandoned before their write: the design said its
                                  lock may be lost (lock_env.lost, lock.on_disconnect) */
    int64_t end_ns;            /* when the client finished its loop */
    atomic_llong n_iv;         /* intervals logged (complete entries only) */
    atomic_int iv_phase;       /* enum iv_phase of `cur` */
    struct oracle_interval cur; /* the interval in progress, closed by the parent on a death */
    int64_t iv_dropped;        /* intervals not logged: the log was full */
    struct lock_stats stats;   /* the implementation's counters */
    pid_t child_pid;           /* an adapter's child (in the client's process group), or 0 */
    unsigned adapter_caps;     /* the capabilities an adapter's `ready` gave (enum lock_caps) */
    struct cpu_window cpu;     /* its CPU time (and its child's) at the window's ends */
    char err[LAB_ERR_TEXT_MAX]; /* first error this client hit, whole (an adapter's line
                                  quoted in full; lab_text_copy cuts a longer one) */
    int64_t fault_errors;      /* lock operations that failed while a server fault was on */
    char fault_err[LAB_ERR_TEXT_MAX]; /* the first of those */
    int64_t fault_timeouts;    /* acquires that ran out of time while the store was down
                                  (shared_head.outage_from_ns) */
    struct hist acquire, hold, release;
};

struct region {
    void *base;
    size_t size;
    struct shared_head *head;
    struct key_slot *keys;      /* n_keys of them */
    int n_keys;
    struct client_slot *slots;
    struct oracle_interval *iv; /* n_clients * iv_cap */
    int64_t iv_cap;
};

/* The key client idx works on: the scenario's key, or its own per client. */
/* Sleep on the start barrier's futex word while it holds val (ns at most). */
static inline void region_futex_wait(atomic_int *word, int val, int64_t ns)
{
    struct timespec ts = {ns / 1000000000, ns % 1000000000};
    syscall(SYS_futex, word, FUTEX_WAIT, val, &ts, NULL, 0);
}

/* Wake every client sleeping on the word. */
static inline void region_futex_wake_all(atomic_int *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

#endif
