/*
 * fault_watch.h - what a server fault does to a store, as the fault engine
 * times it: when the store serves again, and, for a store that elects a
 * leader (a ZooKeeper ensemble of three), who leads then. It is part of
 * the engine's state (fault_engine.h), given the run's records and the
 * design at its start; it reads what a fault does to its server from the
 * fault's row (fault_action.h), never the engine's other state.
 *
 * Killing a server is instant; a restarted server starting, an ensemble
 * electing another leader, a JVM syncing, take up to seconds. The engine
 * opens a watch on the record of every fault that takes a server's service
 * away (its row says FA_SERVICE: fault_fire.c) or starts one again (start,
 * fault_kill.c), on a store whose backend has a health hook (backend.h; every store has
 * one), and polls that health from its tick every FAULT_WATCH_POLL_NS,
 * never blocking on a server that is down or stopped. The first poll that
 * finds the store available once the fault has done its own part (a pause
 * continued, a server started again; at once for a kill or a stop) sets
 * the record's back_ns: the outage is over, and lock errors are the
 * fault's only for a grace after it (region.h). The record stays active
 * until every running server serves again: its band on the plots spans
 * the outage, and it says who leads and when the leader came
 * (fault_record.leader, leader_ns).
 */
#ifndef LOCKLAB_FAULT_WATCH_H
#define LOCKLAB_FAULT_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "fault.h"
#include "servers.h"

#define FAULT_WATCH_MAX 16
#define FAULT_WATCH_POLL_NS (20 * 1000000LL)        /* between two looks at the store */
#define FAULT_WATCH_SETTLE_NS (60 * 1000000000LL)   /* at the end of a run, at most */

struct lock_ops;
struct scenario;
struct fault_log;

/* The engine keeps one in its state (fault_engine.h); the watch reads and
 * ends the records of the run's log it was given. */
struct fault_watches {
    const struct lock_ops *ops;  /* the design run: its store's health hook */
    const struct scenario *s;
    struct fault_log *log;       /* the run's fault records (region.h) */
    struct {
        int rec;                 /* the record kept open */
        const struct server *srv; /* the server it hit */
        char leader_before[32];  /* who led when the fault fired, "" when none did */
        bool lost;               /* the store was seen without a leader since */
        int64_t leader_ns;       /* a leader served again after it was lost or changed */
    } w[FAULT_WATCH_MAX];
    int n;
    bool used;                   /* a server of the store was hit in this run */
    int64_t next_poll;
};

/* At the start of a run of ops: nothing watched yet. */
void fault_watch_init(struct fault_watches *W, const struct lock_ops *ops,
                      const struct scenario *s, struct fault_log *log);

/* Before record rec's action hits server srv, `name` by the name it keeps
 * ("zookeeper:0"): note who leads now and watch the store from the next
 * tick. False (nothing watched) when the design's store has no health
 * hook. */
bool fault_watch_open(struct fault_watches *W, int rec, const struct server *srv,
                      const char *name);

/* Is record rec watched (its end is the watch's to set)? */
bool fault_watch_has(const struct fault_watches *W, int rec);

/* A later fault takes srv down (kill, stop, restart) while the record of
 * the fault that started it again still waits for it to rejoin: that
 * record is closed done (the start landed), its note saying by what.
 * except_rec is the record of the fault doing it (-1: none). */
void fault_watch_taken(struct fault_watches *W, const struct server *srv, int except_rec,
                       const char *by);

/* Look at the store when a poll is due and end the records whose fault is
 * over; returns when to look next (INT64_MAX: nothing watched). */
int64_t fault_watch_poll(struct fault_watches *W, int64_t now);

/* The end of a run (after the engine brought its servers back): wait
 * until the store is whole again for the next design, every server up, at
 * most FAULT_WATCH_SETTLE_NS, and end every record still watched; when
 * interrupted, end them at once. */
void fault_watch_settle(struct fault_watches *W, bool interrupted);

#endif
