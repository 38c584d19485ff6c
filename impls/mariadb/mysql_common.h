/*
 * mysql_common.h - what the MariaDB lock designs share.
 *
 * Each client holds one Connector/C connection to the lock store in
 * database MYSQL_CONN_DB (blocking; a non-blocking one in a client group,
 * impls/mariadb/mysql_async.h), a unique token, and the current key escaped for
 * SQL. A statement that finds the connection broken (the server was
 * killed or restarted by a fault) drops it, and the next statement
 * connects again, as a pooled application connection would; what the old
 * session held on the server (a GET_LOCK lock, a row lock) is gone with it,
 * and the design says so at its release. Every statement sent counts one
 * round trip.
 */
#ifndef LOCKLAB_MYSQL_COMMON_H
#define LOCKLAB_MYSQL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"
#include "mysql_conn.h"

/* How long a connection may take to come up (mysql_conn_open's timeout). */
#define MYSQL_LOCK_TIMEOUT_MS 5000

struct mysql_async; /* impls/mariadb/mysql_async.h */

struct lock_client {
    struct st_mysql *m;          /* connection to the lock store; NULL after it broke */
    struct mysql_async *as;      /* in a client group: the connection's side on the
                                    loop and the operation under way (else NULL) */
    const struct lock_env *env;  /* harness settings and counters */
    char token[40];              /* this client's identity (128 random bits in hex) */
    char key[160];               /* the key q escapes */
    char q[400];                 /* key, escaped for a '...' literal */
    int64_t version;             /* mysql-optimistic: the version its read saw */
    int64_t stock;               /* ... and the stock */
    bool in_txn;                 /* mysql-for-update: a transaction is open */
};

/* Connect to env's MariaDB with a fresh token. 0 or -1 with err filled;
 * *out is NULL on error. */
int mysql_lock_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err);

void mysql_lock_close(struct lock_client *c);

/* key, escaped (cached in c->q). NULL with err filled when it cannot be. */
const char *mysql_lock_key(struct lock_client *c, const char *key, struct lab_err *err);

/* The same on a connection that is up (c->m), without connecting. */
const char *mysql_lock_quote(struct lock_client *c, const char *key, struct lab_err *err);

/* Whether err->code says the connection is gone (the client's "lost" and
 * "cannot connect" errors, the server's "connection killed"): the
 * statement's connection is then dropped and the next one connects again. */
bool mysql_lock_broken(int code);

/* Run one statement on c's connection (connecting again first if it
 * broke): rows changed, or -1 with err filled (err->code the server's
 * error number). */
int64_t mysql_lock_exec(struct lock_client *c, const char *sql, struct lab_err *err);

/* Run one statement and read its first column as an integer (is_null:
 * NULL or no row). 0 or -1 with err filled. */
int mysql_lock_int(struct lock_client *c, const char *sql, int64_t *out, bool *is_null,
                   struct lab_err *err);

/* Run one statement and read the first row's n integers; 1 a row, 0 none,
 * -1 with err filled. */
int mysql_lock_ints(struct lock_client *c, const char *sql, int64_t *out, int n,
                    struct lab_err *err);

/* The designs' statements and what their answers mean, each defined in its
 * design's file and sent the same by its blocking hooks and by its
 * asynchronous ones (impls/mariadb/mysql_async_locks.c), so a grouped client is the
 * same client to the server. sql is n bytes (640 are enough); q is the key
 * as mysql_lock_key escapes it. */

/* mysql-get-lock: GET_LOCK for what is left of the budget until deadline,
 * at most a second; RELEASE_LOCK. */
void mysql_get_lock_sql(char *sql, size_t n, const char *q, int64_t deadline);
void mysql_release_lock_sql(char *sql, size_t n, const char *q);
/* GET_LOCK answered got (is_null: NULL): LOCK_GRANTED, LOCK_TIMEOUT (the
 * budget is spent or the run is stopping), LOCK_ERROR (err filled), or -1:
 * ask again. */
int mysql_get_lock_answer(const struct lock_client *c, const char *key, int64_t got,
                          bool is_null, int64_t deadline, struct lab_err *err);
enum release_status mysql_release_lock_answer(int64_t got, bool is_null);

/* mysql-for-update: the transaction's start, the row's locking read. */
#define MYSQL_FOR_UPDATE_BEGIN "START TRANSACTION"
void mysql_for_update_sql(char *sql, size_t n, const char *q);
/* At release: the transaction is gone (err filled, c->in_txn lowered):
 * RELEASE_NOT_OWNER, with nothing to send. */
bool mysql_for_update_lost(struct lock_client *c, struct lab_err *err);

/* mysql-unique: the INSERT, the takeover of an expired row, the DELETE by
 * owner. What the INSERT's outcome (rows changed, or -1 with err) means:
 * 1 granted, 0 taken (try again later), 2 taken: try the takeover, -1 an
 * error; and the takeover's: 1, 0 or -1. */
void mysql_unique_insert_sql(const struct lock_client *c, char *sql, size_t n, const char *q);
void mysql_unique_takeover_sql(const struct lock_client *c, char *sql, size_t n, const char *q);
void mysql_unique_delete_sql(const struct lock_client *c, char *sql, size_t n, const char *q);
int mysql_unique_inserted(int64_t n, const struct lab_err *err);
int mysql_unique_took_over(int64_t n, const struct lab_err *err);

/* A one-shot connection for the parent's hooks (stock_reset, stock_left):
 * to the first of sv, into MYSQL_CONN_DB. NULL with err filled. */
struct st_mysql *mysql_lock_admin(const struct lock_servers *sv, struct lab_err *err);

#endif
