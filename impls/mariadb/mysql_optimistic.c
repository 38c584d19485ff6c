/*
 * mysql_optimistic.c - the seeds' (000) optimistic "version" lock, which is
 * not a lock but its alternative: every buyer reads the stock and its
 * version, does its business, and writes
 *   UPDATE ... SET stock = stock - 1, version = version + 1
 *   WHERE name = key AND version = <the version it read>
 * A write that changes no row lost to another buyer's write since the read:
 * a conflict, and the buyer starts over (the harness's next cycle).
 *
 * In the lab's interface (lock.h, LOCK_CAP_OPTIMISTIC): acquire is the
 * read and never waits; release is the conditional write, RELEASE_OK when
 * it sold the unit and RELEASE_NOT_OWNER on a conflict (counted as a poll:
 * the retries). The stock lives in this design's own table
 * (MYSQL_CONN_STOCK), not in the harness's stock store: the harness sets
 * and reads it through stock_reset and stock_left, and judges the design by
 * the damage alone, since several buyers are inside at once by design. A
 * read that finds nothing left writes nothing.
 *
 * The protocol is mysql_machine.c's (MYSQL_SM_OPTIMISTIC). It runs one
 * process per client and in client groups (the group's workload runs the
 * business on the stock the read found, as one process's does).
 */
#include <errno.h>
#include <stdio.h>

#include "mysql_drive.h"

static int opt_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return mysql_block_open(out, env, MYSQL_SM_OPTIMISTIC, err);
}

static int opt_group_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    return mysql_group_open(out, env, loop, MYSQL_SM_OPTIMISTIC, opened, arg, err);
}

static const struct lock_async_ops opt_async = {
    .client_faults = true, /* the group driver shares nothing a fault could stall */
    .open = opt_group_open,
    .acquire = mysql_group_acquire,
    .release = mysql_group_release,
    .close = mysql_group_close,
};

/* The parent's one-shot connection: the stock under key, read (*left) or
 * set (left NULL: to stock). */
static int opt_stock(const struct lock_servers *sv, const char *key, int64_t stock,
                     int64_t *left, struct lab_err *err)
{
    if (sv->n < 1) {
        lab_err_set(err, EINVAL, "no MariaDB server to talk to");
        return -1;
    }
    struct st_mysql *m = mysql_conn_open("the MariaDB lock store", sv->node[0].host,
                                         sv->node[0].port, MYSQL_CONN_DB, MYSQL_LOCK_TIMEOUT_MS, err);
    if (!m)
        return -1;
    char q[400], sql[700];
    bool none = false;
    int rc = -1;
    if (mysql_conn_quote(m, key, q, sizeof q) != 0) {
        lab_err_set(err, ENAMETOOLONG, "lock key too long");
    } else if (left) {
        snprintf(sql, sizeof sql, "SELECT stock FROM " MYSQL_CONN_STOCK " WHERE name = '%s'", q);
        rc = mysql_conn_int(m, sql, left, &none, err);
        if (rc == 0 && none) {
            lab_err_set(err, ENOENT, "no stock row '%s' after the run", key);
            rc = -1;
        }
    } else {
        snprintf(sql, sizeof sql,
                 "REPLACE INTO " MYSQL_CONN_STOCK " (name, stock, version) VALUES ('%s', %lld, 0)",
                 q, (long long)stock);
        rc = mysql_conn_exec(m, sql, err) < 0 ? -1 : 0;
    }
    mysql_conn_close(m);
    return rc;
}

static int opt_stock_reset(const struct lock_servers *sv, const char *key, int64_t stock,
                           struct lab_err *err)
{
    return opt_stock(sv, key, stock, NULL, err);
}

static int opt_stock_left(const struct lock_servers *sv, const char *key, int64_t *left,
                          struct lab_err *err)
{
    return opt_stock(sv, key, 0, left, err);
}

const struct lock_ops lock_mysql_optimistic = {
    .name = "mysql-optimistic",
    .backend = "mysql",
    .summary = "not a lock: read stock and version, UPDATE ... WHERE version = read, retry on "
               "0 rows (stock workload only; judged by the damage)",
    .caps = LOCK_CAP_OPTIMISTIC,
    .no_fencing = "the version check is its own fence",
    .open = opt_open,
    .acquire = mysql_block_acquire,
    .release = mysql_block_release,
    .close = mysql_block_close,
    .async = &opt_async,
    .stock_reset = opt_stock_reset,
    .stock_left = opt_stock_left,
};
