/*
 * mysql_async_locks.c - the asynchronous hooks (lock_ops.async) of
 * mysql-get-lock, mysql-for-update and mysql-unique, for client groups.
 *
 * Each is its blocking acquire and release turned into steps: one
 * statement (impls/mariadb/mysql_async.c) per step, whose answer decides the next,
 * with the statements and the meaning of their answers taken from the
 * design's own file (mysql_common.h), so the store sees the same client and
 * the harness the same outcomes and counts. What waits differs only in
 * where it waits: GET_LOCK's slices of at most a second and FOR UPDATE WAIT
 * 1 wait inside the server with the statement in flight (the loop serves
 * the other clients meanwhile), mysql-unique's pause between polls is a
 * timer on the loop. A stopping run ends a wait at once with LOCK_TIMEOUT
 * (mysql_async.c: a statement waiting in the server is dropped with its
 * connection; the poll's pause is made due, as lock_poll's sleep is cut).
 */
#include <errno.h>
#include <stdio.h>

#include "lock_poll.h"
#include "mysql_async.h"

/* ------------------------------------------------------------ outcomes */

static void acquired(struct lock_client *c, int st)
{
    struct mysql_async *a = c->as;
    lock_deliver_acquired(&a->on_acquired, a->arg, (enum lock_status)st, &a->err);
}

static void released(struct lock_client *c, enum release_status rs)
{
    struct mysql_async *a = c->as;
    lock_deliver_released(&a->on_released, a->arg, rs, &a->err);
}

/* A statement's error (rc < 0) becomes the operation's. */
static void keep_err(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    if (rc < 0 && err != &c->as->err)
        c->as->err = *err;
}

static void start_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                          lock_acquired_fn done, void *arg)
{
    struct mysql_async *a = c->as;
    a->key = key;
    a->on_acquired = done;
    a->arg = arg;
    a->attempt = 0;
    a->deadline = lab_now_ns() + wait_ns;
    a->err = (struct lab_err){0};
}

static void start_release(struct lock_client *c, const char *key, lock_released_fn done,
                          void *arg)
{
    struct mysql_async *a = c->as;
    a->key = key;
    a->on_released = done;
    a->arg = arg;
    a->err = (struct lab_err){0};
}

/* ------------------------------------------------------------ opening */

static void on_open(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    c->as->on_opened(c->as->arg, rc < 0 ? -1 : 0, err);
}

static int ma_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                   lock_opened_fn opened, void *arg, struct lab_err *err)
{
    if (mysql_async_open(out, env, loop, on_open, err) != 0)
        return -1;
    (*out)->as->on_opened = opened;
    (*out)->as->arg = arg;
    return 0;
}

/* ------------------------------------------------------------ mysql-get-lock */

static int gl_sql(struct lock_client *c, char *sql, size_t n, struct lab_err *err)
{
    const char *q = mysql_lock_quote(c, c->as->key, err);
    if (!q)
        return -1;
    mysql_get_lock_sql(sql, n, q, c->as->deadline);
    return 0;
}

static void gl_answer(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    struct mysql_async *a = c->as;
    if (rc == MYSQL_ASYNC_STOPPED) {
        acquired(c, LOCK_TIMEOUT);
        return;
    }
    if (rc < 0) {
        keep_err(c, rc, err);
        acquired(c, LOCK_ERROR);
        return;
    }
    int st = mysql_get_lock_answer(c, a->key, a->row[0], a->row_null, a->deadline, &a->err);
    if (st >= 0)
        acquired(c, st);
    else
        mysql_async_run(c, gl_sql, 1, true, gl_answer);
}

static void gl_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                       lock_acquired_fn done, void *arg)
{
    start_acquire(c, key, wait_ns, done, arg);
    mysql_async_run(c, gl_sql, 1, true, gl_answer);
}

static int gl_release_sql(struct lock_client *c, char *sql, size_t n, struct lab_err *err)
{
    const char *q = mysql_lock_quote(c, c->as->key, err);
    if (!q)
        return -1;
    mysql_release_lock_sql(sql, n, q);
    return 0;
}

