/*
 * pg_for_update.c - the pessimistic database lock of the seeds, on
 * PostgreSQL: BEGIN; SELECT ... FOR UPDATE on the lock's row; the critical
 * section is the transaction; COMMIT releases the row lock.
 *
 * Rows live in locklab_locks (name text primary key), one per key, made
 * the first time a key is locked (INSERT ... ON CONFLICT DO NOTHING): a
 * SELECT ... FOR UPDATE that finds no row locks nothing, the classic way
 * this lock silently does not exist. BEGIN and the SELECT go in one round
 * trip; the wait for the row is bounded by lock_timeout = the scenario's
 * wait. Like the advisory lock it has no TTL: a holder that dies aborts
 * its transaction when its session ends and the row is free; a holder that
 * is alive but stuck keeps it.
 *
 * Nested use joins the transaction, as a framework's "required"
 * propagation does: a nested acquire sends only the SELECT ... FOR UPDATE,
 * which the server answers at once for a row its transaction has locked
 * (reentrant by the server, one round trip), and only the outermost release
 * COMMITs. Sent raw, nested BEGIN/COMMIT pairs break it: the second BEGIN
 * is a no-op (a WARNING), and the innermost COMMIT ends the one transaction
 * and frees the row while the outer critical section still runs; the lab
 * measured that as a violation in 1 of 4 runs of the reentrant scenario.
 * A nested acquire whose session was lost (a server restart: the session,
 * its transaction and the row lock are gone) fails: sent on a new session,
 * the bare SELECT ... FOR UPDATE would run in autocommit and "grant" a row
 * lock that ends with the statement; the release of a hold so lost reports
 * not-owner.
 *
 * The protocol is pg_machine.c's (PG_SM_FOR_UPDATE), in either mode.
 */
#include "pg_drive.h"

static const struct pg_sm_design pgfu = {.kind = PG_SM_FOR_UPDATE, .name = "pg-for-update"};

static int pgfu_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return pg_block_open(out, env, &pgfu, err);
}

static int pgfu_group_open(struct lock_client **out, const struct lock_env *env,
                           struct evloop *loop, lock_opened_fn opened, void *arg,
                           struct lab_err *err)
{
    return pg_group_open(out, env, loop, &pgfu, opened, arg, err);
}

static const struct lock_async_ops pgfu_async = {
    .client_faults = true, /* a libpq session, socket and timer per client */
    .open = pgfu_group_open,
    .acquire = pg_group_acquire,
    .release = pg_group_release,
    .close = pg_group_close,
};

const struct lock_ops lock_pg_for_update = {
    .name = "pg-for-update",
    .backend = "postgres",
    .summary = "BEGIN; SELECT ... FOR UPDATE on the lock's row; COMMIT: no TTL, the transaction "
               "is the critical section",
    .caps = LOCK_CAP_REENTRANT | LOCK_CAP_NOTIFIES,
    .no_fencing = "the row keeps no counter (an UPDATE ... RETURNING of one, under the "
                  "row lock, could be a sound token; this design, as the seeds, has none)",
    .open = pgfu_open,
    .acquire = pg_block_acquire,
    .release = pg_block_release,
    .close = pg_block_close,
    .async = &pgfu_async,
};
