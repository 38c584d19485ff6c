/*
 * result.h - what one run of one design showed: counters, merged
 * histograms, the oracle's analysis, the cross-check, the workload's
 * damage, the faults' records, where the CPU went, and the verdict.
 *
 * The runner (harness/run/) fills it, the verdict rules and the
 * cross-check beside the oracle judge it, the reports write it. It is
 * plain data, so that the judging and the reports need nothing of how a
 * run is driven.
 */
#ifndef LOCKLAB_RESULT_H
#define LOCKLAB_RESULT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "fault_record.h"
#include "hist.h"
#include "lab.h"
#include "lock.h"
#include "oracle.h"
#include "scenario.h"

/* A run's first error: "client N: " and a client's error text (LAB_ERR_TEXT_MAX). */
#define RUN_ERROR_MAX (LAB_ERR_TEXT_MAX + 32)

#define CPU_MAX_SERVERS 16
#define RUN_TIMELINE_MAX 4096 /* latency-over-time points kept per result (evenly sampled) */
#define RUN_HOLDS_MAX 200000  /* critical sections kept per result for the hold timeline */

/* Parent, after a run: the resource's damage report. done is the number of
 * units of work the clients reported (increments or sales). */
struct workload_outcome {
    int64_t units_done;    /* increments or sales counted by the resource */
    int64_t final_value;   /* counter value or stock left */
    int64_t oversold;      /* sales beyond the initial stock (stock only) */
    int64_t lost_updates;  /* writes that overwrote another client's write */
    int64_t stale_writes_rejected; /* fencing: writes the stock store refused */
    int64_t stale_reads_rejected;  /* fencing: reads it refused (the unit ended there) */
};

/* Where a run's CPU time went (run_result.cpu). */
struct cpu_use {
    int cores;              /* CPUs this process may run on */
    int64_t clients_ns;     /* user + system of the clients and their adapter children
                               inside the window (cpu_window_ns) */
    int64_t harness_ns;     /* the parent's own, during the run */
    int64_t servers_ns;     /* the design's embedded lock servers, during the run */
    int n_servers;          /* ... how many were counted */
    struct {
        char name[32];
        int64_t ns;
    } server[CPU_MAX_SERVERS];
    double machine_busy;    /* share of every core busy during the run (0..1),
                               whoever used it */
    bool client_bound;      /* the clients held at least half of the cores of a
                               saturated machine, or client_core (run/cpu.c): the
                               figures measure the lab, not the lock service */
    bool client_core;       /* one client process (with its adapter child) used
                               most of a core: its one thread was the limit */
    int64_t max_client_ns;  /* the busiest client process's CPU in the window */
    int client_procs;       /* client processes reaped (a group is one) */
    int64_t clients_rss_kib; /* their peak resident sets summed (wait4's ru_maxrss) */
    int64_t harness_rss_kib; /* the parent's resident set after the clients were reaped */
};

struct run_result {
    const struct lock_ops *ops;  /* implementation */
    char scenario[SCN_NAME_MAX]; /* scenario name */
    int clients;                 /* client processes forked */
    int per_client_keys;         /* 1: each client its own key; 0: one hot key */
    bool sweep;                  /* one step of a sweep: rows name clients and keys */
    int round;                   /* run --rounds: which repetition (1-based) */
    int repeat;                  /* the reference's nth run at this step in this round
                                  * (run --baseline interleaves it); 0: not repeated */
    enum verdict verdict;        /* what the run showed */
    verdict_set expect;          /* the verdicts the scenario allows (0: no expectation) */
    bool pass;                   /* verdict met the expectation */
    bool complete;               /* false when interrupted: only partial numbers */
    double elapsed_s;            /* from the start barrier to the last client done */
    int64_t start_ns;            /* the start barrier (CLOCK_MONOTONIC), fault times count from it */
    int64_t stop_ns;             /* when the clients were told to stop (duration over, a
                                    signal); 0 when they all finished their operations first */
    double throughput_per_s;     /* acquired / elapsed */

    int64_t acquired, timeouts, errors, released, release_not_owner, release_errors;
    int64_t released_unchecked;  /* of released: given back without knowing it was still
                                    ours (an adapter's `released ?`), never misdel evidence */
    int64_t fault_errors;        /* lock operations that failed during a server fault (region.h) */
    char fault_error[RUN_ERROR_MAX]; /* the first of those, "client N: " and its text */
    int64_t fault_timeouts;      /* acquires timed out after a wait overlapping an outage of
                                    the whole store (region.h): not `timeouts` */
    int64_t release_deleted_other; /* locks taken from their holder by someone else (victims) */
    int64_t nested_acquired;       /* reentrant workload: nested acquires granted */
    int64_t nested_timeouts;       /* reentrant workload: nested acquires timed out (blocked) */
    struct lock_stats stats;     /* summed over clients */
    double arrival_rate;         /* open loop: arrival.rate (per s), 0 for a closed loop */
    int arrival_dist;            /* arrival.distribution (enum arrival_dist) */
    int64_t arrival_late_ns;     /* arrival.late */
    int64_t arrivals, late_starts; /* starts on the schedule, and those that came late */

