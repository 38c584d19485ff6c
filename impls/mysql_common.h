/*
 * mysql_common.h - what the MariaDB lock designs share.
 *
 * Each client holds one blocking Connector/C connection to the lock store
 * in database MYSQL_CONN_DB, a unique token, and the current key escaped
 * for SQL. A statement that finds the connection broken (the server was
 * killed or restarted by a fault) drops it, and the next statement
 * connects again, as a pooled application connection would; what the old
 * session held on the server (a GET_LOCK lock, a row lock) is gone with it,
 * and the design says so at its release. Every statement sent counts one
 * round trip.
 */
#ifndef LOCKLAB_MYSQL_COMMON_H
#define LOCKLAB_MYSQL_COMMON_H

#include <stdbool.h>

#include "lock.h"
#include "mysql_conn.h"

struct lock_client {
    struct st_mysql *m;          /* connection to the lock store; NULL after it broke */
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

/* A one-shot connection for the parent's hooks (stock_reset, stock_left):
 * to the first of sv, into MYSQL_CONN_DB. NULL with err filled. */
struct st_mysql *mysql_lock_admin(const struct lock_servers *sv, struct lab_err *err);

#endif
