/*
 * workload.h - what a client does while it holds the lock.
 *
 * Two workloads, both a read-modify-write that goes wrong without mutual
 * exclusion, so the damage of a broken lock shows up in the data and not
 * only in the oracle:
 *   counter - read a counter in shared memory, wait the business time,
 *             write it back plus one; lost updates = increments - final.
 *   stock   - the seckill counter of the seeds, in a Redis of its own that
 *             faults never touch: GET stock, business time, SET stock-1,
 *             INCR sold. Oversold = sold - initial stock; lost updates =
 *             sold - (initial - final stock).
 * With fencing (workload.fencing on, and a design that gives tokens), the
 * stock store checks the grant's token as well: the read and the write
 * are each one Lua script that refuses a token below the highest the store
 * has seen (and raises that mark), counting what it refused.
 */
#ifndef LOCKLAB_WORKLOAD_H
#define LOCKLAB_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "lab.h"
#include "scenario.h"
#include "result.h"

struct workload_client; /* per-client state (a stock connection) */

enum workload_step {
    WORKLOAD_DONE = 0,  /* one unit of work done */
    WORKLOAD_SOLD_OUT,  /* nothing left to do: the client stops */
    WORKLOAD_FAILED,    /* the resource failed; err says how */
    WORKLOAD_STALE,     /* fencing: the store refused the unit, its token was stale */
    WORKLOAD_ABORTED    /* the design said the lock may be lost (lock_env.lost) before the
                         * write: the unit was abandoned, nothing written */
};

/* When the last unit last touched the resource and when it saw the lost
 * flag, by CLOCK_MONOTONIC (0: not at all): the answer to its last access
 * (the write when it wrote: a counter's store, the stock's INCR after its
 * SET, the fenced write; else its read), and notice_ns when it ended
 * WORKLOAD_ABORTED. The oracle's interval carries them
 * (oracle_interval.last_access_ns, notice_ns). */
struct workload_trace {
    int64_t last_access_ns, notice_ns;
    bool fenced; /* its accesses carried the grant's token to the fenced store */
};

/* Where the stock lives (ignored by the counter workload). */
struct workload_target {
    const char *host;
    int port;
};

/* Parent, before a run: put the resource in its initial state. */
int workload_reset(const struct scenario *s, const struct workload_target *t,
                   volatile int64_t *counter, struct lab_err *err);

/* Whether the stock writes of a run are fenced: the step asks for
 * fencing (s->fencing) and the design gives tokens (LOCK_CAP_FENCING in
 * caps). A design without tokens runs such a step unfenced. */
bool workload_fenced(const struct scenario *s, unsigned caps);

/* Client: open the resource (fenced as workload_fenced says). lost is
 * the design's flag (lock_env.lost): raised during the business time, the
 * unit ends there, before its write (WORKLOAD_ABORTED). */
int workload_open(struct workload_client **out, const struct scenario *s, bool fenced,
                  const struct workload_target *t, volatile int64_t *counter,
                  const volatile int *stop, volatile int *lost, struct lab_err *err);

/* Client, holding the lock: one unit of work. token is the grant's fencing
 * token (lock_stats.fence_token), used when the client is fenced. */
enum workload_step workload_step(struct workload_client *w, int64_t token, struct lab_err *err);

/* Client, an optimistic design (LOCK_CAP_OPTIMISTIC) having read stock
 * from its own store: WORKLOAD_SOLD_OUT when nothing is left, else the
 * business time and WORKLOAD_DONE (the design's release then writes). */
enum workload_step workload_business(struct workload_client *w, int64_t stock);

/* What the last workload_step (or workload_business) did, as above. */
const struct workload_trace *workload_traced(const struct workload_client *w);

void workload_close(struct workload_client *w);

/* The stock store's keys, and the fenced read and write (Lua), which the
 * blocking client (workload.c) and a client group's (workload_async.c)
 * both send. */
#define STOCK_KEY "stock"
#define SOLD_KEY "sold"
#define FENCE_KEY "fence"               /* highest token seen */
#define STALE_WRITES_KEY "stale_writes" /* writes refused */
#define STALE_READS_KEY "stale_reads"   /* reads refused */
/* KEYS stock, fence, stale_reads; ARGV token. {1, stock} and the mark
 * raised to the token, or {0, mark} refused (token below the mark). */
extern const char workload_fenced_read_lua[];
/* KEYS stock, sold, fence, stale_writes; ARGV token, new stock. 1 written
 * (stock set, sold counted), 0 refused. */
extern const char workload_fenced_write_lua[];

int workload_outcome(const struct scenario *s, const struct workload_target *t,
                     volatile int64_t *counter, int64_t units_reported,
                     struct workload_outcome *out, struct lab_err *err);

/* The same for a stock kept by an optimistic design: left is what its
 * store holds after the run, units_reported the sales its clients saw
 * commit. Oversold: units beyond the initial stock, or a stock below 0;
 * lost updates: sales the stock does not show. */
void workload_outcome_kept(const struct scenario *s, int64_t left, int64_t units_reported,
                           struct workload_outcome *out);

#endif
