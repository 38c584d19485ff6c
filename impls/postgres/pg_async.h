/*
 * pg_async.h - a PostgreSQL designs' session on a client group's event
 * loop (pg_async.c): the non-blocking counterparts of pg_common.h's
 * pg_lock_open, pg_exec and pg_wait_exec, with the same session set-up,
 * statements, round-trip counting, lock_timeout and retry on a lost
 * session, each ending in a callback from the loop instead of a return.
 */
#ifndef LOCKLAB_PG_ASYNC_H
#define LOCKLAB_PG_ASYNC_H

#include "pg_common.h"

struct evloop;

/* A request is done: w and, on PG_WAIT_OK, its last result (PQclear it);
 * on PG_WAIT_ERROR pg_async_err says why. pg_async_plain always hands a
 * result (an error result when it failed). Called from the loop, never
 * from inside the call that started the request. */
typedef void (*pg_async_fn)(struct lock_client *c, enum pg_wait w, PGresult *res);

/* Start opening a session as pg_lock_open does (stmts prepared on it);
 * with setup, that simple query runs first, once, and setup_ok judges its
 * result (false: the open fails, err filled). opened is told on the loop.
 * 0 with *out set, or -1 with err filled and *out NULL. */
int pg_async_open(struct lock_client **out, const struct lock_env *env, struct evloop *L,
                  const struct pg_stmt *stmts, const char *setup,
                  bool (*setup_ok)(const PGresult *r, struct lab_err *err),
                  lock_opened_fn opened, void *arg, struct lab_err *err);
void pg_async_close(struct lock_client *c);

/* pg_exec: prepared statement name with params (text), on a session made
 * ready first (opened again when the server closed it), sent once more on
 * a new session when it was lost under the statement. */
void pg_async_exec(struct lock_client *c, const char *name, int nparams,
                   const char *const *params, pg_async_fn done);
/* pg_wait_exec: a statement that may wait for a lock (prepared name, or
 * with name NULL the simple query sql), bounded by lock_timeout = wait_ns
 * and by the run's stop flag (the session is then closed: PG_WAIT_TIMEOUT). */
void pg_async_wait(struct lock_client *c, const char *name, const char *sql, int nparams,
                   const char *const *params, int64_t wait_ns, pg_async_fn done);
/* PQexec of the simple query sql on this session only (a new one would
 * not have what it is for), its round trip counted: COMMIT, ROLLBACK. */
void pg_async_plain(struct lock_client *c, const char *sql, pg_async_fn done);

/* The hooks' outcomes, told to the group with the client's error: will_*
 * at the start of a hook keeps its callback; *_acquired and *_released
 * from a request's callback (on the loop), *_later from inside the hook
 * itself (the loop tells the group on its next turn). */
void pg_async_will_acquire(struct lock_client *c, lock_acquired_fn done, void *arg);
void pg_async_acquired(struct lock_client *c, enum lock_status st);
void pg_async_acquired_later(struct lock_client *c, enum lock_status st);
void pg_async_will_release(struct lock_client *c, lock_released_fn done, void *arg);
void pg_async_released(struct lock_client *c, enum release_status rs);
void pg_async_released_later(struct lock_client *c, enum release_status rs);
/* The error of the client's latest request, for a design to fill or read. */
struct lab_err *pg_async_err(struct lock_client *c);

#endif
