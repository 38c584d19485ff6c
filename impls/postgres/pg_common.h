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

struct pg_async;

struct lock_client {
    PGconn *pc;                    /* the session */
    const struct lock_env *env;    /* harness settings and counters */
    const struct pg_stmt *stmts;   /* the design's statements, NULL-named at the end */
    bool prepared;                 /* they are prepared on pc */
    int64_t lock_timeout_ms;       /* the session's lock_timeout, -1 unknown */
    unsigned reconnects;           /* sessions opened again */
    int depth;                     /* pg-for-update: locks held in the open transaction */
    struct pg_async *as;           /* in a client group: the loop's side (pg_async.c) */
    void *design;                  /* ... and the design's state of its operation under way */
};

/* How a statement that may wait for a lock ended. */
enum pg_wait {
    PG_WAIT_OK = 0, /* it ran: the result is the caller's */
    PG_WAIT_TIMEOUT, /* lock_timeout ran out, or the run stopped */
    PG_WAIT_ERROR    /* anything else; err says what */
};

/* What a session waits for its connection, at most (libpq's connect_timeout). */
#define PG_CONNECT_TIMEOUT_S 5

/* A new session to env's server, as every design opens it (application_name
 * LOCK_PG_APP, notices swallowed): connected (PQconnectdbParams), or with
 * start only begun (PQconnectStartParams, for PQconnectPoll). NULL when out
 * of memory. */
PGconn *pg_connect(const struct lock_env *env, bool start);

/* libpq's message for pc (what: "connection", "request"), or the result's
 * error, first line, into err. */
void pg_conn_error(struct lab_err *err, PGconn *pc, const char *what);
void pg_result_error(struct lab_err *err, const PGresult *r, PGconn *pc);

/* The SET lock_timeout for a wait of wait_ns into sql (whole ms, at least
 * 1: 0 would mean no bound); returns the ms. */
int64_t pg_lock_timeout_sql(int64_t wait_ns, char *sql, size_t n);

/* The results of one request, gathered as PQgetResult hands them out: the
 * first failure decides, else the last result is the answer. */
struct pg_results {
    PGresult *last, *failed;
};
void pg_results_add(struct pg_results *acc, PGresult *r);
/* The request's outcome, acc emptied: PG_WAIT_OK with *res the last result
 * (PQclear it); PG_WAIT_TIMEOUT when it failed on lock_timeout (55P03) and
 * lock_wait; else PG_WAIT_ERROR with err filled. */
enum pg_wait pg_results_end(struct pg_results *acc, PGconn *pc, bool lock_wait, PGresult **res,
                            struct lab_err *err);

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
