/*
 * mysql_conn.h - opening a MariaDB connection and running one statement,
 * the few things about MariaDB that both the lock designs (impls/) and the
 * harness's own server handling need, through MariaDB Connector/C: connect
 * with a timeout as root (the embedded server has no password; an external
 * one is reached the same way), and turn every failure into a lab_err that
 * names the server and carries the server's error number as its code, so a
 * design can tell "lock wait timeout" (1205) from a broken connection.
 */
#ifndef LOCKLAB_MYSQL_CONN_H
#define LOCKLAB_MYSQL_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lab.h"

struct st_mysql;
struct st_mysql_res;

/* The database every locklab table lives in. */
#define MYSQL_CONN_DB "locklab"

/* Who every connection logs in as: root without a password (the embedded
 * server is made so; an external one must let root in the same way). */
#define MYSQL_CONN_USER "root"
#define MYSQL_CONN_PASSWORD ""

/* The tables of the MariaDB designs, created by the backend (its start
 * and every clear): the unique-index lock rows (name, owner token, expiry),
 * the rows SELECT ... FOR UPDATE locks (one per key), and the optimistic
 * design's stock with its version column. */
#define MYSQL_CONN_LOCKS "locklab_locks"
#define MYSQL_CONN_ROWS "locklab_rows"
#define MYSQL_CONN_STOCK "locklab_stock"

/* Server error numbers the designs act on. */
#define MYSQL_CONN_DUP_ENTRY 1062      /* ER_DUP_ENTRY: the unique key is taken */
#define MYSQL_CONN_LOCK_WAIT 1205      /* ER_LOCK_WAIT_TIMEOUT */
#define MYSQL_CONN_DEADLOCK 1213       /* ER_LOCK_DEADLOCK: the statement was rolled back */

/* Connect to MariaDB at host:port as root, into database db (NULL: none),
 * with a connect timeout of timeout_ms (whole seconds, at least 1) and read
 * and write timeouts of 10 s, autocommit on. Returns the handle, or NULL
 * with err filled ("cannot connect to <what> at host:port: ..."). */
struct st_mysql *mysql_conn_open(const char *what, const char *host, int port, const char *db,
                                 int timeout_ms, struct lab_err *err);

/* The first half of mysql_conn_open, for a caller that connects by itself
 * (the client groups' non-blocking connections, impls/mariadb/
 * mysql_drive_group.c): a handle with those timeouts set, not connected.
 * NULL with err filled. */
struct st_mysql *mysql_conn_new(int timeout_ms, struct lab_err *err);

/* Fill err as mysql_conn_open does when m could not connect to host:port. */
void mysql_conn_refused(struct st_mysql *m, const char *what, const char *host, int port,
                        struct lab_err *err);

/* Fill err from m's last failure ("MariaDB <what>: <the server's message>",
 * code its error number; EIO when there is none). */
void mysql_conn_error(struct st_mysql *m, const char *what, struct lab_err *err);

/* Run sql and throw away any result. Returns the rows it changed (0 for a
 * statement without), or -1 with err filled (err->code the server's error
 * number, or the client's). */
int64_t mysql_conn_exec(struct st_mysql *m, const char *sql, struct lab_err *err);

/* Run sql and read the first column of its first row as an integer into
 * *out; *is_null (may be NULL) says whether it was NULL or there was no
 * row at all (then *out is 0). 0, or -1 with err filled. */
int mysql_conn_int(struct st_mysql *m, const char *sql, int64_t *out, bool *is_null,
                   struct lab_err *err);

/* Read the first row's first n columns of result r as integers into out
 * (NULL reads as 0), *null0 (may be NULL) saying whether the first was
 * NULL or there was no row, and free r: 1 when there was a row, 0 when
 * none. */
int mysql_conn_take_ints(struct st_mysql_res *r, int64_t *out, int n, bool *null0);

/* in, escaped for a '...' string literal on connection m, into out (n
 * bytes, at least 2 * strlen(in) + 1). 0, or -1 when it does not fit. */
int mysql_conn_quote(struct st_mysql *m, const char *in, char *out, size_t n);

/* What the server says it is ("10.11.19-MariaDB-0+deb12u1"), into out. */
void mysql_conn_version(struct st_mysql *m, char *out, size_t n);

void mysql_conn_close(struct st_mysql *m);

#endif
