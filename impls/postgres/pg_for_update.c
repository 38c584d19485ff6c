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
 *
 * In a client group the same statements, in the same order and on the same
 * decisions (pgfu_selected, pgfu_release_first), go through pg_async.c: the
 * acquire is a chain of callbacks instead of a loop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_async.h"

static const struct pg_stmt pgfu_stmts[] = {
    {"pgfu_row", "INSERT INTO locklab_locks (name) VALUES ($1) ON CONFLICT DO NOTHING", 1},
    {NULL, NULL, 0},
};

static const char pgfu_table_sql[] = "CREATE TABLE IF NOT EXISTS locklab_locks (name text PRIMARY KEY)";

/* Whether the CREATE TABLE left the table there. Two sessions creating it
 * at once: the later one waits for the other's catalog rows, then fails on
 * them (23505, or 42710/42P07 for the table's type or the table) - and the
 * table is there. */
static bool pgfu_table_made(const PGresult *r, struct lab_err *err)
{
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK ||
              (state && (strcmp(state, "23505") == 0 || strcmp(state, "42710") == 0 ||
                         strcmp(state, "42P07") == 0));
    if (!ok)
        lab_err_set(err, EIO, "PostgreSQL: %.110s", PQresultErrorMessage(r));
    return ok;
}

static int pgfu_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    /* the table first (every client tries; one creates it), then the
     * statements that name it */
    static const struct pg_stmt none[] = {{NULL, NULL, 0}};
    if (pg_lock_open(out, env, none, err) != 0)
        return -1;
    struct lock_client *c = *out;
    PGresult *r = PQexec(c->pc, pgfu_table_sql);
    bool ok = pgfu_table_made(r, err);
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

/* The acquire's statement for key into sql: the SELECT ... FOR UPDATE,
 * after a BEGIN unless a transaction is open (nested: the row is ours; ask
 * again). 0, or -1 with err filled. */
static int pgfu_select_sql(struct lock_client *c, const char *key, char *sql, size_t n,
                           struct lab_err *err)
{
    char *lit = PQescapeLiteral(c->pc, key, strlen(key));
    if (!lit) {
        lab_err_set(err, EINVAL, "cannot quote the key: %.90s", PQerrorMessage(c->pc));
        return -1;
    }
    snprintf(sql, n, "%sSELECT 1 FROM locklab_locks WHERE name = %s FOR UPDATE",
             c->depth > 0 ? "" : "BEGIN; ", lit);
    PQfreemem(lit);
    return 0;
}

/* What an acquire does after its SELECT ended (w, r: cleared here). */
enum pgfu_next {
    PGFU_GRANTED,
    PGFU_TIMEOUT,
    PGFU_ERROR,
    PGFU_MAKE_ROW /* no row yet: give the empty transaction back, make it, lock it */
};

/* The acquire's SELECT ended in w (r its result); outer and reconnects
 * are the depth and the sessions opened again when the acquire began,
 * made_row whether it made the row already. *rollback: ROLLBACK first. */
static enum pgfu_next pgfu_selected(struct lock_client *c, const char *key, enum pg_wait w,
                                    PGresult *r, int outer, unsigned reconnects, bool made_row,
                                    bool *rollback, struct lab_err *err)
{
    *rollback = false;
    if (outer > 0 && c->reconnects != reconnects) {
        /* the session of the open transaction is gone, and the outer
         * hold with it: the nested SELECT, if it ran, ran on a new
         * session in autocommit, and its row lock ended with it */
        PQclear(r);
        c->depth = 0;
        lab_err_set(err, ECONNRESET,
                    "the session holding lock '%.80s' was lost: a nested acquire holds nothing",
                    key);
        return PGFU_ERROR;
    }
    if (w == PG_WAIT_OK && PQntuples(r) == 1 && PQtransactionStatus(c->pc) == PQTRANS_INTRANS) {
        PQclear(r);
        c->depth++;
        return PGFU_GRANTED;
    }
    PQclear(r);
    if (w != PG_WAIT_OK || c->depth > 0 || made_row) {
        /* a failed statement failed the transaction (an outer hold
         * with it); an empty one holds nothing */
        PGTransactionStatusType ts = PQtransactionStatus(c->pc);
        if (ts == PQTRANS_INERROR || (ts == PQTRANS_INTRANS && c->depth == 0)) {
            *rollback = true;
            c->depth = 0;
        }
        if (w == PG_WAIT_OK) {
            lab_err_set(err, ENOENT, "the row of lock '%.80s' is missing", key);
            return PGFU_ERROR;
        }
        return w == PG_WAIT_TIMEOUT ? PGFU_TIMEOUT : PGFU_ERROR;
    }
    *rollback = true;
    return PGFU_MAKE_ROW;
}

