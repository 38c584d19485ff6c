/*
 * mysql_get_lock.c - MariaDB's named user locks: SELECT GET_LOCK(name, t)
 * waits inside the server up to t seconds and answers 1 (granted) or 0
 * (timed out); SELECT RELEASE_LOCK(name) answers 1 (released), 0 (held by
 * another session) or NULL (nobody holds it). The lock belongs to the
 * session: it goes when the connection closes, so a killed client's lock is
 * freed as soon as the server sees its socket close (tens of milliseconds
 * for an idle one; seconds were measured for one killed in the middle
 * of a query), while a paused client keeps it for as long as it is paused.
 * No lease, no token.
 *
 * MariaDB counts a session's nested GET_LOCK of the same name (since 10.0):
 * the lock is reentrant, and each RELEASE_LOCK gives back one hold. The
 * wait is asked for in slices of at most a second, so that a client
 * notices the end of a run. Names are prefixed with "locklab/".
 */
#include <errno.h>
#include <stdio.h>

#include "mysql_async.h"
#include "mysql_common.h"

#define SLICE_NS 1000000000LL

void mysql_get_lock_sql(char *sql, size_t n, const char *q, int64_t deadline)
{
    int64_t left = deadline - lab_now_ns();
    if (left < 0)
        left = 0;
    if (left > SLICE_NS)
        left = SLICE_NS;
    snprintf(sql, n, "SELECT GET_LOCK('locklab/%s', %.3f)", q, (double)left / 1e9);
}

void mysql_release_lock_sql(char *sql, size_t n, const char *q)
{
    snprintf(sql, n, "SELECT RELEASE_LOCK('locklab/%s')", q);
}

int mysql_get_lock_answer(const struct lock_client *c, const char *key, int64_t got,
                          bool is_null, int64_t deadline, struct lab_err *err)
{
    if (is_null) {
        lab_err_set(err, EIO, "GET_LOCK('locklab/%s') answered NULL", key);
        return LOCK_ERROR;
    }
    if (got == 1)
        return LOCK_GRANTED;
    if (*c->env->stop || lab_now_ns() >= deadline)
        return LOCK_TIMEOUT;
    return -1;
}

enum release_status mysql_release_lock_answer(int64_t got, bool is_null)
{
    return !is_null && got == 1 ? RELEASE_OK : RELEASE_NOT_OWNER;
}

static enum lock_status gl_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                   struct lab_err *err)
{
    const char *q = mysql_lock_key(c, key, err);
    if (!q)
        return LOCK_ERROR;
    int64_t deadline = lab_now_ns() + wait_ns;
    char sql[640];
    for (;;) {
        mysql_get_lock_sql(sql, sizeof sql, q, deadline);
        int64_t got;
        bool null;
        if (mysql_lock_int(c, sql, &got, &null, err) != 0)
            return LOCK_ERROR;
        int st = mysql_get_lock_answer(c, key, got, null, deadline, err);
        if (st >= 0)
            return (enum lock_status)st;
    }
}

static enum release_status gl_release(struct lock_client *c, const char *key,
                                      struct lab_err *err)
{
    const char *q = mysql_lock_key(c, key, err);
    if (!q)
        return RELEASE_ERROR;
    char sql[640];
    mysql_release_lock_sql(sql, sizeof sql, q);
    int64_t r;
    bool null;
    if (mysql_lock_int(c, sql, &r, &null, err) != 0)
        return RELEASE_ERROR;
    return mysql_release_lock_answer(r, null);
}

const struct lock_ops lock_mysql_get_lock = {
    .name = "mysql-get-lock",
    .backend = "mysql",
    .summary = "GET_LOCK(name, timeout) / RELEASE_LOCK, held by the session: freed when the "
               "client dies, kept while it is paused",
    .caps = LOCK_CAP_REENTRANT | LOCK_CAP_NOTIFIES,
    .no_fencing = "a user lock carries no ordered token",
    .open = mysql_lock_open,
    .acquire = gl_acquire,
    .release = gl_release,
    .close = mysql_lock_close,
    .async = &mysql_async_get_lock,
};
