/*
 * mysql_for_update.c - the pessimistic row lock of the seeds (000, 003):
 * BEGIN, then SELECT ... FOR UPDATE on the key's row (one row per key in
 * MYSQL_CONN_ROWS, made by the backend's clear); the critical section is
 * the transaction, and release is COMMIT.
 *
 * InnoDB queues the waiters itself: a waiter blocks inside the server
 * until the row is free or its wait runs out (error 1205). The wait is
 * given per statement with MariaDB's `FOR UPDATE WAIT n`, in whole
 * seconds, at most 1 s at a time so that a client notices the end of a run:
 * a wait budget below a second is rounded up to one. There is no lease: a
 * holder that works or is paused for long keeps the row (and everyone
 * waits); one that dies loses its session, and the server rolls its
 * transaction back. Asked for the lock again inside its transaction, the
 * client's BEGIN commits that transaction first (MariaDB's implicit
 * commit), so the row is free for a moment: a waiter gets it while the
 * first client still thinks it holds it.
 */
#include <errno.h>
#include <stdio.h>

#include "mysql_async.h"
#include "mysql_common.h"

void mysql_for_update_sql(char *sql, size_t n, const char *q)
{
    snprintf(sql, n,
             "SELECT holder FROM " MYSQL_CONN_ROWS " WHERE name = '%s' FOR UPDATE WAIT 1", q);
}

bool mysql_for_update_lost(struct lock_client *c, struct lab_err *err)
{
    if (c->in_txn && c->m)
        return false;
    /* the connection broke since the grant: the server rolled the
     * transaction back and the row was free from then on */
    lab_err_set(err, ECONNRESET, "the transaction holding the row was lost");
    c->in_txn = false;
    return true;
}

static enum lock_status fu_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                   struct lab_err *err)
{
    const char *q = mysql_lock_key(c, key, err);
    if (!q)
        return LOCK_ERROR;
    int64_t deadline = lab_now_ns() + wait_ns;
    if (mysql_lock_exec(c, MYSQL_FOR_UPDATE_BEGIN, err) < 0)
        return LOCK_ERROR;
    c->in_txn = true;
    char sql[640];
    mysql_for_update_sql(sql, sizeof sql, q);
    for (;;) {
        int64_t holder;
        int r = mysql_lock_ints(c, sql, &holder, 1, err);
        if (r == 1)
            return LOCK_GRANTED;
        if (r == 0)
            lab_err_set(err, ENOENT, "no row '%s' in %s to lock", key, MYSQL_CONN_ROWS);
        if (r == 0 || err->code != MYSQL_CONN_LOCK_WAIT)
            break;
        if (*c->env->stop || lab_now_ns() >= deadline) {
            struct lab_err e = {0};
            mysql_lock_exec(c, "ROLLBACK", &e);
            c->in_txn = false;
            return LOCK_TIMEOUT;
        }
    }
    if (c->m) {
        struct lab_err e = {0};
        mysql_lock_exec(c, "ROLLBACK", &e);
    }
    c->in_txn = false;
    return LOCK_ERROR;
}

static enum release_status fu_release(struct lock_client *c, const char *key,
                                      struct lab_err *err)
{
    (void)key;
    if (mysql_for_update_lost(c, err))
        return RELEASE_NOT_OWNER;
    c->in_txn = false;
    return mysql_lock_exec(c, "COMMIT", err) < 0 ? RELEASE_ERROR : RELEASE_OK;
}

const struct lock_ops lock_mysql_for_update = {
    .name = "mysql-for-update",
    .backend = "mysql",
    .summary = "BEGIN; SELECT ... FOR UPDATE on the key's row; COMMIT releases: no lease, "
               "a paused holder blocks everyone",
    .caps = 0,
    .no_fencing = "a row lock carries no ordered token",
    .open = mysql_lock_open,
    .acquire = fu_acquire,
    .release = fu_release,
    .close = mysql_lock_close,
    .async = &mysql_async_for_update,
};
