/*
 * backend_pg.c - the PostgreSQL store table (see backend.h): one server,
 * embedded (servers_pg.c) or the user's --postgres (HOST:PORT, a libpq
 * conninfo "host=... port=... user=... dbname=..." or a postgresql:// URI).
 *
 * The designs' locks live in sessions (advisory locks) and transactions
 * (row locks), so nothing is stored between runs but the row-lock table
 * and its rows, which may stay. Clearing ends the sessions an earlier run
 * left (application_name LOCK_PG_APP: only locklab's own, also on a shared
 * server), waiting until each is gone and its locks with it. Operations are
 * the statements executed, from pg_stat_statements (loaded by the embedded
 * server; on an external one that lacks it the figure is left out). The
 * server is one fault role, "postgres": the postmaster, and with it every
 * backend (servers.c, faults.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "backend.h"
#include "scenario.h"
#include "servers_pg.h"

/* This invocation's PostgreSQL. */
/* The role a fault may target, spelled here only (roles() uses it). */
static const struct backend_role_name pg_role_names[] = {
    {"postgres", 0, false, true}, /* the PostgreSQL server: its postmaster with every backend
                                     (hosts: may place it) */
    {NULL, 0, false, false},
};

static struct {
    bool planned;            /* a PostgreSQL design runs */
    bool external;           /* the user's server */
    struct server srv;       /* embedded server (pid 0 when external) */
    struct lock_servers sv;  /* where it is: conn is a libpq conninfo */
    char version[32];        /* server_version */
    int64_t started_ms;      /* how long the embedded start took */
} pg;

static bool is_conninfo(const char *addr)
{
    return strchr(addr, '=') || strncmp(addr, "postgres://", 11) == 0 ||
           strncmp(addr, "postgresql://", 13) == 0;
}

static int pg_check_external(const char *addr, struct lab_err *err)
{
    char host[64];
    int port;
    if (!is_conninfo(addr)) {
        if (lab_parse_hostport(addr, host, sizeof host, &port) == 0)
            return 0;
    } else if (strlen(addr) < sizeof pg.sv.conn) {
        char *msg = NULL;
        PQconninfoOption *o = PQconninfoParse(addr, &msg);
        PQconninfoFree(o);
        if (o)
            return 0;
        lab_err_set(err, EINVAL, "bad PostgreSQL conninfo '%.40s': %.60s", addr,
                    msg ? msg : "out of memory");
        PQfreemem(msg);
        return -1;
    }
    lab_err_set(err, EINVAL, "bad PostgreSQL address '%.60s' (expected HOST:PORT or a conninfo)",
                addr);
    return -1;
}

static void pg_plan(const struct scenario *s, const struct lock_ops *ops)
{
    (void)s, (void)ops;
    pg.planned = true;
}

static void pg_stop(void)
{
    servers_stop(&pg.srv);
    memset(&pg, 0, sizeof pg);
}

/* An administrative session to the server; NULL with err filled. */
static PGconn *admin_open(struct lab_err *err)
{
    const char *const keys[] = {"dbname", "connect_timeout", "application_name", NULL};
    const char *const vals[] = {pg.sv.conn, "5", "locklab-admin", NULL};
    PGconn *pc = PQconnectdbParams(keys, vals, 1);
    if (pc && PQstatus(pc) == CONNECTION_OK)
        return pc;
    lab_err_set(err, EIO, "PostgreSQL: %.100s", pc ? PQerrorMessage(pc) : "out of memory");
    PQfinish(pc);
    return NULL;
}

/* One statement on pc returning one value (into out, may be NULL). 0 or
 * -1 with err filled. */
static int admin_value(PGconn *pc, const char *sql, char *out, size_t n, struct lab_err *err)
{
    PGresult *r = PQexec(pc, sql);
    ExecStatusType st = PQresultStatus(r);
    int ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (!ok)
        lab_err_set(err, EIO, "PostgreSQL: %.110s", PQresultErrorMessage(r));
    else if (out)
        snprintf(out, n, "%s", st == PGRES_TUPLES_OK && PQntuples(r) ? PQgetvalue(r, 0, 0) : "");
    PQclear(r);
    return ok ? 0 : -1;
}

