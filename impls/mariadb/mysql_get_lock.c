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
 *
 * The protocol is mysql_machine.c's (MYSQL_SM_GET_LOCK), in either mode.
 */
#include "mysql_drive.h"

static int gl_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return mysql_block_open(out, env, MYSQL_SM_GET_LOCK, err);
}

static int gl_group_open(struct lock_client **out, const struct lock_env *env,
                         struct evloop *loop, lock_opened_fn opened, void *arg,
                         struct lab_err *err)
{
    return mysql_group_open(out, env, loop, MYSQL_SM_GET_LOCK, opened, arg, err);
}

static const struct lock_async_ops gl_async = {
    .client_faults = true, /* the group driver shares nothing a fault could stall */
    .open = gl_group_open,
    .acquire = mysql_group_acquire,
    .release = mysql_group_release,
    .close = mysql_group_close,
};

const struct lock_ops lock_mysql_get_lock = {
    .name = "mysql-get-lock",
    .backend = "mysql",
    .summary = "GET_LOCK(name, timeout) / RELEASE_LOCK, held by the session: freed when the "
               "client dies, kept while it is paused",
    .caps = LOCK_CAP_REENTRANT | LOCK_CAP_NOTIFIES,
    .no_fencing = "a user lock carries no ordered token",
    .open = gl_open,
    .acquire = mysql_block_acquire,
    .release = mysql_block_release,
    .close = mysql_block_close,
    .async = &gl_async,
};
