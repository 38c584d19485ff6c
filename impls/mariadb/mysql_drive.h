/*
 * mysql_drive.h - the two drivers of the MariaDB designs' state machine
 * (mysql_machine.h): one process per client on a blocking Connector/C
 * connection (mysql_drive_block.c), and client groups on the event loop
 * through Connector/C's non-blocking calls (mysql_drive_group.c). Each
 * knows MariaDB's transport and no design: a design file hands its kind
 * to these hooks.
 */
#ifndef LOCKLAB_MYSQL_DRIVE_H
#define LOCKLAB_MYSQL_DRIVE_H

#include "lock.h"
#include "mysql_conn.h"
#include "mysql_machine.h"

/* How long a connection may take to come up (mysql_conn_open's timeout). */
#define MYSQL_LOCK_TIMEOUT_MS 5000

struct mysql_group; /* mysql_drive_group.c */

struct lock_client {
    const struct lock_env *env;
    struct st_mysql *m;     /* the connection to the lock store; NULL when there is none */
    struct mysql_group *g;  /* in a client group: its side on the loop (else NULL) */
    char token[40];         /* this client's identity (128 random bits in hex) */
    struct mysql_sm sm;
};

/* A new client for kind with a fresh token, not connected. NULL with err
 * filled. */
struct lock_client *mysql_drive_client(const struct lock_env *env, enum mysql_sm_kind kind,
                                       struct lab_err *err);

/* Whether a statement's error number says the connection is gone (the
 * client's "lost" and "cannot connect" errors, the server's "connection
 * killed"): the driver closes it and feeds mysql_sm_lost. */
bool mysql_drive_gone(int code);

/* A statement's outcome on m, as the machine reads it: query_rc the
 * query's return (non-zero: it failed), res its stored result (NULL:
 * none; freed here). */
void mysql_drive_read(struct st_mysql *m, int query_rc, struct st_mysql_res *res,
                      struct mysql_sm_result *r);

/* One process per client (lock_ops hooks, with the design's kind). */
int mysql_block_open(struct lock_client **out, const struct lock_env *env,
                     enum mysql_sm_kind kind, struct lab_err *err);
enum lock_status mysql_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err);
enum release_status mysql_block_release(struct lock_client *c, const char *key,
                                        struct lab_err *err);
void mysql_block_close(struct lock_client *c);

/* Client groups (lock_async_ops hooks, with the design's kind). */
int mysql_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                     enum mysql_sm_kind kind, lock_opened_fn opened, void *arg,
                     struct lab_err *err);
void mysql_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                         lock_acquired_fn done, void *arg);
void mysql_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                         void *arg);
void mysql_group_close(struct lock_client *c);

#endif
