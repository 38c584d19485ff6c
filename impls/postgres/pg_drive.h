/*
 * pg_drive.h - the two drivers of the PostgreSQL designs' state machine
 * (pg_machine.h): one process per client on blocking libpq
 * (pg_drive_block.c), and client groups on libpq's non-blocking calls and
 * the event loop (pg_drive_group.c). Each knows libpq and no design: a
 * design file hands its struct pg_sm_design to these hooks.
 *
 * Every session is opened the same way (application_name LOCK_PG_APP,
 * connect_timeout PG_CONNECT_TIMEOUT_S, the server's notices swallowed:
 * the machine reads the results), and a statement's results reach the
 * machine the same way (pg_gather, pg_sm_result_of).
 */
#ifndef LOCKLAB_PG_DRIVE_H
#define LOCKLAB_PG_DRIVE_H

#include <libpq-fe.h>

#include "lock.h"
#include "pg_machine.h"

/* What a session waits for its connection, at most (libpq's connect_timeout). */
#define PG_CONNECT_TIMEOUT_S 5

struct pg_group;

struct lock_client {
    struct pg_sm sm;            /* the design's protocol */
    PGconn *pc;                 /* the session, NULL: none */
    const struct lock_env *env;
    struct pg_group *g;         /* in a client group: the loop's side */
};

/* A new session to env's server: connected (PQconnectdbParams), or with
 * start only begun (PQconnectStartParams, for PQconnectPoll). NULL when out
 * of memory. */
PGconn *pg_connect(const struct lock_env *env, bool start);

/* libpq's message for pc (what: "connection", "request"), first line, into err. */
void pg_conn_error(struct lab_err *err, PGconn *pc, const char *what);

/* The results of one statement, gathered as PQgetResult hands them out:
 * the first failure decides, else the last result is the answer. */
struct pg_gather {
    PGresult *last, *failed;
};
void pg_gather_add(struct pg_gather *g, PGresult *r);
/* Feed the gathered results (emptied) to the machine: a lost connection
 * (pc no longer usable) is a loss, not a result. */
enum pg_sm_act pg_gather_feed(struct pg_gather *g, PGconn *pc, struct pg_sm *m);
void pg_gather_clear(struct pg_gather *g);

/* One process per client (lock_ops hooks, with the design). */
int pg_block_open(struct lock_client **out, const struct lock_env *env,
                  const struct pg_sm_design *d, struct lab_err *err);
enum lock_status pg_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                  struct lab_err *err);
enum release_status pg_block_release(struct lock_client *c, const char *key,
                                     struct lab_err *err);
void pg_block_close(struct lock_client *c);

/* Client groups (lock_async_ops hooks, with the design). */
int pg_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                  const struct pg_sm_design *d, lock_opened_fn opened, void *arg,
                  struct lab_err *err);
void pg_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                      lock_acquired_fn done, void *arg);
void pg_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                      void *arg);
void pg_group_close(struct lock_client *c);

#endif
