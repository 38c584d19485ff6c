/*
 * backend_mysql.c - the MariaDB store table (see backend.h): one embedded
 * server (servers_mysql.c) or the user's --mysql, holding database
 * MYSQL_CONN_DB with the designs' three tables (mysql_conn.h), created at
 * start and again by every clear (an external server may have lost them).
 *
 * A run starts clean: clear ends every other session on database
 * MYSQL_CONN_DB (a client killed in the run before may still own a
 * GET_LOCK lock or a row lock until the server notices its socket closed,
 * seconds for one killed in the middle of a query), deletes the run's keys
 * from the unique-index table and makes sure the FOR UPDATE rows exist.
 * Operations are the server's Questions counter (statements clients sent).
 * The one server is the fault role "mysql": pause, kill, restart.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "scenario.h"
#include "mysql_conn.h"
#include "region.h"
#include "servers_mysql.h"

/* This invocation's MariaDB: what was planned and what runs. */
/* The role a fault may target, spelled here only (roles() uses it). */
static const struct backend_role_name mysql_role_names[] = {
    {"mysql", 0, false, true}, /* the MariaDB lock store (hosts: may place it) */
    {NULL, 0, false, false},
};

static struct {
    bool needed;              /* a planned design uses it */
    bool external;            /* the user's server */
    struct lock_endpoint at;  /* where it is */
    struct server srv;        /* the embedded server (pid 0 when external) */
    int64_t install_ns;       /* mariadb-install-db */
    int64_t startup_ns;       /* install-db + start until it answered */
    char version[64];         /* what the server says it is */
} md;

static const char *const schema[] = {
    "CREATE DATABASE IF NOT EXISTS " MYSQL_CONN_DB,
    "CREATE TABLE IF NOT EXISTS " MYSQL_CONN_DB "." MYSQL_CONN_LOCKS
    " (name VARCHAR(191) NOT NULL PRIMARY KEY, owner VARCHAR(64) NOT NULL,"
    " expires_at DATETIME(6) NOT NULL) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS " MYSQL_CONN_DB "." MYSQL_CONN_ROWS
    " (name VARCHAR(191) NOT NULL PRIMARY KEY, holder INT NOT NULL DEFAULT 0) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS " MYSQL_CONN_DB "." MYSQL_CONN_STOCK
    " (name VARCHAR(191) NOT NULL PRIMARY KEY, stock BIGINT NOT NULL,"
    " version BIGINT NOT NULL) ENGINE=InnoDB",
    NULL};

static struct st_mysql *admin_open(struct lab_err *err)
{
    return mysql_conn_open("the MariaDB lock store", md.at.host, md.at.port, NULL, 5000, err);
}

static int create_schema(struct st_mysql *m, struct lab_err *err)
{
    for (int i = 0; schema[i]; i++)
        if (mysql_conn_exec(m, schema[i], err) < 0)
            return -1;
    return 0;
}

static int mysql_check_external(const char *addr, struct lab_err *err)
{
    return backend_check_hostport(addr, "MariaDB", err);
}

static void mysql_plan(const struct scenario *s, const struct lock_ops *ops)
{
    (void)s, (void)ops;
    md.needed = true;
}

static void mysql_stop(void)
{
    servers_stop(&md.srv);
    memset(&md, 0, sizeof md);
}

static int mysql_start(const char *external, const volatile int *stop, struct lab_err *err)
{
    if (!md.needed || md.at.port)
        return 0;
    if (external) {
        if (mysql_check_external(external, err) != 0)
            return -1;
        lab_parse_hostport(external, md.at.host, sizeof md.at.host, &md.at.port);
        md.external = true;
    } else {
        snprintf(md.srv.place, sizeof md.srv.place, "%s", mysql_role_names[0].name);
        if (servers_mysql_start(&md.srv, stop, &md.install_ns, &md.startup_ns, err) != 0)
            return -1;
        snprintf(md.at.host, sizeof md.at.host, "%s", md.srv.host);
        md.at.port = md.srv.port;
    }
    struct st_mysql *m = admin_open(err);
    if (!m)
        return -1;
    int rc = create_schema(m, err);
    if (rc == 0)
        mysql_conn_version(m, md.version, sizeof md.version);
    mysql_conn_close(m);
    return rc;
}

