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
 *
 * The protocol is mysql_machine.c's (MYSQL_SM_UNIQUE), in either mode.
 */
#include "mysql_drive.h"

static int un_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return mysql_block_open(out, env, MYSQL_SM_UNIQUE, err);
}

static int un_group_open(struct lock_client **out, const struct lock_env *env,
                         struct evloop *loop, lock_opened_fn opened, void *arg,
                         struct lab_err *err)
{
    return mysql_group_open(out, env, loop, MYSQL_SM_UNIQUE, opened, arg, err);
}

static const struct lock_async_ops un_async = {
    .client_faults = true, /* the group driver shares nothing a fault could stall */
    .open = un_group_open,
    .acquire = mysql_group_acquire,
    .release = mysql_group_release,
    .close = mysql_group_close,
};

const struct lock_ops lock_mysql_unique = {
    .name = "mysql-unique",
    .backend = "mysql",
    .summary = "INSERT into a unique key with owner and expiry, conditional UPDATE takeover, "
               "DELETE by owner: breaks when business time > TTL",
    .caps = LOCK_CAP_TTL,
    .no_fencing = "the row carries no ordered token",
    .open = un_open,
    .acquire = mysql_block_acquire,
    .release = mysql_block_release,
    .close = mysql_block_close,
    .async = &un_async,
};
