/*
 * pg_common.h - what the PostgreSQL lock designs share.
 *
 * Each client holds one libpq session (application_name LOCK_PG_APP) with
 * its design's statements prepared on it. A statement that waits for a
 * lock is bounded twice: by the server, through lock_timeout set to the
 * scenario's wait (the error 55P03 is a timeout, not a failure), and by the
 * run's stop flag, on which the client closes its session, so it never sits
 * in a server-side wait after its run is over. A session the server dropped (a server killed or restarted)
 * is opened again once, and the statement sent again on it: whatever the
 * old session held is gone, as the server then says (an unlock of a lock
 * the new session does not hold is false; no transaction is open).
 */
#ifndef LOCKLAB_PG_COMMON_H
#define LOCKLAB_PG_COMMON_H

#include <stdbool.h>

#include <libpq-fe.h>

#include "lock.h"

/* A statement a design prepares on every session it opens. */
struct pg_stmt {
    const char *name; /* its name on the session */
    const char *sql;  /* its text, $1... for parameters */
    int nparams;
};

struct lock_client {
    PGconn *pc;                    /* the session */
    const struct lock_env *env;    /* harness settings and counters */
    const struct pg_stmt *stmts;   /* the design's statements, NULL-named at the end */
    bool prepared;                 /* they are prepared on pc */
    int64_t lock_timeout_ms;       /* the session's lock_timeout, -1 unknown */
    unsigned reconnects;           /* sessions opened again */
    int depth;                     /* pg-for-update: locks held in the open transaction */
};

/* How a statement that may wait for a lock ended. */
enum pg_wait {
    PG_WAIT_OK = 0, /* it ran: the result is the caller's */
    PG_WAIT_TIMEOUT, /* lock_timeout ran out, or the run stopped */
    PG_WAIT_ERROR    /* anything else; err says what */
};

/* Open a session to env's server and prepare stmts (ending in a NULL
 * name). 0, or -1 with err filled and *out NULL. */
int pg_lock_open(struct lock_client **out, const struct lock_env *env,
                 const struct pg_stmt *stmts, struct lab_err *err);

void pg_lock_close(struct lock_client *c);

/* Run prepared statement name with params (text) and count the round
 * trip; a session found closed is opened again and the statement sent once
 * more. The result (PQclear it) when it succeeded, else NULL with err
 * filled. */
PGresult *pg_exec(struct lock_client *c, const char *name, int nparams,
                  const char *const *params, struct lab_err *err);

/* Run a statement that may wait for a lock, bounded by wait_ns (lock_timeout)
 * and the run's stop flag: prepared statement name with params, or, with
 * name NULL, the simple query sql (several statements, one round trip). On
 * PG_WAIT_OK *res is the last result (PQclear it). */
enum pg_wait pg_wait_exec(struct lock_client *c, const char *name, const char *sql, int nparams,
                          const char *const *params, int64_t wait_ns, PGresult **res,
                          struct lab_err *err);

/* The bigint of a lock key for the advisory lock functions: the 64-bit
 * FNV-1a hash of its bytes (see pg_advisory.c), as decimal text in buf. */
void pg_key_id(const char *key, char *buf, size_t n);

#endif