static int pg_start(const char *external, const volatile int *stop, struct lab_err *err)
{
    if (!pg.planned)
        return 0;
    memset(&pg.sv, 0, sizeof pg.sv);
    pg.sv.n = 1;
    if (external) {
        if (pg_check_external(external, err) != 0)
            return -1;
        struct lock_endpoint *ep = &pg.sv.node[0];
        if (is_conninfo(external)) {
            snprintf(pg.sv.conn, sizeof pg.sv.conn, "%s", external);
            snprintf(ep->host, sizeof ep->host, "(conninfo)");
        } else {
            lab_parse_hostport(external, ep->host, sizeof ep->host, &ep->port);
            snprintf(pg.sv.conn, sizeof pg.sv.conn, "host=%s port=%d", ep->host, ep->port);
        }
        pg.external = true;
        if (servers_pg_ping(pg.sv.conn, 5000, err) != 0)
            return -1;
    } else {
        int64_t t0 = lab_now_ns();
        snprintf(pg.srv.place, sizeof pg.srv.place, "%s", pg_role_names[0].name);
        if (servers_pg_start(&pg.srv, "postgres", stop, pg.sv.conn, sizeof pg.sv.conn, err) != 0)
            return -1;
        pg.started_ms = (lab_now_ns() - t0) / 1000000;
        snprintf(pg.sv.node[0].host, sizeof pg.sv.node[0].host, "%s", pg.srv.host);
        pg.sv.node[0].port = pg.srv.port;
    }
    PGconn *pc = admin_open(err);
    if (!pc)
        return -1;
    int rc = admin_value(pc, "SHOW server_version", pg.version, sizeof pg.version, err);
    if (rc == 0 && !pg.external) /* the statement counter (loaded at start) */
        rc = admin_value(pc, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements", NULL, 0, err);
    PQfinish(pc);
    return rc;
}

static void pg_servers(const struct lock_ops *ops, const struct scenario *s,
                       struct lock_servers *out)
{
    (void)ops, (void)s;
    *out = pg.sv;
}

static int pg_clear(const struct lock_servers *sv, const struct scenario *s, struct lab_err *err)
{
    (void)sv, (void)s;
    PGconn *pc = admin_open(err);
    if (!pc)
        return -1;
    /* pg_terminate_backend with a timeout waits until the session is gone */
    int rc = admin_value(pc, "SELECT count(*) FILTER (WHERE NOT pg_terminate_backend(pid, 5000)) "
                         "FROM pg_stat_activity WHERE application_name = '" LOCK_PG_APP "' "
                         "AND pid <> pg_backend_pid()", NULL, 0, err);
    PQfinish(pc);
    return rc;
}

static int pg_server_ops(const struct lock_servers *sv, int64_t *ops_served, struct lab_err *err)
{
    (void)sv;
    *ops_served = 0;
    PGconn *pc = admin_open(err);
    if (!pc)
        return -1;
    char v[32];
    /* the clients' statements: not this query, nor the clearing one */
    int rc = admin_value(pc, "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements "
                         "WHERE query NOT LIKE '%pg\\_stat\\_%'", v, sizeof v, err);
    PQfinish(pc);
    if (rc == 0)
        *ops_served = strtoll(v, NULL, 10);
    return rc;
}

static json_t *pg_describe(const struct lock_ops *ops, const struct scenario *s)
{
    (void)ops, (void)s;
    json_t *d = json_pack("{s:b, s:s}", "external", pg.external, "version", pg.version);
    if (!pg.external) {
        json_object_set_new(d, "fsync", json_false());
        json_object_set_new(d, "start_ms", json_integer(pg.started_ms));
    }
    return d;
}

static int pg_roles(const struct lock_ops *ops, const struct scenario *s,
                    struct backend_role *out, int max)
{
    (void)ops, (void)s;
    if (pg.external || max < 1 || !pg.srv.dir[0])
        return 0;
    out[0] = (struct backend_role){pg_role_names[0].name, -1, &pg.srv};
    return 1;
}

static int pg_answers(const struct server *srv)
{
    (void)srv; /* the one embedded server, reached by its conninfo */
    return servers_pg_ping(pg.sv.conn, 1000, NULL);
}

/* Serving: a session answers a query. */
static void pg_health(const struct lock_ops *ops, const struct scenario *s,
                      struct backend_health *out)
{
    struct backend_role r[1];
    backend_health_asked(r, pg_roles(ops, s, r, 1), NULL, 1, pg_answers, out);
}

/* ------------------------------------------------------------ adapters */

static const struct backend_adapter_kind pg_adapter_kinds[] = {{"postgres", 0}, {NULL, 0}};

/* in, percent-encoded for a URL (everything but unreserved characters). */
static void url_part(char *out, size_t n, const char *in)
{
    size_t o = 0;
    for (; *in && o + 4 < n; in++) {
        unsigned char ch = (unsigned char)*in;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            strchr("-._~", ch))
            out[o++] = (char)ch;
        else
            o += (size_t)snprintf(out + o, n - o, "%%%02X", ch);
    }
    out[o] = '\0';
}

/* in as a conninfo value: quoted, with ' and \ escaped. */
static void conninfo_value(char *out, size_t n, const char *in)
{
    size_t o = 0;
    out[o++] = '\'';
    for (; *in && o + 4 < n; in++) {
        if (*in == '\'' || *in == '\\')
            out[o++] = '\\';
        out[o++] = *in;
    }
    out[o++] = '\'';
    out[o] = '\0';
}

