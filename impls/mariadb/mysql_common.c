/*
 * mysql_common.c - connection, token, key escaping and statement counting
 * for the MariaDB designs (see mysql_common.h).
 */
#include "mysql_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Client-side error numbers of a connection that is gone (errmsg.h):
 * CR_CONNECTION_ERROR, CR_CONN_HOST_ERROR, CR_SERVER_GONE_ERROR,
 * CR_SERVER_LOST; and the server's ER_CONNECTION_KILLED. */
bool mysql_lock_broken(int code)
{
    return code == 2002 || code == 2003 || code == 2006 || code == 2013 || code == 1927;
}

static int ensure(struct lock_client *c, struct lab_err *err)
{
    if (c->m)
        return 0;
    const struct lock_endpoint *at = &c->env->servers->node[0];
    c->m = mysql_conn_open("the MariaDB lock store", at->host, at->port, MYSQL_CONN_DB,
                           MYSQL_LOCK_TIMEOUT_MS, err);
    c->in_txn = false;
    return c->m ? 0 : -1;
}

static void after(struct lock_client *c, int rc, const struct lab_err *err)
{
    if (rc < 0 && mysql_lock_broken(err->code)) {
        mysql_conn_close(c->m);
        c->m = NULL;
        c->in_txn = false;
    }
}

int mysql_lock_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    if (lab_random_hex(c->token, 16) != 0) {
        lab_err_set(err, EIO, "no random bytes for a token");
        free(c);
        return -1;
    }
    if (env->servers->n < 1) {
        lab_err_set(err, EINVAL, "no MariaDB server to talk to");
        free(c);
        return -1;
    }
    if (ensure(c, err) != 0) {
        free(c);
        return -1;
    }
    *out = c;
    return 0;
}

void mysql_lock_close(struct lock_client *c)
{
    if (!c)
        return;
    mysql_conn_close(c->m);
    free(c);
}

const char *mysql_lock_quote(struct lock_client *c, const char *key, struct lab_err *err)
{
    if (strcmp(key, c->key) == 0 && c->key[0])
        return c->q;
    if (strlen(key) >= sizeof c->key || mysql_conn_quote(c->m, key, c->q, sizeof c->q) != 0) {
        lab_err_set(err, ENAMETOOLONG, "lock key '%.40s...' is too long", key);
        c->key[0] = '\0';
        return NULL;
    }
    snprintf(c->key, sizeof c->key, "%s", key);
    return c->q;
}

const char *mysql_lock_key(struct lock_client *c, const char *key, struct lab_err *err)
{
    if (strcmp(key, c->key) == 0 && c->key[0])
        return c->q;
    if (ensure(c, err) != 0)
        return NULL;
    return mysql_lock_quote(c, key, err);
}

int64_t mysql_lock_exec(struct lock_client *c, const char *sql, struct lab_err *err)
{
    if (ensure(c, err) != 0)
        return -1;
    c->env->stats->round_trips++;
    int64_t rc = mysql_conn_exec(c->m, sql, err);
    after(c, rc < 0 ? -1 : 0, err);
    return rc;
}

int mysql_lock_int(struct lock_client *c, const char *sql, int64_t *out, bool *is_null,
                   struct lab_err *err)
{
    if (ensure(c, err) != 0)
        return -1;
    c->env->stats->round_trips++;
    int rc = mysql_conn_int(c->m, sql, out, is_null, err);
    after(c, rc, err);
    return rc;
}

int mysql_lock_ints(struct lock_client *c, const char *sql, int64_t *out, int n,
                    struct lab_err *err)
{
    if (ensure(c, err) != 0)
        return -1;
    c->env->stats->round_trips++;
    int rc = mysql_conn_ints(c->m, sql, out, n, err);
    after(c, rc, err);
    return rc;
}

struct st_mysql *mysql_lock_admin(const struct lock_servers *sv, struct lab_err *err)
{
    if (sv->n < 1) {
        lab_err_set(err, EINVAL, "no MariaDB server to talk to");
        return NULL;
    }
    return mysql_conn_open("the MariaDB lock store", sv->node[0].host, sv->node[0].port,
                           MYSQL_CONN_DB, MYSQL_LOCK_TIMEOUT_MS, err);
}
