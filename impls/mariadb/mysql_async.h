/*
 * mysql_async.h - the MariaDB designs in client groups: statements sent
 * through Connector/C's non-blocking calls on the group's event loop
 * (impls/mariadb/mysql_async.c), and the designs' asynchronous hooks built on them
 * (impls/mariadb/mysql_async_locks.c).
 *
 * A logical client is the blocking design's struct lock_client (its token,
 * its escaped key, its transaction flag, c->m its connection) plus this
 * side: the connection's socket and timer on the loop, and the operation
 * under way. As in the blocking path, one statement is one round trip, a
 * connection that broke under a statement is dropped and the next statement
 * connects again (now without blocking), and nothing is reported from inside
 * the hook that started it.
 */
#ifndef LOCKLAB_MYSQL_ASYNC_H
#define LOCKLAB_MYSQL_ASYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "evloop.h"
#include "mysql_common.h"

/* A statement's outcome (mysql_async_fn's rc) when the run stopped while it
 * waited inside the server: its connection was dropped (the server ends the
 * session, and what it held or was granted meanwhile with it). */
#define MYSQL_ASYNC_STOPPED (-2)

/* Builds the statement to send, just before it goes (the connection is up:
 * mysql_lock_quote works). 0, or -1 with err filled (nothing is sent). */
typedef int (*mysql_async_sql_fn)(struct lock_client *c, char *sql, size_t n,
                                  struct lab_err *err);
/* A statement is done: rc is the rows it changed (ncols 0), or 1 / 0 for a
 * first row read or none (ncols > 0: the values in as->row), or -1 with err
 * filled (err->code the server's error number), or MYSQL_ASYNC_STOPPED. */
typedef void (*mysql_async_fn)(struct lock_client *c, int64_t rc, const struct lab_err *err);

enum mysql_async_op { MA_IDLE, MA_CONNECT, MA_QUERY, MA_STORE };

struct mysql_async {
    struct lock_client *client;
    struct evloop *L;
    struct ev_io io;           /* c->m's socket while a call waits on it */
    struct ev_timer timer;     /* the library's timeout for that wait */
    struct ev_defer kick;      /* starts the statement (or delivers a result) from the loop */
    int64_t io_deadline;       /* when the library's timeout is really due */
    bool io_timeout;           /* the library asked for that timeout */
    enum mysql_async_op op;    /* the call under way */
    struct st_mysql *connecting; /* the handle being connected */
    bool has_turn;             /* one of the process's handshakes under way is its own */
    bool awaits_turn;          /* queued for one (next_waiting links the queue) */
    struct mysql_async *next_waiting;
    struct st_mysql *conn_ret; /* what mysql_real_connect_start/_cont gave */
    int query_ret;
    struct st_mysql_res *res;
    /* the statement under way */
    mysql_async_sql_fn build;
    int ncols;                 /* 0: a statement changing rows; else columns to read */
    bool waits;                /* it may wait inside the server (a lock wait): a stopping
                                  run drops it rather than waiting for its answer */
    bool deliver;              /* the kick delivers deliver_rc, sending nothing */
    int64_t deliver_rc;
    mysql_async_fn done;
    mysql_async_fn opened;     /* while opening: the open's outcome */
    char sql[1024];
    struct lab_err qerr;
    int64_t row[2];            /* the first row read */
    bool row_null;             /* its first column was NULL, or there was no row */
    /* the design's operation under way (mysql_async_locks.c) */
    const char *key;
    int64_t deadline;          /* end of the wait budget */
    int64_t sent;              /* when the current attempt was sent (mysql-unique) */
    int attempt;               /* attempts that found the lock taken (mysql-unique) */
    int outcome;               /* the outcome a ROLLBACK delivers (mysql-for-update) */
    struct ev_timer pause;     /* the retry pause (mysql-unique) */
    struct lab_err err;        /* the error the outcome carries */
    lock_opened_fn on_opened;
    lock_acquired_fn on_acquired;
    lock_released_fn on_released;
    void *arg;
};

/* A new client connecting to env's MariaDB without blocking; opened is
 * called from the loop with 0, or -1 and the error. 0, or -1 with err
 * filled (*out NULL). */
int mysql_async_open(struct lock_client **out, const struct lock_env *env, struct evloop *L,
                     mysql_async_fn opened, struct lab_err *err);

/* Send one statement (connecting first if the connection broke), counting
 * one round trip; done gets its outcome from the loop. */
void mysql_async_run(struct lock_client *c, mysql_async_sql_fn build, int ncols, bool waits,
                     mysql_async_fn done);

/* Call done with rc (and c->as->qerr) from the loop, sending nothing. */
void mysql_async_later(struct lock_client *c, int64_t rc, mysql_async_fn done);

/* Close the connection, whatever is under way (nothing is reported). */
void mysql_async_close(struct lock_client *c);

/* The asynchronous hooks of the designs (lock_ops.async). */
extern const struct lock_async_ops mysql_async_get_lock;
extern const struct lock_async_ops mysql_async_for_update;
extern const struct lock_async_ops mysql_async_unique;

#endif
