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
 *
 * Every entry and exit is one atomic step on the key's word, which numbers
 * it (the key's event sequence) in the same step that changes the holder
 * count. The logs carry these numbers, so oracle_sequence() can replay the
 * live counter from the logs alone and the two can be compared exactly: a
 * difference means an interval went missing, a lab error. A client that
 * dies inside its critical section has its interval closed by the parent
 * when it reaps it (oracle_exit() from the parent), so a crash neither
 * hides the overlap it caused nor leaves a holder that never leaves.
 */
#ifndef LOCKLAB_ORACLE_H
#define LOCKLAB_ORACLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"

#define ORACLE_HOLDER_BITS 20 /* low bits of oracle_key.word: holders (up to 1M) */

/* One key's live state, in shared memory. */
struct oracle_key {
    atomic_ullong word;          /* event sequence << ORACLE_HOLDER_BITS | holders inside now */
    atomic_int max_holders;      /* highest holder count ever reached */
    atomic_llong live_overlaps;  /* entries that found another holder inside */
};

/* One critical section as a client saw it. */
struct oracle_interval {
    int64_t wait_ns;  /* CLOCK_MONOTONIC when the client started to acquire */
    int64_t enter_ns; /* when the lock was granted (entry marked) */
    int64_t exit_ns;  /* when the client left (before it sent release) */
    int64_t release_ns; /* when the release returned (a dead client: when it was reaped) */
    uint64_t enter_seq; /* the entry's place in the key's event sequence */
    uint64_t exit_seq;  /* the exit's */
    uint32_t key;     /* key index */
    uint32_t client;  /* client index */
    uint32_t flags;   /* ORACLE_* below */
    int64_t token;    /* the grant's fencing token (0: none, or the step is not fenced) */
    /* What the unit did to the resource, by the client's clock: when the
     * answer to its last access came (0: it made none), the write of a
     * unit that wrote. A refused access ends the unit, so ORACLE_REFUSED
     * says this one was refused. */
    int64_t last_access_ns;
    int64_t notice_ns; /* ORACLE_NOTICED: when the workload saw the lost flag */
};

/* The release said it removed a lock (a DEL that deleted, a script that
 * returned 1, an adapter's `released` but never its `released ?`) from a
 * store shared by the clients. */
#define ORACLE_RELEASED_KEY 1u
/* The release found the lock gone or someone else's although its TTL could
 * not have run out yet: someone else deleted or replaced it. */
#define ORACLE_LOST_EARLY 2u
/* The client died before its release returned; the parent closed the
 * interval when it reaped the client (at exit_ns when it died inside). */
#define ORACLE_DIED 4u
/* The client died in the middle of an oracle mark: enter_seq or exit_seq
 * is unknown, and so is whether the live count saw the mark. */
#define ORACLE_SEQ_UNKNOWN 8u
/* The fenced resource refused this holder's read or write: its token was
 * older than one the resource had seen. */
#define ORACLE_REFUSED 16u
/* The holder learned that its lock may be lost (the design raised
 * lock_env.lost) and abandoned its unit before the write: after notice_ns
 * it touched the resource no more. */
#define ORACLE_NOTICED 32u
/* The unit's accesses carried the grant's token to the fenced store (a
 * fenced step): one that got through was checked against the newest
 * token the store had seen. */
#define ORACLE_FENCED 64u

/* Mark entry: one atomic step adds a holder and takes the next event number
 * (into *seq); updates max_holders and live_overlaps. Returns the number of
 * other holders found inside (0 when exclusive). */
int oracle_enter(struct oracle_key *k, uint64_t *seq);

/* Mark exit: one atomic step removes a holder; returns its event number. */
uint64_t oracle_exit(struct oracle_key *k);

/* Count the locks taken from their holders by someone else (each victim
 * interval once), from the evidence the race leaves:
 *   - B's release found its lock gone or replaced before its TTL could have
 *     run out (ORACLE_LOST_EARLY): someone deleted or overwrote it; this is
 *     how a GET-then-DEL release that deletes a lock taken between its GET
 *     and its DEL shows, whenever the victim entered;
 *   - A's release removed a lock (ORACLE_RELEASED_KEY) while B, granted after
 *     A (entered after A, before A's exit mark), stayed inside until after
 *     A's release returned: the lock in the store was B's (the latest such
 *     B is counted), even when B's own release came after its TTL.
 * Needs iv sorted by key and entry time, as oracle_analyze() leaves it.
 * Returns the count, or -ENOMEM. */
int64_t oracle_misdeletes(const struct oracle_interval *iv, size_t n);

/* Count the holders the fenced resource refused (ORACLE_REFUSED) although
 * no later grant overlapped them: nobody newer held the lock, so the token
 * they carried was lower than one handed out before them. The token
 * sequence went backwards (a store restarted empty, a replica promoted
 * without the counter): a rightful holder refused, not a stale one. Needs
 * iv sorted by key and entry time, as oracle_analyze() leaves it. */
int64_t oracle_rightful_refusals(const struct oracle_interval *iv, size_t n);

/* What the stale holder of each overlapping pair did. Of two intervals on
 * a key that overlap, the one entered first is the stale holder: its lock
 * had ended on the server (run out, or deleted) by the time the later one
 * was granted. From that later grant to its own exit it did one of:
 *   through - its last access (the write, in a unit that wrote) was
 *             answered at or after the later grant and nothing checked
 *             it (an unfenced step): the resource took a stale
 *             holder's work. A fenced read let through before a refused
 *             write is not: the store saw no newer token yet (no fence
 *             can refuse it), and the write it led to was refused;
 *   ordered - the same access, but fenced (ORACLE_FENCED) and accepted: the
 *             store had seen no newer token, so the later holder had not
 *             reached it yet, and the access came first in token order,
 *             which is all a fence promises (with tokens that never go
 *             backwards: oracle_rightful_refusals);
 *   refused - the fence refused its unit (its last access, after the later
 *             grant or before it: either way it touched nothing more);
 *   noticed - not refused, and it abandoned its unit before the write
 *             because the design told it the lock may be lost
 *             (ORACLE_NOTICED): a read after the later grant (a holder
 *             paused between its grant and its read) led to nothing;
 *   chance  - none of these: it touched nothing after the later grant, but
 *             nothing stopped it (its accesses happened to come before).
 * The five counts add up to oracle_report.violations. For each stale
 * holder, the window is a lower bound of how long it went on believing
 * after its lock ended: from the first later grant (the latest instant its
 * lock can have ended) to its notice (when it noticed) or its exit, 0 when
 * it noticed before that grant. window_p50_ns is the nearest-rank median
 * (the ceil(n/2)-th smallest); both are -1 when there is no stale holder. */
struct oracle_stale {
    int64_t through, refused, noticed, chance; /* overlapping pairs, by what the stale one did */
    int64_t ordered;       /* ... (see above) */
    int64_t holders;       /* stale holders: intervals a later grant overlapped */
    int64_t holders_noticed; /* ... of them, the ones that noticed their loss */
    int64_t window_p50_ns; /* the stale-holder window, median over the holders */
    int64_t window_max_ns; /* ... and the longest */
};

/* Fill out over n intervals sorted by key and entry time, as
 * oracle_analyze() leaves them. Returns 0, or -ENOMEM (out untouched). */
int oracle_stale_holders(const struct oracle_interval *iv, size_t n, struct oracle_stale *out);

/* The live counter replayed from the logs: in each key's event order, how
 * many entries found another holder inside and the most holders at once.
 * Equal to the live counters when the logs are complete. Sorts iv by key
 * and enter_seq. Returns 0, -EINVAL when an interval's sequence is unknown
 * (ORACLE_SEQ_UNKNOWN) or exits before it enters, -ENOMEM. */
struct oracle_sequence {
    int64_t overlaps;  /* entries that found another holder inside */
    int max_holders;   /* most holders of one key at once */
};
int oracle_sequence(struct oracle_interval *iv, size_t n, struct oracle_sequence *out);

struct oracle_report {
    int64_t intervals;      /* intervals analysed */
    int64_t violations;     /* pairs of intervals on the same key that overlap */
    int64_t overlap_ns;     /* total time during which >= 2 clients held a key */
    int max_concurrent;     /* most simultaneous holders of one key */
    int64_t handoffs;       /* handoff gaps recorded into the histogram */
};

/* Sort iv by key, then entry time (ties by exit, wait, client): the order
 * oracle_analyze() leaves, which oracle_misdeletes, oracle_stale_holders
 * and at_stake_judge read. */
void oracle_sort(struct oracle_interval *iv, size_t n);

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
