/*
 * mysql_drive_block.c - the per-process driver of the MariaDB state
 * machine (mysql_drive.h): the machine's acts on one blocking Connector/C
 * connection, and what both drivers share (a client, a statement's outcome
 * read for the machine, which errors mean the connection is gone).
 *
 * CONNECT is mysql_conn_open (with the connect timeout of
 * MYSQL_LOCK_TIMEOUT_MS and mysql_conn.h's read and write timeouts), SEND
 * one mysql_real_query and its whole result (mysql_store_result), SLEEP a
 * sleep cut short by the run's stop. A statement waiting in the server is
 * never given up here: its wait is at most a second (the machine's slice).
 * The loop ends when the machine says DONE.
 */
#include "mysql_drive.h"

#include <errno.h>
#include <mysql.h>
#include <stdlib.h>
#include <string.h>

/* Client-side error numbers of a connection that is gone (errmsg.h):
 * CR_CONNECTION_ERROR, CR_CONN_HOST_ERROR, CR_SERVER_GONE_ERROR,
 * CR_SERVER_LOST; and the server's ER_CONNECTION_KILLED. */
bool mysql_drive_gone(int code)
{
    return code == 2002 || code == 2003 || code == 2006 || code == 2013 || code == 1927;
}

void mysql_drive_read(MYSQL *m, int query_rc, MYSQL_RES *res, struct mysql_sm_result *r)
{
    memset(r, 0, sizeof *r);
    if (query_rc != 0)
        mysql_conn_error(m, "query", &r->err);
    else if (res)
        r->row = mysql_conn_take_ints(res, r->v, 2, &r->null0) == 1;
    else if (mysql_field_count(m) != 0)
        mysql_conn_error(m, "result", &r->err);
    else
        r->affected = (int64_t)mysql_affected_rows(m);
}

struct lock_client *mysql_drive_client(const struct lock_env *env, enum mysql_sm_kind kind,
                                       struct lab_err *err)
{
    if (env->servers->n < 1) {
        lab_err_set(err, EINVAL, "no MariaDB server to talk to");
        return NULL;
    }
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    int rc = lab_random_hex(c->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        free(c);
        return NULL;
    }
    c->env = env;
    mysql_sm_init(&c->sm, kind, env, c->token);
    return c;
}

/* Do the machine's acts until it is done. */
static void run(struct lock_client *c, enum mysql_sm_act act)
{
    struct mysql_sm *sm = &c->sm;
    while (act != MYSQL_SM_DONE) {
        switch (act) {
        case MYSQL_SM_CONNECT: {
            struct lab_err err = {0};
            const struct lock_endpoint *at = &c->env->servers->node[0];
            mysql_conn_close(c->m);
            c->m = mysql_conn_open("the MariaDB lock store", at->host, at->port, MYSQL_CONN_DB,
                                   MYSQL_LOCK_TIMEOUT_MS, &err);
            act = mysql_sm_connected(sm, c->m != NULL, &err, lab_now_ns());
            break;
        }
        case MYSQL_SM_SEND: {
            struct mysql_sm_result r;
            int q = mysql_real_query(c->m, sm->sql, strlen(sm->sql));
            mysql_drive_read(c->m, q, q ? NULL : mysql_store_result(c->m), &r);
            if (r.err.code && mysql_drive_gone(r.err.code)) {
                mysql_conn_close(c->m);
                c->m = NULL;
                act = mysql_sm_lost(sm, &r.err, lab_now_ns());
            } else {
                act = mysql_sm_result(sm, &r, lab_now_ns());
            }
            break;
        }
        case MYSQL_SM_SLEEP: {
            int64_t left = sm->wake_at - lab_now_ns();
            if (left > 0)
                lab_sleep_ns(left, c->env->stop);
            act = mysql_sm_timer(sm, lab_now_ns());
            break;
        }
        case MYSQL_SM_DONE:
            break;
        }
    }
}

int mysql_block_open(struct lock_client **out, const struct lock_env *env,
                     enum mysql_sm_kind kind, struct lab_err *err)
{
    *out = mysql_drive_client(env, kind, err);
    if (!*out)
        return -1;
    run(*out, mysql_sm_open(&(*out)->sm, lab_now_ns()));
    if ((*out)->sm.open_rc != 0) {
        *err = (*out)->sm.err;
        mysql_block_close(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

enum lock_status mysql_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err)
{
    run(c, mysql_sm_acquire(&c->sm, key, wait_ns, lab_now_ns()));
    if (c->sm.status == LOCK_ERROR)
        *err = c->sm.err;
    return c->sm.status;
}

enum release_status mysql_block_release(struct lock_client *c, const char *key,
                                        struct lab_err *err)
{
    run(c, mysql_sm_release(&c->sm, key, lab_now_ns()));
    if (c->sm.release != RELEASE_OK)
        *err = c->sm.err;
    return c->sm.release;
}

void mysql_block_close(struct lock_client *c)
{
    if (!c)
        return;
    mysql_conn_close(c->m);
    free(c);
}
