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
 *
 * The protocol is mysql_machine.c's (MYSQL_SM_FOR_UPDATE), in either mode.
 */
#include "mysql_drive.h"

static int fu_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return mysql_block_open(out, env, MYSQL_SM_FOR_UPDATE, err);
}

static int fu_group_open(struct lock_client **out, const struct lock_env *env,
                         struct evloop *loop, lock_opened_fn opened, void *arg,
                         struct lab_err *err)
{
    return mysql_group_open(out, env, loop, MYSQL_SM_FOR_UPDATE, opened, arg, err);
}

static const struct lock_async_ops fu_async = {
    .client_faults = true, /* the group driver shares nothing a fault could stall */
    .open = fu_group_open,
    .acquire = mysql_group_acquire,
    .release = mysql_group_release,
    .close = mysql_group_close,
};

const struct lock_ops lock_mysql_for_update = {
    .name = "mysql-for-update",
    .backend = "mysql",
    .summary = "BEGIN; SELECT ... FOR UPDATE on the key's row; COMMIT releases: no lease, "
               "a paused holder blocks everyone",
    .caps = 0,
    .no_fencing = "a row lock carries no ordered token",
    .open = fu_open,
    .acquire = mysql_block_acquire,
    .release = mysql_block_release,
    .close = mysql_block_close,
    .async = &fu_async,
};
