/*
 * client_cs.h - a client's bookkeeping around its critical section, the
 * one copy both ways of running a client use: the blocking loop of a
 * client in its own process (client.c) and the state machines of a client
 * group (group.c). Entry and exit marks, the oracle's phases, the
 * histograms, the interval log and the counters are written here in the
 * order the oracle and the parent's close_interval (runner.c) rely on.
 */
#ifndef LOCKLAB_CLIENT_CS_H
#define LOCKLAB_CLIENT_CS_H

#include <stdbool.h>

#include "region.h"
#include "workload.h"

/* One client's place in the region and what its design is. */
struct client_cs {
    struct shared_head *h;
    struct client_slot *sl;
    struct oracle_interval *log; /* its interval log (rg->iv_cap entries) */
    int64_t iv_cap;
    struct oracle_key *ok;       /* the oracle of its key */
    int k;                       /* its key's index */
    int idx;                     /* the client's index */
    bool shared_store;           /* a release can remove a lock from a shared store */
    bool has_ttl;                /* LOCK_CAP_TTL */
    bool optimistic;             /* LOCK_CAP_OPTIMISTIC (lock.h) */
    int64_t lease_floor;         /* the grant's lease floor (lock_stats), kept at entry */
};

/* Fill cs for client idx of a run of ops on rg, working on key k. */
void client_cs_init(struct client_cs *cs, struct region *rg, const struct lock_ops *ops,
                    int idx, int k);

/* The first error the client hit, into its slot. */
void client_slot_error(struct client_slot *sl, const struct lab_err *err);

/* A lock operation failed: while a server fault is on (or settling) that
 * is the fault's doing and counted apart; otherwise an error, in *count. */
void client_lock_error(struct shared_head *h, struct client_slot *sl, int64_t *count,
                       const struct lab_err *err);

/* An acquire that began at t_wait ran out of its wait budget. When the
 * wait overlapped an outage of the design's only server (a kill, a
 * restart: shared_head.outage_from_ns), no design could have granted it:
 * the fault's, counted apart; otherwise a timeout (verdict `blocked`).
 * Nothing is counted once the run stops. */
void client_lock_timeout(struct shared_head *h, struct client_slot *sl, int64_t t_wait);

/* An operation the run's stop cut short: the design ended it because the
 * run is stopping (err ECANCELED, as a ZooKeeper delete still waiting for
 * its session says), not because it failed. Not counted, as a timeout
 * after the stop is not. */
bool client_stop_cut(const struct shared_head *h, const struct lab_err *err);

/* Granted at t_enter after asking at t_wait: mark entry (oracle,
 * interval, acquire histogram). */
void client_cs_enter(struct client_cs *cs, int64_t t_wait, int64_t t_enter);

/* The workload is done with ws: mark exit (before the release is sent),
 * keep what the unit did to the resource (tr: its accesses and notice,
 * NULL: none known) and count the unit. An abandoned unit
 * (WORKLOAD_ABORTED) marks the interval ORACLE_NOTICED. */
void client_cs_exit(struct client_cs *cs, enum workload_step ws,
                    const struct workload_trace *tr, const struct lab_err *err);

/* The release returned rs: close and log the interval, count it. Returns
 * -1 when the unit must be done again (an optimistic design's conflict),
 * else 0. */
int client_cs_released(struct client_cs *cs, enum workload_step ws, enum release_status rs,
                       const struct lab_err *err);

#endif
