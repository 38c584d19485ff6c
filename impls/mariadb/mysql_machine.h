/*
 * mysql_machine.h - the MariaDB designs as one state machine without I/O:
 * mysql-get-lock, mysql-for-update, mysql-unique and mysql-optimistic.
 *
 * What these designs send, in which order, and what each answer means is
 * decided here, once; the two drivers around the machine only move bytes
 * (Connector/C is not included here): one process per client on a
 * blocking connection (mysql_drive_block.c), client groups on the event
 * loop through Connector/C's non-blocking calls (mysql_drive_group.c).
 * tests/test_mysql_machine.c feeds it scripted answers, with no server.
 *
 * The machine is driven by calls that each return the next thing to do
 * (enum mysql_sm_act); the driver does it and feeds the outcome back:
 *
 *   act = mysql_sm_acquire(m, key, wait, now)
 *   CONNECT  open a new connection to the store (the last one is closed);
 *            then mysql_sm_connected(m, ok, err, now)
 *   SEND     send m->sql on the connection; then mysql_sm_result(m, &r,
 *            now) with its outcome (an error number and text, rows changed,
 *            or the first row), or mysql_sm_lost(m, err, now) when the
 *            connection went under it (the driver closed it). While
 *            m->waits, the statement waits inside the server for the
 *            lock: a driver that can give it up at the run's stop closes
 *            the connection and feeds mysql_sm_abandoned(m, now)
 *   SLEEP    nothing to do before m->wake_at; then mysql_sm_timer(m, now)
 *   DONE     the operation ended: m->open_rc, m->status or m->release,
 *            with m->err
 *
 * Every statement sent counts one round trip. These designs have no
 * failpoints of their own and no fencing token: a row or a session lock
 * carries no ordered number.
 *
 * Decisions, taken from what MariaDB Connector/J does and the lock
 * libraries over it assume (a lock held by a session dies with it):
 * - a connection lost under a statement is closed and that statement is
 *   never sent again: the operation fails (LOCK_ERROR, RELEASE_ERROR), and
 *   the next statement connects anew, as Connector/J without a failover
 *   mode reestablishes a discarded connection before the next query and
 *   throws for the one that was lost (nor does it replay a transaction,
 *   transactionReplay being off by default). An acquire is never replayed
 *   on a new session: GET_LOCK's lock and a row lock were the old
 *   session's. Both forms already did this;
 * - GET_LOCK answers 1 granted, 0 its slice ran out (asked again until the
 *   wait budget is spent), NULL an error; RELEASE_LOCK 1 released, 0 or
 *   NULL not ours (a session lost since the grant takes a fresh connection
 *   whose RELEASE_LOCK answers NULL: not ours);
 * - FOR UPDATE WAIT 1 answering 1205 (lock wait timeout) is contention:
 *   asked again until the budget is spent, then ROLLBACK and LOCK_TIMEOUT;
 *   any other error, or no row, ROLLBACK (if the connection is still up)
 *   and LOCK_ERROR. Its release is COMMIT, unless the connection was lost
 *   since the grant: then the server rolled the transaction back, and the
 *   release answers not ours without sending anything;
 * - mysql-unique's INSERT: 1 row granted, a duplicate key taken (try the
 *   takeover of an expired row), a deadlock (1213) taken; the takeover's
 *   deadlock or lock wait taken; taken pauses as lock_poll does. The
 *   DELETE by owner: 1 row released, 0 not ours;
 * - mysql-optimistic: the read gives the stock and version (no row is an
 *   error); the write is conditional on the version, 0 rows a conflict
 *   (counted as a poll, answered not ours); sold out at the read writes
 *   nothing;
 * - the run's stop ends a wait: a pause ends in LOCK_TIMEOUT without one
 *   more attempt (the blocking form once tried again after a pause the
 *   stop cut short; the group did not), and a statement waiting in the
 *   server that the driver gives up ends in LOCK_TIMEOUT, its connection
 *   (and whatever the server granted meanwhile) closed;
 * - an answer with no operation under way (late, after a timeout) changes
 *   nothing.
 */
#ifndef LOCKLAB_MYSQL_MACHINE_H
#define LOCKLAB_MYSQL_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "lock.h"

enum mysql_sm_kind {
    MYSQL_SM_GET_LOCK,   /* GET_LOCK / RELEASE_LOCK */
    MYSQL_SM_FOR_UPDATE, /* BEGIN, SELECT ... FOR UPDATE WAIT 1; COMMIT */
    MYSQL_SM_UNIQUE,     /* INSERT, takeover UPDATE; DELETE by owner */
    MYSQL_SM_OPTIMISTIC  /* SELECT stock, version; conditional UPDATE */
};

