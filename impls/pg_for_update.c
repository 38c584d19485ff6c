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
 * wait (pg_common.c). Like the advisory lock it has no TTL: a holder that
 * dies aborts its transaction when its session ends and the row is free; a
 * holder that is alive but stuck keeps it.
 *
 * Nested use joins the transaction, as a framework's "required"
 * propagation does: a nested acquire sends only the SELECT ... FOR UPDATE,
 * which the server answers at once for a row its transaction has locked
 * (reentrant by the server, one round trip), and only the outermost release
 * COMMITs. Sent raw, nested BEGIN/COMMIT pairs break it: the second BEGIN
 * is a no-op (a WARNING), and the innermost COMMIT ends the one transaction
 * and frees the row while the outer critical section still runs; the lab
 * measured that as a violation in 1 of 4 runs of the reentrant scenario.
 * A nested acquire whose session was lost (a server restart: the
 * session, its transaction and the row lock are gone) fails: sent on the
 * new session, the bare SELECT ... FOR UPDATE would run in autocommit and
 * "grant" a row lock that ends with the statement. A grant needs the
 * session to be inside its transaction after the SELECT. A release that
 * finds no transaction open (the session says so, PQtransactionStatus: it
 * was lost with its session) reports not-owner.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pg_common.h"

static const struct pg_stmt pgfu_stmts[] = {
    {"pgfu_row", "INSERT INTO locklab_locks (name) VALUES ($1) ON CONFLICT DO NOTHING", 1},
    {NULL, NULL, 0},
};

static int pgfu_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    /* the table first (every client tries; one creates it), then the
     * statements that name it */
    static const struct pg_stmt none[] = {{NULL, NULL, 0}};
    if (pg_lock_open(out, env, none, err) != 0)
        return -1;
    struct lock_client *c = *out;
    PGresult *r = PQexec(c->pc, "CREATE TABLE IF NOT EXISTS locklab_locks (name text PRIMARY KEY)");
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    /* two sessions creating it at once: the later one waits for the
     * other's catalog rows, then fails on them (23505, or 42710/42P07 for
     * the table's type or the table) - and the table is there */
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK ||
             (state && (strcmp(state, "23505") == 0 || strcmp(state, "42710") == 0 ||
                        strcmp(state, "42P07") == 0));
    if (!ok)
        lab_err_set(err, EIO, "PostgreSQL: %.110s", PQresultErrorMessage(r));
    PQclear(r);
    c->stmts = pgfu_stmts;
    c->prepared = false;
    if (!ok) {
        pg_lock_close(c);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* COMMIT or ROLLBACK on this session only (a new one has no transaction
 * to end), as a simple query: pg_stat_statements counts utility statements
 * sent so, not prepared ones. */
static PGresult *end_transaction(struct lock_client *c, const char *sql)
{
    c->env->stats->round_trips++;
    return PQexec(c->pc, sql);
}

/* ROLLBACK the transaction a failed or empty SELECT left open. */
static void rollback(struct lock_client *c)
{
    PQclear(end_transaction(c, "ROLLBACK"));
}

static enum lock_status pgfu_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err)
{
    char *lit = PQescapeLiteral(c->pc, key, strlen(key));
    if (!lit) {
        lab_err_set(err, EINVAL, "cannot quote the key: %.90s", PQerrorMessage(c->pc));
        return LOCK_ERROR;
    }
    /* nested: the transaction is open and the row ours; ask again */
    char sql[512];
    snprintf(sql, sizeof sql, "%sSELECT 1 FROM locklab_locks WHERE name = %s FOR UPDATE",
             c->depth > 0 ? "" : "BEGIN; ", lit);
    PQfreemem(lit);
    int outer = c->depth;
    unsigned reconnects = c->reconnects;
    for (int made_row = 0;; made_row++) {
        PGresult *r;
        enum pg_wait w = pg_wait_exec(c, NULL, sql, 0, NULL, wait_ns, &r, err);
        if (outer > 0 && c->reconnects != reconnects) {
            /* the session of the open transaction is gone, and the outer
             * hold with it: the nested SELECT, if it ran, ran on a new
             * session in autocommit, and its row lock ended with it */
            PQclear(r);
            c->depth = 0;
            lab_err_set(err, ECONNRESET,
                        "the session holding lock '%.80s' was lost: a nested acquire holds nothing",
                        key);
            return LOCK_ERROR;
        }
        if (w == PG_WAIT_OK && PQntuples(r) == 1 &&
            PQtransactionStatus(c->pc) == PQTRANS_INTRANS) {
            PQclear(r);
            c->depth++;
            return LOCK_GRANTED;
        }
        PQclear(r);
        if (w != PG_WAIT_OK || c->depth > 0 || made_row) {
            /* a failed statement failed the transaction (an outer hold
             * with it); an empty one holds nothing */
            PGTransactionStatusType ts = PQtransactionStatus(c->pc);
            if (ts == PQTRANS_INERROR || (ts == PQTRANS_INTRANS && c->depth == 0)) {
                rollback(c);
                c->depth = 0;
            }
            if (w == PG_WAIT_OK) {
                lab_err_set(err, ENOENT, "the row of lock '%.80s' is missing", key);
                return LOCK_ERROR;
            }
            return w == PG_WAIT_TIMEOUT ? LOCK_TIMEOUT : LOCK_ERROR;
        }
        /* no row yet: give the empty transaction back, make it, lock it */
        rollback(c);
        const char *params[] = {key};
        PGresult *ins = pg_exec(c, "pgfu_row", 1, params, err);
        if (!ins)
            return LOCK_ERROR;
        PQclear(ins);
    }
}

static enum release_status pgfu_release(struct lock_client *c, const char *key,
                                        struct lab_err *err)
{
    (void)key;
    PGTransactionStatusType ts = PQtransactionStatus(c->pc);
    if (ts == PQTRANS_INTRANS && c->depth > 1) {
        c->depth--; /* a nested hold: the outermost release commits */
        return RELEASE_OK;
    }
    if (ts != PQTRANS_INTRANS) {
        /* no transaction: a nested release committed it, or the session
         * (with the transaction and its row lock) is gone */
        if (ts == PQTRANS_INERROR)
            rollback(c);
        c->depth = 0;
        return RELEASE_NOT_OWNER;
    }
    c->depth = 0;
    /* on this session only: a COMMIT sent again on a new one would answer
     * COMMIT (with a WARNING) for a transaction that never was there */
    PGresult *r = end_transaction(c, "COMMIT");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        lab_err_set(err, EIO, "PostgreSQL COMMIT: %.100s", PQresultErrorMessage(r));
        PQclear(r);
        return RELEASE_ERROR;
    }
    bool committed = strcmp(PQcmdStatus(r), "COMMIT") == 0; /* "ROLLBACK": it had failed */
    PQclear(r);
    return committed ? RELEASE_OK : RELEASE_NOT_OWNER;
}

const struct lock_ops lock_pg_for_update = {
    .name = "pg-for-update",
    .backend = "postgres",
    .summary = "BEGIN; SELECT ... FOR UPDATE on the lock's row; COMMIT: no TTL, the transaction "
               "is the critical section",
    .caps = LOCK_CAP_REENTRANT | LOCK_CAP_NOTIFIES,
    .no_fencing = "the row keeps no counter (an UPDATE ... RETURNING of one, under the "
                  "row lock, could be a sound token; this design, as the seeds, has none)",
    .open = pgfu_open,
    .acquire = pgfu_acquire,
    .release = pgfu_release,
    .close = pg_lock_close,
};