static void mysql_servers(const struct lock_ops *ops, const struct scenario *s,
                          struct lock_servers *out)
{
    (void)ops, (void)s;
    memset(out, 0, sizeof *out);
    out->n = 1;
    out->node[0] = md.at;
    backend_fill_conn(out);
}

/* End every session on MYSQL_CONN_DB but m's own: what a client of an
 * earlier run still holds (GET_LOCK locks, row locks, transactions) goes
 * with it. 0 or -1 with err filled. */
static int kill_leftovers(struct st_mysql *m, struct lab_err *err)
{
    for (int round = 0; round < 100; round++) {
        int64_t id = 0;
        bool none = false;
        if (mysql_conn_int(m,
                           "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '" MYSQL_CONN_DB
                           "' AND ID <> CONNECTION_ID() AND COMMAND <> 'Killed' LIMIT 1",
                           &id, &none, err) != 0)
            return -1;
        if (none)
            return 0;
        char sql[64];
        snprintf(sql, sizeof sql, "KILL CONNECTION %lld", (long long)id);
        struct lab_err e = {0};
        if (mysql_conn_exec(m, sql, &e) < 0 && e.code != 1094 /* ER_NO_SUCH_THREAD: gone */) {
            *err = e;
            return -1;
        }
    }
    lab_err_set(err, EBUSY, "sessions on database %s keep coming back", MYSQL_CONN_DB);
    return -1;
}

static int mysql_clear(const struct lock_servers *sv, const struct scenario *s,
                       struct lab_err *err)
{
    (void)sv;
    struct st_mysql *m = admin_open(err);
    if (!m)
        return -1;
    int rc = create_schema(m, err) == 0 && kill_leftovers(m, err) == 0 ? 0 : -1;
    int n_keys = s->per_client_keys ? s->clients : 1;
    char key[160], q[400], sql[1024];
    for (int k = 0; rc == 0 && k < n_keys; k++) {
        scenario_key_of(s, k, key, sizeof key);
        mysql_conn_quote(m, key, q, sizeof q);
        snprintf(sql, sizeof sql,
                 "DELETE FROM " MYSQL_CONN_DB "." MYSQL_CONN_LOCKS " WHERE name = '%s'", q);
        if (mysql_conn_exec(m, sql, err) < 0)
            rc = -1;
        snprintf(sql, sizeof sql,
                 "INSERT IGNORE INTO " MYSQL_CONN_DB "." MYSQL_CONN_ROWS " (name) VALUES ('%s')", q);
        if (rc == 0 && mysql_conn_exec(m, sql, err) < 0)
            rc = -1;
    }
    mysql_conn_close(m);
    return rc;
}

static int mysql_server_ops(const struct lock_servers *sv, int64_t *ops_served,
                            struct lab_err *err)
{
    (void)sv;
    *ops_served = 0;
    struct st_mysql *m = admin_open(err);
    if (!m)
        return -1;
    int rc = mysql_conn_int(m,
                            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
                            "WHERE VARIABLE_NAME = 'QUESTIONS'",
                            ops_served, NULL, err);
    mysql_conn_close(m);
    return rc;
}

static json_t *mysql_describe(const struct lock_ops *ops, const struct scenario *s)
{
    (void)ops, (void)s;
    json_t *r = json_pack("{s:b, s:s}", "external", md.external, "version", md.version);
    if (!md.external) {
        json_object_set_new(r, "install_ms", json_integer(md.install_ns / 1000000));
        json_object_set_new(r, "startup_ms", json_integer(md.startup_ns / 1000000));
    }
    return r;
}