/* Its adapters' variables: the server as its conninfo gives it (the
 * embedded one's, or --postgres), field by field, as a conninfo and as a
 * URL, and as libpq's own PG* variables; each with application_name
 * LOCK_PG_APP, so that clear() ends an adapter's sessions (and their
 * advisory locks) as it ends the built-in designs'. A field the address
 * does not give is empty in LOCKLAB_PG_* and not set in PG* (libpq's
 * default applies, as for locklab's own sessions). */
static int pg_adapter_env(const char *word, struct lock_servers *sv, struct lab_err *err)
{
    (void)word;
    char *msg = NULL;
    PQconninfoOption *opts = PQconninfoParse(sv->conn, &msg);
    if (!opts) {
        lab_err_set(err, EINVAL, "PostgreSQL conninfo: %.100s", msg ? msg : "out of memory");
        PQfreemem(msg);
        return -1;
    }
    enum { F_HOST, F_PORT, F_USER, F_PASSWORD, F_DBNAME, F_N };
    static const char *const key[F_N] = {"host", "port", "user", "password", "dbname"};
    static const char *const name[F_N] = {"HOST", "PORT", "USER", "PASSWORD", "DATABASE"};
    static const char *const libpq[F_N] = {"PGHOST", "PGPORT", "PGUSER", "PGPASSWORD",
                                           "PGDATABASE"};
    const char *val[F_N] = {"", "", "", "", ""};
    char conninfo[512] = "", v[160];
    size_t used = 0;
    for (PQconninfoOption *o = opts; o->keyword; o++) {
        if (!o->val || !strcmp(o->keyword, "application_name"))
            continue;
        for (int f = 0; f < F_N; f++)
            if (!strcmp(o->keyword, key[f]))
                val[f] = o->val;
        conninfo_value(v, sizeof v, o->val);
        used += (size_t)snprintf(conninfo + used, used < sizeof conninfo ? sizeof conninfo - used : 0,
                                 "%s=%s ", o->keyword, v);
    }
    int rc = 0;
    for (int f = 0; f < F_N && rc == 0; f++) {
        rc = backend_env_put(sv, err, "LOCKLAB_PG_%s=%s", name[f], val[f]);
        if (rc == 0 && val[f][0])
            rc = backend_env_put(sv, err, "%s=%s", libpq[f], val[f]);
    }
    char user[96], pass[96], host[96], db[96];
    url_part(user, sizeof user, val[F_USER]);
    url_part(pass, sizeof pass, val[F_PASSWORD]);
    url_part(host, sizeof host, val[F_HOST]);
    url_part(db, sizeof db, val[F_DBNAME]);
    if (rc == 0)
        rc = backend_env_put(sv, err, "PGAPPNAME=%s", LOCK_PG_APP);
    if (rc == 0 && used >= sizeof conninfo) {
        lab_err_set(err, E2BIG, "the PostgreSQL conninfo is too long for an adapter");
        rc = -1;
    }
    if (rc == 0)
        rc = backend_env_put(sv, err, "LOCKLAB_PG_CONNINFO=%sapplication_name=%s", conninfo,
                             LOCK_PG_APP);
    if (rc == 0)
        rc = backend_env_put(sv, err, "LOCKLAB_PG_URL=postgresql://%s%s%s%s%s%s%s/%s"
                             "?application_name=%s", user, pass[0] ? ":" : "", pass,
                             user[0] || pass[0] ? "@" : "", host, val[F_PORT][0] ? ":" : "",
                             val[F_PORT], db, LOCK_PG_APP);
    PQconninfoFree(opts);
    return rc;
}

const struct backend_ops backend_postgres = {
    .name = "postgres",
    .title = "PostgreSQL",
    .flag = "postgres",
    .env_var = "LOCKLAB_POSTGRES",
    .flag_usage = "ADDR  use this PostgreSQL (HOST:PORT or a libpq conninfo) instead of\n"
                  "                     an embedded one (also $LOCKLAB_POSTGRES)",
    .check_external = pg_check_external,
    .plan = pg_plan,
    .start = pg_start,
    .stop = pg_stop,
    .servers = pg_servers,
    .clear = pg_clear,
    .server_ops = pg_server_ops,
    .describe = pg_describe,
    .role_names = pg_role_names,
    .roles = pg_roles,
    .health = pg_health,
    .adapter_kinds = pg_adapter_kinds,
    .adapter_env = pg_adapter_env,
    .version = servers_pg_version,
    .bench_impl = "pg-advisory",
    .bench_bare_loop = "locklab-bare-pg",
    .bench_cycle = "pg-advisory cycle (pg_advisory_lock + pg_advisory_unlock)",
    .bench_warmup_s = 0.5,
    .bench_usage = "postgres: SELECT pg_advisory_lock + pg_advisory_unlock (libpq, prepared)\n"
                   "against pg-advisory.\n",
    .bench_ceiling_loop = "locklab-bare-pg",
    .max_connections = 290,
    .max_connections_why = "max_connections=300 in its configuration, a few kept for the lab",
};
