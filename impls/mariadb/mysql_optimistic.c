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
 */
#include <errno.h>
#include <stdio.h>

#include "mysql_common.h"

static enum lock_status opt_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err)
{
    (void)wait_ns;
    const char *q = mysql_lock_key(c, key, err);
    if (!q)
        return LOCK_ERROR;
    char sql[640];
    snprintf(sql, sizeof sql,
             "SELECT stock, version FROM " MYSQL_CONN_STOCK " WHERE name = '%s'", q);
    int64_t row[2];
    int r = mysql_lock_ints(c, sql, row, 2, err);
    if (r < 0)
        return LOCK_ERROR;
    if (r == 0) {
        lab_err_set(err, ENOENT, "no stock row '%s' in %s", key, MYSQL_CONN_STOCK);
        return LOCK_ERROR;
    }
    c->stock = row[0];
    c->version = row[1];
    c->env->stats->read_stock = row[0];
    return LOCK_GRANTED;
}

static enum release_status opt_release(struct lock_client *c, const char *key,
                                       struct lab_err *err)
{
    if (c->stock <= 0)
        return RELEASE_OK; /* sold out at the read: nothing to write */
    const char *q = mysql_lock_key(c, key, err);
    if (!q)
        return RELEASE_ERROR;
    char sql[700];
    snprintf(sql, sizeof sql,
             "UPDATE " MYSQL_CONN_STOCK " SET stock = stock - 1, version = version + 1 "
             "WHERE name = '%s' AND version = %lld",
             q, (long long)c->version);
    int64_t n = mysql_lock_exec(c, sql, err);
    if (n < 0)
        return RELEASE_ERROR;
    if (n == 0)
        c->env->stats->polls++; /* a conflict: the unit is retried */
    return n == 1 ? RELEASE_OK : RELEASE_NOT_OWNER;
}

static int opt_stock_reset(const struct lock_servers *sv, const char *key, int64_t stock,
                           struct lab_err *err)
{
    struct st_mysql *m = mysql_lock_admin(sv, err);
    if (!m)
        return -1;
    char q[400], sql[700];
    int rc = -1;
    if (mysql_conn_quote(m, key, q, sizeof q) != 0)
        lab_err_set(err, ENAMETOOLONG, "lock key too long");
    else {
        snprintf(sql, sizeof sql,
                 "REPLACE INTO " MYSQL_CONN_STOCK " (name, stock, version) VALUES ('%s', %lld, 0)",
                 q, (long long)stock);
        rc = mysql_conn_exec(m, sql, err) < 0 ? -1 : 0;
    }
    mysql_conn_close(m);
    return rc;
}

static int opt_stock_left(const struct lock_servers *sv, const char *key, int64_t *left,
                          struct lab_err *err)
{
    struct st_mysql *m = mysql_lock_admin(sv, err);
    if (!m)
        return -1;
    char q[400], sql[640];
    int rc = -1;
    if (mysql_conn_quote(m, key, q, sizeof q) != 0)
        lab_err_set(err, ENAMETOOLONG, "lock key too long");
    else {
        snprintf(sql, sizeof sql, "SELECT stock FROM " MYSQL_CONN_STOCK " WHERE name = '%s'", q);
        int r = mysql_conn_ints(m, sql, left, 1, err);
        if (r == 0)
            lab_err_set(err, ENOENT, "no stock row '%s' after the run", key);
        rc = r == 1 ? 0 : -1;
    }
    mysql_conn_close(m);
    return rc;
}

const struct lock_ops lock_mysql_optimistic = {
    .name = "mysql-optimistic",
    .backend = "mysql",
    .summary = "not a lock: read stock and version, UPDATE ... WHERE version = read, retry on "
               "0 rows (stock workload only; judged by the damage)",
    .caps = LOCK_CAP_OPTIMISTIC,
    .no_fencing = "the version check is its own fence",
    .open = mysql_lock_open,
    .acquire = opt_acquire,
    .release = opt_release,
    .close = mysql_lock_close,
    .stock_reset = opt_stock_reset,
    .stock_left = opt_stock_left,
};