    struct hist acquire, hold, release, handoff; /* microseconds */

    struct oracle_report oracle; /* exact overlap analysis of the interval logs */
    int64_t live_overlaps;       /* entries that saw another holder (live counter) */
    int max_holders_live;        /* highest holder count seen live */
    int64_t intervals_dropped;   /* interval log overflow (live counters still count) */
    int64_t intervals_closed;    /* intervals of dead clients, closed by the parent */
    int oracle_marks_unknown;    /* clients that died in the middle of an oracle mark */
    enum cross_check {
        CROSS_SKIPPED = 0,       /* not compared (cross_note says why) */
        CROSS_OK,                /* live counter and logs agree */
        CROSS_MISMATCH           /* they do not: a lab error (cross_note) */
    } cross_check;
    char cross_note[160];

    char servers[512];            /* what it ran on: a JSON object, from its store's table */
    struct workload_outcome work; /* oversold, lost updates, final value */
    enum fencing_mode {
        FENCING_OFF = 0,         /* the step did not ask for fencing */
        FENCING_ON,              /* the stock store checked the grants' tokens */
        FENCING_UNSUPPORTED      /* asked for, but the design gives no sound token:
                                    the step ran unfenced */
    } fencing;
    int64_t aborted;          /* units the clients abandoned before their write, told by
                               * the design that the lock may be lost (lock.on_disconnect) */
    int64_t stale_refused_by_clients; /* fencing: refusals the clients saw (the store's
                                         own counts are in work) */

    double wakeups_per_release;    /* (polls + notifications) / releases; for an adapter,
                                      server_wakeups_per_release (NaN: not measured) */
    double server_wakeups_per_release; /* watch notifications the servers sent / releases
                                          (backend_ops.server_wakeups); NaN: not measured */
    double server_ops_per_acquire; /* lock store commands per acquire (INFO commandstats) */

    int n_timeline;           /* points of the latency-over-time sample */
    struct timeline_point {
        float t_s;            /* entry, seconds after the start barrier */
        float acquire_us;     /* how long that acquire took */
        float hold_us;        /* how long the lock was held */
        int client;           /* who */
    } timeline[RUN_TIMELINE_MAX];

    /* Every critical section, for the hold timeline (<stem>.holds.tsv): the
     * first RUN_HOLDS_MAX by entry, of holds_total. A heap array: whoever
     * called runner_run frees it (run_result_free_holds). */
    int64_t n_holds, holds_total;
    struct hold {
        double enter_s, exit_s; /* seconds after the start barrier */
        int64_t token;          /* fencing token of the grant (0: none) */
        int client, key;
        uint32_t flags;         /* ORACLE_* (oracle.h): refused, died, lost early... */
    } *holds;

    int clients_failed_start; /* could not open their connections */
    int clients_crashed;      /* died by a signal or a non-zero exit */
    int clients_killed;       /* killed by the harness at the end (stuck) */
    int clients_killed_by_fault; /* killed by a fault of the scenario (not a crash) */

    int n_faults;             /* what the fault timeline did (fault.h) */
    struct fault_record faults[FAULT_RECORDS_MAX];
    int faults_landed;        /* records with outcome done */
    int faults_missed;        /* entries that applied to this design and never landed */
    int64_t recovery_ns;      /* the longest kill-to-next-grant of a killed holder, -1 none */
    int unrecovered_kills;    /* killed holders after which no client got the lock again */
    bool unavailable;         /* no grant followed the last server fault while clients kept
                                 asking GRACE and lock_life past the store's return (or
                                 after the fault, when it never returned while they asked) */
    int64_t lock_life_ns;     /* the longest a lock can outlive its holder's last word to
                                 the store: the TTL of a design with one, the session
                                 timeout of a store with sessions (the larger); 0 none */
    int unavailable_fault;    /* ... that fault (index in faults) */
    bool unavailable_back;    /* ... though the store said it served again, in time */
    int64_t rightful_refused; /* fencing: holders the resource refused that no later grant
                                 overlapped (the token went backwards) */
    char first_error[RUN_ERROR_MAX]; /* the first error of the lowest-numbered client that
                                        hit one, "client N: " and its whole text (at most
                                        LAB_ERR_TEXT_MAX - 1 bytes: an adapter's line fits) */
    struct cpu_use cpu;       /* where the run's CPU time went (cpu.h) */
    int stake_judged;         /* faults that landed and could put the lock at stake
                                 (at_stake.h: judged yes or no) */
    int stake_yes;           /* ... those that did (at_stake yes) */
    struct oracle_stale stale; /* what the stale holder of each overlapping pair did, and
                                  the stale-holder window (oracle_stale_holders) */
};

/* Free res->holds (and forget it). */
static inline void run_result_free_holds(struct run_result *res)
{
    free(res->holds);
    res->holds = NULL;
    res->n_holds = 0;
}

#endif
