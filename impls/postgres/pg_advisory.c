/*
 * pg_advisory.c - PostgreSQL session advisory locks: pg_advisory_lock to
 * acquire, pg_advisory_unlock to release.
 *
 * The lock is held by the client's session, not by a row or a transaction:
 * the server queues the waiters and grants the next one the moment the
 * holder unlocks, or the moment its session ends (a client that dies loses
 * its socket, the server ends the session and frees its locks: 2 to 20 ms
 * from the kill to the next grant in the lab). No TTL: a holder that
 * is alive but stuck (paused, in a long business step) keeps the lock for
 * as long as it is stuck, and one server is the single point of failure.
 * The wait is bounded by lock_timeout = the scenario's wait.
 *
 * Keys: the advisory functions take a bigint. The lock key's bytes are
 * hashed with 64-bit FNV-1a into it (pg_key_id); two keys that collide
 * would share one lock (over-exclusion, never a lost one), and so would
 * another application's advisory lock that happens to use the same number
 * in the same database.
 *
 * Reentrant, by the server: a session that takes the same advisory lock
 * again gets it at once and must unlock it as many times (pg_locks shows
 * one lock; the lab's reentrant scenario runs it three levels deep).
 * pg_advisory_unlock says whether the session held the lock: false (with a
 * WARNING) is not-owner.
 *
 * The protocol is pg_machine.c's (PG_SM_ADVISORY), in either mode.
 */
#include "pg_drive.h"

static const struct pg_sm_design pga = {.kind = PG_SM_ADVISORY, .name = "pg-advisory"};

static int pga_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return pg_block_open(out, env, &pga, err);
}

static int pga_group_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    return pg_group_open(out, env, loop, &pga, opened, arg, err);
}

static const struct lock_async_ops pga_async = {
    .client_faults = true, /* a libpq session, socket and timer per client */
    .open = pga_group_open,
    .acquire = pg_group_acquire,
    .release = pg_group_release,
    .close = pg_group_close,
};

const struct lock_ops lock_pg_advisory = {
    .name = "pg-advisory",
    .backend = "postgres",
    .summary = "PostgreSQL session advisory lock (pg_advisory_lock/unlock): no TTL, freed when "
               "the session ends",
    .caps = LOCK_CAP_REENTRANT | LOCK_CAP_NOTIFIES,
    .no_fencing = "an advisory lock carries no number that grows with each grant",
    .open = pga_open,
    .acquire = pg_block_acquire,
    .release = pg_block_release,
    .close = pg_block_close,
    .async = &pga_async,
};
