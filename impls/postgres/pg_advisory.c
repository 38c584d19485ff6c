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
 * The wait is bounded by lock_timeout = the scenario's wait (pg_common.c).
 *
 * Keys: the advisory functions take a bigint. The lock key's bytes are
 * hashed with 64-bit FNV-1a into it (pg_common.c's pg_key_id); two keys
 * that collide would share one lock (over-exclusion, never a lost one), and
 * so would another application's advisory lock that happens to use the same
 * number in the same database.
 *
 * Reentrant, by the server: a session that takes the same advisory lock
 * again gets it at once and must unlock it as many times (pg_locks shows
 * one lock; the lab's reentrant scenario runs it three levels deep).
 * pg_advisory_unlock says whether the session held the lock: false (with a
 * WARNING) is not-owner.
 *
 * In a client group the same two statements go through pg_async.c, one
 * non-blocking session per logical client.
 */
#include <stdbool.h>

#include "pg_async.h"

static const struct pg_stmt pga_stmts[] = {
    {"pga_lock", "SELECT pg_advisory_lock($1::bigint)", 1},
    {"pga_unlock", "SELECT pg_advisory_unlock($1::bigint)", 1},
    {NULL, NULL, 0},
};

/* What the lock statement's end means. */
static enum lock_status pga_locked(enum pg_wait w)
{
    return w == PG_WAIT_OK ? LOCK_GRANTED : w == PG_WAIT_TIMEOUT ? LOCK_TIMEOUT : LOCK_ERROR;
}

/* What the unlock's result (NULL: it failed) means; r is cleared. */
static enum release_status pga_unlocked(PGresult *r)
{
    if (!r)
        return RELEASE_ERROR;
    bool held = PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    return held ? RELEASE_OK : RELEASE_NOT_OWNER;
}

static int pga_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return pg_lock_open(out, env, pga_stmts, err);
}

static enum lock_status pga_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err)
{
    char id[24];
    pg_key_id(key, id, sizeof id);
    const char *params[] = {id};
    PGresult *r;
    enum pg_wait w = pg_wait_exec(c, "pga_lock", NULL, 1, params, wait_ns, &r, err);
    PQclear(r);
    return pga_locked(w);
}

static enum release_status pga_release(struct lock_client *c, const char *key,
                                       struct lab_err *err)
{
    char id[24];
    pg_key_id(key, id, sizeof id);
    const char *params[] = {id};
    return pga_unlocked(pg_exec(c, "pga_unlock", 1, params, err));
}

/* ------------------------------------------------------------ in a client group */

static int pga_async_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    return pg_async_open(out, env, loop, pga_stmts, NULL, NULL, opened, arg, err);
}

static void pga_async_locked(struct lock_client *c, enum pg_wait w, PGresult *r)
{
    PQclear(r);
    pg_async_acquired(c, pga_locked(w));
}

static void pga_async_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                              lock_acquired_fn done, void *arg)
{
    char id[24];
    pg_key_id(key, id, sizeof id);
    const char *params[] = {id};
    pg_async_will_acquire(c, done, arg);
    pg_async_wait(c, "pga_lock", NULL, 1, params, wait_ns, pga_async_locked);
}

static void pga_async_unlocked(struct lock_client *c, enum pg_wait w, PGresult *r)
{
    (void)w; /* r is NULL unless it ran */
    pg_async_released(c, pga_unlocked(r));
}

static void pga_async_release(struct lock_client *c, const char *key, lock_released_fn done,
                              void *arg)
{
    char id[24];
    pg_key_id(key, id, sizeof id);
    const char *params[] = {id};
    pg_async_will_release(c, done, arg);
    pg_async_exec(c, "pga_unlock", 1, params, pga_async_unlocked);
}

static const struct lock_async_ops pga_async = {
    .client_faults = true, /* a libpq session, socket and timer per client */
    .open = pga_async_open,
    .acquire = pga_async_acquire,
    .release = pga_async_release,
    .close = pg_async_close,
};

const struct lock_ops lock_pg_advisory = {
    .name = "pg-advisory",
    .backend = "postgres",
    .summary = "PostgreSQL session advisory lock (pg_advisory_lock/unlock): no TTL, freed when "
               "the session ends",
    .caps = LOCK_CAP_REENTRANT | LOCK_CAP_NOTIFIES,
    .no_fencing = "an advisory lock carries no number that grows with each grant",
    .open = pga_open,
    .acquire = pga_acquire,
    .release = pga_release,
    .close = pg_lock_close,
    .async = &pga_async,
};