static void gl_released(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    if (rc < 0) {
        keep_err(c, rc, err);
        released(c, RELEASE_ERROR);
        return;
    }
    released(c, mysql_release_lock_answer(c->as->row[0], c->as->row_null));
}

static void gl_release(struct lock_client *c, const char *key, lock_released_fn done,
                       void *arg)
{
    start_release(c, key, done, arg);
    mysql_async_run(c, gl_release_sql, 1, false, gl_released);
}

const struct lock_async_ops mysql_async_get_lock = {
    .open = ma_open,
    .acquire = gl_acquire,
    .release = gl_release,
    .close = mysql_async_close,
};

/* ------------------------------------------------------------ mysql-for-update */

static int fu_begin_sql(struct lock_client *c, char *sql, size_t n, struct lab_err *err)
{
    if (!mysql_lock_quote(c, c->as->key, err)) /* the blocking hook escapes it first too */
        return -1;
    snprintf(sql, n, "%s", MYSQL_FOR_UPDATE_BEGIN);
    return 0;
}

static int fu_row_sql(struct lock_client *c, char *sql, size_t n, struct lab_err *err)
{
    const char *q = mysql_lock_quote(c, c->as->key, err);
    if (!q)
        return -1;
    mysql_for_update_sql(sql, n, q);
    return 0;
}

static int fu_rollback_sql(struct lock_client *c, char *sql, size_t n, struct lab_err *err)
{
    (void)c, (void)err;
    snprintf(sql, n, "ROLLBACK");
    return 0;
}

static int fu_commit_sql(struct lock_client *c, char *sql, size_t n, struct lab_err *err)
{
    (void)c, (void)err;
    snprintf(sql, n, "COMMIT");
    return 0;
}

static void fu_rolled_back(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    (void)rc, (void)err; /* the outcome is the one that asked for the ROLLBACK */
    c->in_txn = false;
    acquired(c, c->as->outcome);
}

/* End the transaction with a ROLLBACK (when its connection is still
 * there), then report st. */
static void fu_give_up(struct lock_client *c, int st)
{
    c->as->outcome = st;
    if (c->m)
        mysql_async_run(c, fu_rollback_sql, 0, false, fu_rolled_back);
    else
        mysql_async_later(c, 0, fu_rolled_back);
}

static void fu_row(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    struct mysql_async *a = c->as;
    if (rc == 1) {
        acquired(c, LOCK_GRANTED);
        return;
    }
    if (rc == MYSQL_ASYNC_STOPPED) { /* the connection went, and the transaction with it */
        acquired(c, LOCK_TIMEOUT);
        return;
    }
    if (rc == 0)
        lab_err_set(&a->err, ENOENT, "no row '%s' in %s to lock", a->key, MYSQL_CONN_ROWS);
    keep_err(c, rc, err);
    if (rc == 0 || a->err.code != MYSQL_CONN_LOCK_WAIT) {
        fu_give_up(c, LOCK_ERROR);
        return;
    }
    if (*c->env->stop || lab_now_ns() >= a->deadline)
        fu_give_up(c, LOCK_TIMEOUT);
    else
        mysql_async_run(c, fu_row_sql, 1, true, fu_row);
}

static void fu_begun(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    if (rc < 0) {
        keep_err(c, rc, err);
        acquired(c, LOCK_ERROR);
        return;
    }
    c->in_txn = true;
    mysql_async_run(c, fu_row_sql, 1, true, fu_row);
}

static void fu_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                       lock_acquired_fn done, void *arg)
{
    start_acquire(c, key, wait_ns, done, arg);
    mysql_async_run(c, fu_begin_sql, 0, false, fu_begun);
}

static void fu_committed(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    keep_err(c, rc, err);
    released(c, rc < 0 ? RELEASE_ERROR : RELEASE_OK);
}

static void fu_lost(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    (void)rc, (void)err; /* a->err says how (mysql_for_update_lost) */
    released(c, RELEASE_NOT_OWNER);
}

static void fu_release(struct lock_client *c, const char *key, lock_released_fn done,
                       void *arg)
{
    start_release(c, key, done, arg);
    if (mysql_for_update_lost(c, &c->as->err)) {
        mysql_async_later(c, 0, fu_lost);
        return;
    }
    c->in_txn = false;
    mysql_async_run(c, fu_commit_sql, 0, false, fu_committed);
}

