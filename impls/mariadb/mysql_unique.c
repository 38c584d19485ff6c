/*
 * mysql_unique.c - the unique-index lock of the seeds (000): INSERT a row
 * whose primary key is the lock's name, with the owner's token and an
 * expiry; a duplicate-key error means someone holds it, and the waiter
 * polls (lock.retry_interval, or backoff, as every polling design). The
 * expiry is the lease (lock.ttl), kept by the server's clock: a row whose
 * expiry has passed is taken over by a conditional UPDATE that only a row
 * still expired matches, so two waiters never both take it over. Release
 * deletes the row only where the owner is still this client.
 *
 * What it cannot survive is what redis-lua cannot: a holder working (or
 * paused) past its lease loses the row to a waiter while it still believes
 * it holds it. It is not reentrant: the owner's second INSERT collides with
 * its own row and waits out its budget. The lock lives in one server: a
 * single point of failure.
 */
#include <stdio.h>

#include "lock_poll.h"
#include "mysql_async.h"
#include "mysql_common.h"

/* The lease in whole milliseconds, as lock_poll counts it, in microseconds. */
static long long ttl_us(const struct lock_client *c)
{
    return (long long)(c->env->ttl_ns / 1000000) * 1000;
}

void mysql_unique_insert_sql(const struct lock_client *c, char *sql, size_t n, const char *q)
{
    snprintf(sql, n,
             "INSERT INTO " MYSQL_CONN_LOCKS " (name, owner, expires_at) VALUES "
             "('%s', '%s', NOW(6) + INTERVAL %lld MICROSECOND)",
             q, c->token, ttl_us(c));
}

void mysql_unique_takeover_sql(const struct lock_client *c, char *sql, size_t n, const char *q)
{
    snprintf(sql, n,
             "UPDATE " MYSQL_CONN_LOCKS " SET owner = '%s', expires_at = NOW(6) + INTERVAL "
             "%lld MICROSECOND WHERE name = '%s' AND expires_at < NOW(6)",
             c->token, ttl_us(c), q);
}

void mysql_unique_delete_sql(const struct lock_client *c, char *sql, size_t n, const char *q)
{
    snprintf(sql, n, "DELETE FROM " MYSQL_CONN_LOCKS " WHERE name = '%s' AND owner = '%s'", q,
             c->token);
}

int mysql_unique_inserted(int64_t n, const struct lab_err *err)
{
    if (n == 1)
        return 1;
    /* InnoDB may pick this INSERT as a deadlock victim when it races a
     * DELETE of the same key: nothing was written, it is one more try */
    if (n < 0 && err->code == MYSQL_CONN_DEADLOCK)
        return 0;
    if (n < 0 && err->code != MYSQL_CONN_DUP_ENTRY)
        return -1;
    return 2; /* taken: take it over only if its lease has run out */
}

int mysql_unique_took_over(int64_t n, const struct lab_err *err)
{
    if (n < 0 && (err->code == MYSQL_CONN_DEADLOCK || err->code == MYSQL_CONN_LOCK_WAIT))
        return 0;
    return n < 0 ? -1 : n == 1;
}

static int unique_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    const char *q = mysql_lock_key(c, key, err);
    if (!q)
        return -1;
    char sql[1024];
    mysql_unique_insert_sql(c, sql, sizeof sql, q);
    int r = mysql_unique_inserted(mysql_lock_exec(c, sql, err), err);
    if (r != 2)
        return r;
    mysql_unique_takeover_sql(c, sql, sizeof sql, q);
    return mysql_unique_took_over(mysql_lock_exec(c, sql, err), err);
}

static enum lock_status unique_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                       struct lab_err *err)
{
    return lock_poll(c->env, unique_try, c, key, wait_ns, err);
}

static enum release_status unique_release(struct lock_client *c, const char *key,
                                          struct lab_err *err)
{
    const char *q = mysql_lock_key(c, key, err);
    if (!q)
        return RELEASE_ERROR;
    char sql[640];
    mysql_unique_delete_sql(c, sql, sizeof sql, q);
    int64_t n = mysql_lock_exec(c, sql, err);
    return n < 0 ? RELEASE_ERROR : n == 1 ? RELEASE_OK : RELEASE_NOT_OWNER;
}

const struct lock_ops lock_mysql_unique = {
    .name = "mysql-unique",
    .backend = "mysql",
    .summary = "INSERT into a unique key with owner and expiry, conditional UPDATE takeover, "
               "DELETE by owner: breaks when business time > TTL",
    .caps = LOCK_CAP_TTL,
    .no_fencing = "the row carries no ordered token",
    .open = mysql_lock_open,
    .acquire = unique_acquire,
    .release = unique_release,
    .close = mysql_lock_close,
    .async = &mysql_async_unique,
};
