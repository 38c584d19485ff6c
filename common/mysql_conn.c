/*
 * mysql_conn.c - MariaDB connections and one-statement helpers (see
 * mysql_conn.h). Every statement is sent as text with mysql_real_query and
 * every result read whole with mysql_store_result: the designs send one
 * short statement per round trip and read at most one row, so prepared
 * statements would save nothing the round trip does not dwarf.
 */
#include "mysql_conn.h"

#include <errno.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mysql_conn_error(MYSQL *m, const char *what, struct lab_err *err)
{
    unsigned code = mysql_errno(m);
    lab_err_set(err, code ? (int)code : EIO, "MariaDB %s: %s", what,
                code ? mysql_error(m) : "no result");
}

MYSQL *mysql_conn_new(int timeout_ms, struct lab_err *err)
{
    MYSQL *m = mysql_init(NULL);
    if (!m) {
        lab_err_set(err, ENOMEM, "out of memory for a MariaDB connection");
        return NULL;
    }
    unsigned connect_s = (unsigned)((timeout_ms + 999) / 1000), rw_s = 10;
    if (connect_s < 1)
        connect_s = 1;
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &connect_s);
    mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &rw_s);
    mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &rw_s);
    return m;
}

void mysql_conn_refused(MYSQL *m, const char *what, const char *host, int port,
                        struct lab_err *err)
{
    lab_err_set(err, mysql_errno(m) ? (int)mysql_errno(m) : ECONNREFUSED,
                "cannot connect to %s at %s:%d: %s", what, host, port, mysql_error(m));
}

MYSQL *mysql_conn_open(const char *what, const char *host, int port, const char *db,
                       int timeout_ms, struct lab_err *err)
{
    MYSQL *m = mysql_conn_new(timeout_ms, err);
    if (!m)
        return NULL;
    if (!mysql_real_connect(m, host, MYSQL_CONN_USER, MYSQL_CONN_PASSWORD, db, (unsigned)port, NULL, 0)) {
        mysql_conn_refused(m, what, host, port, err);
        mysql_close(m);
        return NULL;
    }
    return m;
}

int64_t mysql_conn_exec(MYSQL *m, const char *sql, struct lab_err *err)
{
    if (mysql_real_query(m, sql, strlen(sql)) != 0) {
        mysql_conn_error(m, "query", err);
        return -1;
    }
    int64_t changed = 0;
    do { /* drain every result, as a multi-statement string may give several */
        MYSQL_RES *r = mysql_store_result(m);
        if (r)
            mysql_free_result(r);
        else if (mysql_field_count(m) != 0) {
            mysql_conn_error(m, "result", err);
            return -1;
        } else
            changed += (int64_t)mysql_affected_rows(m);
    } while (mysql_next_result(m) == 0);
    if (mysql_errno(m)) {
        mysql_conn_error(m, "query", err);
        return -1;
    }
    return changed;
}

/* Run sql and take its whole result (NULL with err filled). */
static MYSQL_RES *query_result(MYSQL *m, const char *sql, struct lab_err *err)
{
    if (mysql_real_query(m, sql, strlen(sql)) != 0) {
        mysql_conn_error(m, "query", err);
        return NULL;
    }
    MYSQL_RES *r = mysql_store_result(m);
    if (!r)
        mysql_conn_error(m, "result", err);
    return r;
}

int mysql_conn_take_ints(MYSQL_RES *r, int64_t *out, int n, bool *null0)
{
    MYSQL_ROW row = mysql_fetch_row(r);
    int got = row != NULL;
    for (int i = 0; i < n; i++)
        out[i] = row && i < (int)mysql_num_fields(r) && row[i] ? strtoll(row[i], NULL, 10) : 0;
    if (null0)
        *null0 = !row || !row[0];
    mysql_free_result(r);
    return got;
}

int mysql_conn_int(MYSQL *m, const char *sql, int64_t *out, bool *is_null, struct lab_err *err)
{
    MYSQL_RES *r = query_result(m, sql, err);
    if (!r)
        return -1;
    mysql_conn_take_ints(r, out, 1, is_null);
    return 0;
}

int mysql_conn_quote(MYSQL *m, const char *in, char *out, size_t n)
{
    size_t len = strlen(in);
    if (n < 2 * len + 1)
        return -1;
    mysql_real_escape_string(m, out, in, (unsigned long)len);
    return 0;
}

void mysql_conn_version(MYSQL *m, char *out, size_t n)
{
    const char *v = mysql_get_server_info(m);
    snprintf(out, n, "%s", v ? v : "");
}

void mysql_conn_close(MYSQL *m)
{
    if (m)
        mysql_close(m);
}