static enum lock_status pgfu_status(enum pgfu_next n)
{
    return n == PGFU_GRANTED ? LOCK_GRANTED : n == PGFU_TIMEOUT ? LOCK_TIMEOUT : LOCK_ERROR;
}

static enum lock_status pgfu_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err)
{
    char sql[512];
    if (pgfu_select_sql(c, key, sql, sizeof sql, err) != 0)
        return LOCK_ERROR;
    int outer = c->depth;
    unsigned reconnects = c->reconnects;
    for (int made_row = 0;; made_row++) {
        PGresult *r;
        enum pg_wait w = pg_wait_exec(c, NULL, sql, 0, NULL, wait_ns, &r, err);
        bool rb;
        enum pgfu_next n = pgfu_selected(c, key, w, r, outer, reconnects, made_row, &rb, err);
        if (rb)
            rollback(c);
        if (n != PGFU_MAKE_ROW)
            return pgfu_status(n);
        const char *params[] = {key};
        PGresult *ins = pg_exec(c, "pgfu_row", 1, params, err);
        if (!ins)
            return LOCK_ERROR;
        PQclear(ins);
    }
}

/* A release's first look, on the session's transaction status: a nested
 * hold (RELEASE_OK, nothing sent), none left (RELEASE_NOT_OWNER; *rollback
 * when a failed one must be given back), or -1: COMMIT it. */
static int pgfu_release_first(struct lock_client *c, bool *rollback)
{
    PGTransactionStatusType ts = PQtransactionStatus(c->pc);
    *rollback = false;
    if (ts == PQTRANS_INTRANS && c->depth > 1) {
        c->depth--; /* a nested hold: the outermost release commits */
        return RELEASE_OK;
    }
    c->depth = 0;
    if (ts != PQTRANS_INTRANS) {
        /* no transaction: a nested release committed it, or the session
         * (with the transaction and its row lock) is gone */
        *rollback = ts == PQTRANS_INERROR;
        return RELEASE_NOT_OWNER;
    }
    return -1;
}

/* What the COMMIT's result means; r is cleared. */
static enum release_status pgfu_committed(PGresult *r, struct lab_err *err)
{
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        lab_err_set(err, EIO, "PostgreSQL COMMIT: %.100s", PQresultErrorMessage(r));
        PQclear(r);
        return RELEASE_ERROR;
    }
    bool committed = strcmp(PQcmdStatus(r), "COMMIT") == 0; /* "ROLLBACK": it had failed */
    PQclear(r);
    return committed ? RELEASE_OK : RELEASE_NOT_OWNER;
}

static enum release_status pgfu_release(struct lock_client *c, const char *key,
                                        struct lab_err *err)
{
    (void)key;
    bool rb;
    int first = pgfu_release_first(c, &rb);
    if (rb)
        rollback(c);
    if (first >= 0)
        return (enum release_status)first;
    /* on this session only: a COMMIT sent again on a new one would answer
     * COMMIT (with a WARNING) for a transaction that never was there */
    return pgfu_committed(end_transaction(c, "COMMIT"), err);
}

/* ------------------------------------------------------------ in a client group */

/* The acquire under way, per client (the group runs one at a time). */
struct pgfu_async {
    const char *key;
    char sql[512];
    int64_t wait_ns;
    int outer;
    unsigned reconnects;
    bool made_row;
    enum lock_status ends; /* what the acquire ends in once its ROLLBACK is done */
};