static int mysql_roles(const struct lock_ops *ops, const struct scenario *s,
                       struct backend_role *out, int max)
{
    (void)ops, (void)s;
    if (md.external || max < 1 || !md.srv.dir[0])
        return 0;
    out[0] = (struct backend_role){mysql_role_names[0].name, -1, &md.srv};
    return 1;
}

static int mysql_answers(const struct server *srv)
{
    return servers_mysql_ping(srv->host, srv->port, 200, NULL);
}

/* Serving: the server answers a query. */
static void mysql_health(const struct lock_ops *ops, const struct scenario *s,
                         struct backend_health *out)
{
    struct backend_role r[1];
    backend_health_asked(r, mysql_roles(ops, s, r, 1), NULL, 1, mysql_answers, out);
}

/* Its adapters' word, and their variables: the server, the login every
 * locklab connection uses, and database MYSQL_CONN_DB, whose sessions
 * clear() ends (so an adapter's GET_LOCK locks are cleared with them),
 * one by one and as a URL. */
static const struct backend_adapter_kind mysql_adapter_kinds[] = {{"mysql", 0}, {NULL, 0}};

static int mysql_adapter_env(const char *word, struct lock_servers *sv, struct lab_err *err)
{
    (void)word;
    const struct lock_endpoint *at = &sv->node[0];
    if (backend_env_put(sv, err, "LOCKLAB_MYSQL_HOST=%s", at->host) != 0 ||
        backend_env_put(sv, err, "LOCKLAB_MYSQL_PORT=%d", at->port) != 0 ||
        backend_env_put(sv, err, "LOCKLAB_MYSQL_USER=%s", MYSQL_CONN_USER) != 0 ||
        backend_env_put(sv, err, "LOCKLAB_MYSQL_PASSWORD=%s", MYSQL_CONN_PASSWORD) != 0 ||
        backend_env_put(sv, err, "LOCKLAB_MYSQL_DATABASE=%s", MYSQL_CONN_DB) != 0)
        return -1;
    return backend_env_put(sv, err, "LOCKLAB_MYSQL_URL=mysql://%s%s%s@%s:%d/%s", MYSQL_CONN_USER,
                           MYSQL_CONN_PASSWORD[0] ? ":" : "", MYSQL_CONN_PASSWORD, at->host,
                           at->port, MYSQL_CONN_DB);
}

const struct backend_ops backend_mysql = {
    .name = "mysql",
    .title = "MariaDB",
    .flag = "mysql",
    .env_var = "LOCKLAB_MYSQL",
    .flag_usage = "HOST:PORT  use this MariaDB/MySQL (user root, no password) instead of\n"
                  "                     an embedded one (also $LOCKLAB_MYSQL)",
    .check_external = mysql_check_external,
    .plan = mysql_plan,
    .start = mysql_start,
    .stop = mysql_stop,
    .servers = mysql_servers,
    .clear = mysql_clear,
    .server_ops = mysql_server_ops,
    .describe = mysql_describe,
    .role_names = mysql_role_names,
    .roles = mysql_roles,
    .health = mysql_health,
    .adapter_kinds = mysql_adapter_kinds,
    .adapter_env = mysql_adapter_env,
    .version = servers_mysql_version,
    .bench_impl = "mysql-get-lock",
    .bench_bare_loop = "locklab-bare-mysql",
    .bench_cycle = "mysql-get-lock cycle (SELECT GET_LOCK + SELECT RELEASE_LOCK)",
    .bench_warmup_s = 0.5,
    .bench_usage = "mysql: SELECT GET_LOCK + SELECT RELEASE_LOCK (MariaDB Connector/C) against\n"
                   "mysql-get-lock, on an embedded MariaDB.\n",
    .bench_ceiling_loop = "locklab-bare-mysql",
    .max_connections = 990,
    .max_connections_why = "--max-connections=1000, a few kept for the lab",
};