enum mysql_sm_act {
    MYSQL_SM_CONNECT, /* a new connection; feed mysql_sm_connected */
    MYSQL_SM_SEND,    /* send sql; feed mysql_sm_result or mysql_sm_lost */
    MYSQL_SM_SLEEP,   /* wait until wake_at; feed mysql_sm_timer */
    MYSQL_SM_DONE     /* the operation ended */
};

/* A statement's outcome as the machine reads it (the drivers convert
 * Connector/C's). */
struct mysql_sm_result {
    struct lab_err err; /* err.code 0: it succeeded; else the server's error number */
    int64_t affected;   /* rows changed (a statement without a result set) */
    bool row;           /* a result set with a first row */
    bool null0;         /* its first column was NULL, or there was no row */
    int64_t v[2];       /* its first two columns as integers (NULL reads as 0) */
};

enum mysql_sm_step {
    MSM_IDLE,
    MSM_GET_LOCK,     /* SELECT GET_LOCK(name, slice) */
    MSM_RELEASE_LOCK, /* SELECT RELEASE_LOCK(name) */
    MSM_BEGIN,        /* START TRANSACTION */
    MSM_ROW,          /* SELECT ... FOR UPDATE WAIT 1 */
    MSM_ROLLBACK,     /* giving an acquire up */
    MSM_COMMIT,       /* the release */
    MSM_INSERT,       /* the unique row */
    MSM_TAKEOVER,     /* UPDATE of an expired row */
    MSM_DELETE,       /* DELETE by owner */
    MSM_READ,         /* SELECT stock, version */
    MSM_WRITE         /* UPDATE ... WHERE version = read */
};

enum mysql_sm_op { MSM_OP_NONE, MSM_OP_OPEN, MSM_OP_ACQUIRE, MSM_OP_RELEASE };

struct mysql_sm {
    /* what it is (set by mysql_sm_init) */
    enum mysql_sm_kind kind;
    const struct lock_env *env;   /* settings, counters, stop flag */
    char token[40];               /* this client's identity (mysql-unique's owner) */
    bool connected;               /* a connection is up (else the next statement connects) */
    bool in_txn;                  /* mysql-for-update: its transaction is open on it */
    int64_t version, stock;       /* mysql-optimistic: what its read saw */
    /* the operation under way */
    enum mysql_sm_op op;
    enum mysql_sm_step step;      /* the statement in flight, or to send once connected */
    enum lock_status outcome;     /* what a ROLLBACK ends the acquire with */
    char key[160];
    char q[400];                  /* key, escaped for a '...' literal */
    int64_t deadline;             /* the end of the wait budget */
    int64_t sent;                 /* when the current attempt began (mysql-unique) */
    int attempt;                  /* attempts that found the lock taken */
    /* what to do (for the act just returned) */
    char sql[1024];
    bool waits;                   /* SEND: it waits inside the server for the lock */
    int64_t wake_at;              /* SLEEP: CLOCK_MONOTONIC ns */
    /* the outcome (DONE) */
    int open_rc;                  /* 0 or -1 */
    enum lock_status status;
    enum release_status release;
    struct lab_err err;
};

/* Set m up for kind in env with token; no connection yet. */
void mysql_sm_init(struct mysql_sm *m, enum mysql_sm_kind kind, const struct lock_env *env,
                   const char *token);

/* Start an operation; each returns the first act. */
enum mysql_sm_act mysql_sm_open(struct mysql_sm *m, int64_t now);
enum mysql_sm_act mysql_sm_acquire(struct mysql_sm *m, const char *key, int64_t wait_ns,
                                   int64_t now);
enum mysql_sm_act mysql_sm_release(struct mysql_sm *m, const char *key, int64_t now);

/* Feed what happened; each returns the next act. */
enum mysql_sm_act mysql_sm_connected(struct mysql_sm *m, bool ok, const struct lab_err *err,
                                     int64_t now);
enum mysql_sm_act mysql_sm_result(struct mysql_sm *m, const struct mysql_sm_result *r,
                                  int64_t now);
enum mysql_sm_act mysql_sm_lost(struct mysql_sm *m, const struct lab_err *err, int64_t now);
enum mysql_sm_act mysql_sm_abandoned(struct mysql_sm *m, int64_t now);
enum mysql_sm_act mysql_sm_timer(struct mysql_sm *m, int64_t now);

#endif
