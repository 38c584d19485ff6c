/*
 * pg_machine.h - the PostgreSQL designs as one state machine without I/O:
 * pg-advisory (pg_advisory_lock on the session) and pg-for-update (BEGIN;
 * SELECT ... FOR UPDATE on the lock's row; COMMIT).
 *
 * What these designs send and what each result means is decided here,
 * once; the two drivers around the machine only move statements: the
 * per-process one on blocking libpq (pg_drive_block.c), the client groups'
 * one on libpq's non-blocking calls and the event loop
 * (pg_drive_group.c). tests/test_pg_machine.c feeds it scripted results,
 * with no server. The machine reads no clock and includes no libpq.
 *
 * The machine is driven by calls that each return the next thing to do:
 *
 *   act = pg_sm_acquire(m, key, wait_ns)
 *   CONNECT  drop the session (if any) and open a new one to the store;
 *            then pg_sm_connected(m, ok, err)
 *   SEND     send m->sql (m->nparams text parameters in m->params: $1) on
 *            the session; then pg_sm_result(m, &result) once every result
 *            of it is in, or pg_sm_lost(m, why) when the connection broke
 *            under it; while it is under way and the run's stop is raised,
 *            pg_sm_stop(m) (again and again is harmless)
 *   CLOSE    close the session at once, awaiting nothing (the server ends
 *            it, with the wait it was in); the operation is over, as DONE
 *   DONE     the operation ended: m->open_rc, m->status or m->release,
 *            with m->err
 *   IGNORED  the event changed nothing to do: the statement in flight goes
 *            on (a stop while no lock wait is), or nothing was in flight (a
 *            session lost between operations, a late result)
 *
 * The drivers tell the machine of a session lost between operations too
 * (pg_sm_lost with no operation: the group watches the idle socket, the
 * blocking driver looks at it before each operation), so the next one
 * starts on a new session in both modes.
 *
 * Decisions, each after what libpq and the libraries over it do:
 * - a statement whose connection is lost under it is never sent again on
 *   a new session: the operation fails (LOCK_ERROR, RELEASE_ERROR), as
 *   libpq, psycopg2 (OperationalError) and pgjdbc (08006) report it, and
 *   the next operation opens a new session, as a pool hands out a new
 *   connection. A session is where the locks live: the server frees its
 *   advisory locks and rolls back its transaction when it ends, so an
 *   acquire sent again on a new session would be a different lock. The
 *   server's own goodbye (SQLSTATE 57P01/57P02/57P03, class 08) is such a
 *   loss. A connect that fails fails the operation, with no second try;
 * - the holds a lost session had are gone: an acquire nested in one fails
 *   with nothing sent (a bare SELECT ... FOR UPDATE on the new session
 *   would run in autocommit and lock nothing past itself; a second
 *   pg_advisory_lock would be a first), and the release of one reports
 *   not-owner with nothing sent, as the lock is known not held;
 * - a lock wait is bounded by lock_timeout = the scenario's wait (SET once
 *   per session, when it differs): its 55P03 is LOCK_TIMEOUT, not an error;
 * - at the run's stop a statement waiting for a lock is abandoned by
 *   closing its session (LOCK_TIMEOUT), as pgx closes a connection whose
 *   context is cancelled mid-query; a cancel request would cost the server
 *   a fork per waiter. Every other statement (SET, COMMIT, unlock, the
 *   row's INSERT) and a connect run to their end (connect_timeout 5 s);
 * - pg-advisory: the release is checked, pg_advisory_unlock's false is
 *   not-owner; reentrant by the server (the session's locks stack);
 * - pg-for-update: a nested acquire joins the open transaction (a bare
 *   SELECT ... FOR UPDATE: "required" propagation), only the outermost
 *   release COMMITs (answered ROLLBACK: not-owner). A key's row is made
 *   the first time it is missing (ROLLBACK, INSERT ... ON CONFLICT DO
 *   NOTHING, the SELECT again); a grant needs the session in its
 *   transaction after the SELECT; a failed SELECT in a transaction is
 *   given back (ROLLBACK), with the outer holds it failed.
 * Neither design has a failpoint of its own (after-grant and
 * before-release are the client loop's) nor a fencing token.
 */