static int pgfu_async_open(struct lock_client **out, const struct lock_env *env,
                           struct evloop *loop, lock_opened_fn opened, void *arg,
                           struct lab_err *err)
{
    struct pgfu_async *d = calloc(1, sizeof *d);
    if (!d) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    /* the table first, once; then the statements that name it */
    if (pg_async_open(out, env, loop, pgfu_stmts, pgfu_table_sql, pgfu_table_made, opened, arg,
                      err) != 0) {
        free(d);
        return -1;
    }
    (*out)->design = d;
    return 0;
}

static void pgfu_async_close(struct lock_client *c)
{
    if (c)
        free(c->design);
    pg_async_close(c);
}

static void pgfu_async_selected(struct lock_client *c, enum pg_wait w, PGresult *r);

static void pgfu_async_rolled_back(struct lock_client *c, enum pg_wait w, PGresult *r)
{
    (void)w;
    PQclear(r);
    pg_async_acquired(c, ((struct pgfu_async *)c->design)->ends);
}

static void pgfu_async_row_made(struct lock_client *c, enum pg_wait w, PGresult *r)
{
    struct pgfu_async *d = c->design;
    PQclear(r);
    if (w != PG_WAIT_OK) {
        pg_async_acquired(c, LOCK_ERROR);
        return;
    }
    d->made_row = true;
    pg_async_wait(c, NULL, d->sql, 0, NULL, d->wait_ns, pgfu_async_selected);
}

static void pgfu_async_made_room(struct lock_client *c, enum pg_wait w, PGresult *r)
{
    struct pgfu_async *d = c->design;
    (void)w;
    PQclear(r);
    const char *params[] = {d->key};
    pg_async_exec(c, "pgfu_row", 1, params, pgfu_async_row_made);
}

static void pgfu_async_selected(struct lock_client *c, enum pg_wait w, PGresult *r)
{
    struct pgfu_async *d = c->design;
    bool rb;
    enum pgfu_next n = pgfu_selected(c, d->key, w, r, d->outer, d->reconnects, d->made_row, &rb,
                                     pg_async_err(c));
    if (n == PGFU_MAKE_ROW) {
        pg_async_plain(c, "ROLLBACK", pgfu_async_made_room);
    } else if (rb) {
        d->ends = pgfu_status(n);
        pg_async_plain(c, "ROLLBACK", pgfu_async_rolled_back);
    } else {
        pg_async_acquired(c, pgfu_status(n));
    }
}

static void pgfu_async_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                               lock_acquired_fn done, void *arg)
{
    struct pgfu_async *d = c->design;
    pg_async_will_acquire(c, done, arg);
    if (pgfu_select_sql(c, key, d->sql, sizeof d->sql, pg_async_err(c)) != 0) {
        pg_async_acquired_later(c, LOCK_ERROR);
        return;
    }
    d->key = key;
    d->wait_ns = wait_ns;
    d->outer = c->depth;
    d->reconnects = c->reconnects;
    d->made_row = false;
    pg_async_wait(c, NULL, d->sql, 0, NULL, wait_ns, pgfu_async_selected);
}

static void pgfu_async_committed(struct lock_client *c, enum pg_wait w, PGresult *r)
{
    (void)w;
    pg_async_released(c, pgfu_committed(r, pg_async_err(c)));
}

static void pgfu_async_not_owner(struct lock_client *c, enum pg_wait w, PGresult *r)
{
    (void)w;
    PQclear(r);
    pg_async_released(c, RELEASE_NOT_OWNER);
}

static void pgfu_async_release(struct lock_client *c, const char *key, lock_released_fn done,
                               void *arg)
{
    (void)key;
    pg_async_will_release(c, done, arg);
    bool rb;
    int first = pgfu_release_first(c, &rb);
    if (rb)
        pg_async_plain(c, "ROLLBACK", pgfu_async_not_owner);
    else if (first >= 0)
        pg_async_released_later(c, (enum release_status)first);
    else
        pg_async_plain(c, "COMMIT", pgfu_async_committed);
}

static const struct lock_async_ops pgfu_async = {
    .client_faults = true, /* a libpq session, socket and timer per client */
    .open = pgfu_async_open,
    .acquire = pgfu_async_acquire,
    .release = pgfu_async_release,
    .close = pgfu_async_close,
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
    .acquire = pgfu_acquire,
    .release = pgfu_release,
    .close = pg_lock_close,
    .async = &pgfu_async,
};