const struct lock_async_ops mysql_async_for_update = {
    .open = ma_open,
    .acquire = fu_acquire,
    .release = fu_release,
    .close = mysql_async_close,
};

/* ------------------------------------------------------------ mysql-unique */

static int un_insert_sql(struct lock_client *c, char *sql, size_t n, struct lab_err *err)
{
    const char *q = mysql_lock_quote(c, c->as->key, err);
    if (!q)
        return -1;
    mysql_unique_insert_sql(c, sql, n, q);
    return 0;
}

static int un_takeover_sql(struct lock_client *c, char *sql, size_t n, struct lab_err *err)
{
    const char *q = mysql_lock_quote(c, c->as->key, err);
    if (!q)
        return -1;
    mysql_unique_takeover_sql(c, sql, n, q);
    return 0;
}

static int un_delete_sql(struct lock_client *c, char *sql, size_t n, struct lab_err *err)
{
    const char *q = mysql_lock_quote(c, c->as->key, err);
    if (!q)
        return -1;
    mysql_unique_delete_sql(c, sql, n, q);
    return 0;
}

static void un_inserted(struct lock_client *c, int64_t rc, const struct lab_err *err);

static void un_try(struct lock_client *c)
{
    c->as->sent = lab_now_ns();
    mysql_async_run(c, un_insert_sql, 0, false, un_inserted);
}

/* One attempt's outcome, as lock_poll takes it: 1 granted, 0 taken (pause
 * and try again, or give up), -1 an error. */
static void un_attempted(struct lock_client *c, int r)
{
    struct mysql_async *a = c->as;
    if (r > 0) { /* the TTL starts at or after sent, and is sent in whole ms */
        c->env->stats->lease_floor_ns = a->sent + c->env->ttl_ns / 1000000 * 1000000;
        acquired(c, LOCK_GRANTED);
        return;
    }
    if (r < 0) {
        acquired(c, LOCK_ERROR);
        return;
    }
    c->env->stats->polls++;
    int64_t pause = lock_poll_next(c->env, a->attempt++, a->deadline, false);
    if (pause <= 0)
        acquired(c, LOCK_TIMEOUT);
    else
        evloop_timer_at(a->L, &a->pause, lab_now_ns() + pause);
}

static void un_taken_over(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    keep_err(c, rc, err);
    un_attempted(c, mysql_unique_took_over(rc, &c->as->err));
}

static void un_inserted(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    keep_err(c, rc, err);
    int r = mysql_unique_inserted(rc, &c->as->err);
    if (r == 2)
        mysql_async_run(c, un_takeover_sql, 0, false, un_taken_over);
    else
        un_attempted(c, r);
}

static void un_pause_over(struct ev_timer *t)
{
    struct mysql_async *a = (struct mysql_async *)((char *)t - offsetof(struct mysql_async, pause));
    if (*a->client->env->stop)
        acquired(a->client, LOCK_TIMEOUT);
    else
        un_try(a->client);
}

static int un_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                   lock_opened_fn opened, void *arg, struct lab_err *err)
{
    if (ma_open(out, env, loop, opened, arg, err) != 0)
        return -1;
    evloop_timer_init(&(*out)->as->pause, un_pause_over);
    return 0;
}

static void un_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                       lock_acquired_fn done, void *arg)
{
    start_acquire(c, key, wait_ns, done, arg);
    un_try(c);
}

static void un_deleted(struct lock_client *c, int64_t rc, const struct lab_err *err)
{
    keep_err(c, rc, err);
    released(c, rc < 0 ? RELEASE_ERROR : rc == 1 ? RELEASE_OK : RELEASE_NOT_OWNER);
}

static void un_release(struct lock_client *c, const char *key, lock_released_fn done,
                       void *arg)
{
    start_release(c, key, done, arg);
    mysql_async_run(c, un_delete_sql, 0, false, un_deleted);
}

const struct lock_async_ops mysql_async_unique = {
    .open = un_open,
    .acquire = un_acquire,
    .release = un_release,
    .close = mysql_async_close,
};