#ifndef LOCKLAB_PG_MACHINE_H
#define LOCKLAB_PG_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "lock.h"

enum pg_sm_kind { PG_SM_ADVISORY, PG_SM_FOR_UPDATE };

/* What a design is, for the machine. */
struct pg_sm_design {
    enum pg_sm_kind kind;
    const char *name;
};

enum pg_sm_act { PG_SM_CONNECT, PG_SM_SEND, PG_SM_CLOSE, PG_SM_DONE, PG_SM_IGNORED };

/* The session's transaction after a statement (libpq's PQtransactionStatus). */
enum pg_sm_txn { PG_TXN_IDLE, PG_TXN_IN, PG_TXN_FAILED };

/* A statement's results as the machine reads them: the first failure
 * decides, else the last result is the answer. */
struct pg_sm_result {
    bool ok;              /* every result succeeded */
    int rows;             /* ok: the last result's rows */
    const char *value;    /* ok: its first value, NULL when none */
    const char *tag;      /* ok: its command tag ("COMMIT", "ROLLBACK", "SELECT 1") */
    const char *sqlstate; /* !ok: the failure's SQLSTATE, NULL when none */
    const char *message;  /* !ok: its message */
    enum pg_sm_txn txn;
};

enum pg_sm_step {
    PSM_IDLE,
    PSM_TABLE,    /* the open of pg-for-update: CREATE TABLE IF NOT EXISTS */
    PSM_TIMEOUT,  /* SET lock_timeout */
    PSM_LOCK,     /* the statement that waits for the lock */
    PSM_ROLLBACK, /* pg-for-update: an empty or failed transaction given back */
    PSM_ROW,      /* pg-for-update: the key's row made */
    PSM_UNLOCK,   /* pg-advisory: pg_advisory_unlock */
    PSM_COMMIT    /* pg-for-update: the outermost release */
};

enum pg_sm_op { PSM_OP_NONE, PSM_OP_OPEN, PSM_OP_ACQUIRE, PSM_OP_RELEASE };

#define PG_SM_SQL_MAX 600

struct pg_sm {
    const struct pg_sm_design *design;
    const struct lock_env *env;   /* settings, counters */
    bool session;                 /* a session is up */
    int64_t lock_timeout_ms;      /* the session's lock_timeout, -1 unknown */
    int holds;                    /* grants held on this session, not yet released */
    int orphans;                  /* grants a lost session took, not yet released */
    /* the operation under way */
    enum pg_sm_op op;
    enum pg_sm_step step;         /* the statement in flight, or to send once connected */
    enum pg_sm_step after;        /* PSM_ROLLBACK: PSM_ROW, or PSM_IDLE to end in ends */
    enum lock_status ends;
    const char *key;
    char id[24];                  /* pg-advisory: the key's bigint */
    int64_t wait_ms;              /* the lock_timeout this acquire wants */
    bool made_row;                /* pg-for-update: this acquire made the row */
    /* what to send (SEND) */
    char sql[PG_SM_SQL_MAX];
    const char *params[1];
    int nparams;
    /* the outcome (DONE, CLOSE) */
    int open_rc;
    enum lock_status status;
    enum release_status release;
    struct lab_err err;
};

void pg_sm_init(struct pg_sm *m, const struct pg_sm_design *d, const struct lock_env *env);

/* Start an operation; each returns the first act. */
enum pg_sm_act pg_sm_open(struct pg_sm *m);
enum pg_sm_act pg_sm_acquire(struct pg_sm *m, const char *key, int64_t wait_ns);
enum pg_sm_act pg_sm_release(struct pg_sm *m, const char *key);

/* Feed what happened; each returns the next act. */
enum pg_sm_act pg_sm_connected(struct pg_sm *m, bool ok, const struct lab_err *err);
enum pg_sm_act pg_sm_result(struct pg_sm *m, const struct pg_sm_result *r);
enum pg_sm_act pg_sm_lost(struct pg_sm *m, const char *why);
enum pg_sm_act pg_sm_stop(struct pg_sm *m);

/* The bigint of a lock key for the advisory functions: the 64-bit FNV-1a
 * hash of its bytes, as decimal text. Two keys that collide share one lock
 * (over-exclusion, never a lost one). */
void pg_key_id(const char *key, char *buf, size_t n);

#endif
