/*
 * pg_common.c - the session, statements and bounded lock waits of the
 * PostgreSQL designs (see pg_common.h).
 *
 * A lock wait is sent asynchronously (PQsendQuery*) and read with poll()
 * on the session's socket in 20 ms slices, so the run's stop flag is seen
 * while the server holds the statement in its lock queue; a stop closes
 * the session (see await_results). Every
 * other statement is a plain synchronous call: it never waits for a lock.
 * Server notices (PostgreSQL's WARNINGs, such as "you don't own a lock of
 * type ExclusiveLock") are swallowed: the designs read the results. The
 * connect, the errors, the SET lock_timeout and the judging of a
 * statement's results are shared with the non-blocking side (pg_async.c).
 */
#include "pg_common.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PG_POLL_MS 20
#define PG_STR(x) #x
#define PG_XSTR(x) PG_STR(x)

static void quiet_notices(void *arg, const char *message)
{
    (void)arg, (void)message;
}

void pg_conn_error(struct lab_err *err, PGconn *pc, const char *what)
{
    const char *m = pc ? PQerrorMessage(pc) : "out of memory";
    int len = (int)strcspn(m, "\n");
    lab_err_set(err, EIO, "PostgreSQL %s: %.*s", what, len > 100 ? 100 : len, m);
}

void pg_result_error(struct lab_err *err, const PGresult *r, PGconn *pc)
{
    const char *m = r ? PQresultErrorMessage(r) : PQerrorMessage(pc);
    int len = (int)strcspn(m, "\n");
    lab_err_set(err, EIO, "PostgreSQL: %.*s", len > 110 ? 110 : len, m);
}

/* Prepare the design's statements on the session. 0 or -1. */
static int prepare(struct lock_client *c, struct lab_err *err)
{
    for (const struct pg_stmt *s = c->stmts; s && s->name; s++) {
        PGresult *r = PQprepare(c->pc, s->name, s->sql, s->nparams, NULL);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            pg_result_error(err, r, c->pc);
        PQclear(r);
        if (!ok)
            return -1;
    }
    c->prepared = true;
    return 0;
}

PGconn *pg_connect(const struct lock_env *env, bool start)
{
    const char *const keys[] = {"dbname", "connect_timeout", "application_name", NULL};
    const char *const vals[] = {env->servers->conn, PG_XSTR(PG_CONNECT_TIMEOUT_S), LOCK_PG_APP,
                                NULL};
    PGconn *pc = start ? PQconnectStartParams(keys, vals, 1) : PQconnectdbParams(keys, vals, 1);
    if (pc)
        PQsetNoticeProcessor(pc, quiet_notices, NULL);
    return pc;
}

/* A usable session with the statements prepared: one the server closed is
 * opened again (what it held is gone). 0 or -1 with err filled. */
static int session_ready(struct lock_client *c, struct lab_err *err)
{
    if (PQstatus(c->pc) != CONNECTION_OK) {
        PQfinish(c->pc);
        c->pc = pg_connect(c->env, false);
        c->prepared = false;
        c->lock_timeout_ms = -1;
        c->depth = 0;
        c->reconnects++;
        if (PQstatus(c->pc) != CONNECTION_OK) {
            pg_conn_error(err, c->pc, "connection");
            return -1;
        }
    }
    return c->prepared ? 0 : prepare(c, err);
}

int pg_lock_open(struct lock_client **out, const struct lock_env *env,
                 const struct pg_stmt *stmts, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    c->stmts = stmts;
    c->lock_timeout_ms = -1;
    c->pc = pg_connect(env, false);
    if (PQstatus(c->pc) != CONNECTION_OK) {
        pg_conn_error(err, c->pc, "connection");
        pg_lock_close(c);
        return -1;
    }
    if (prepare(c, err) != 0) {
        pg_lock_close(c);
        return -1;
    }
    *out = c;
    return 0;
}

void pg_lock_close(struct lock_client *c)
{
    if (!c)
        return;
    PQfinish(c->pc);
    free(c);
}

PGresult *pg_exec(struct lock_client *c, const char *name, int nparams,
                  const char *const *params, struct lab_err *err)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (session_ready(c, err) != 0)
            return NULL;
        c->env->stats->round_trips++;
        PGresult *r = PQexecPrepared(c->pc, name, nparams, params, NULL, NULL, 0);
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
            return r;
        pg_result_error(err, r, c->pc);
        PQclear(r);
        if (PQstatus(c->pc) == CONNECTION_OK)
            return NULL; /* the server refused it: no second try */
    }
    return NULL;
}

int64_t pg_lock_timeout_sql(int64_t wait_ns, char *sql, size_t n)
{
    int64_t ms = wait_ns / 1000000;
    if (ms < 1)
        ms = 1;
    if (ms > 2147483647)
        ms = 2147483647;
    snprintf(sql, n, "SET lock_timeout = %lld", (long long)ms);
    return ms;
}

/* The session's lock_timeout to wait_ns, when it is not that already. 0
 * or -1. */
static int set_lock_timeout(struct lock_client *c, int64_t wait_ns, struct lab_err *err)
{
    char sql[64];
    int64_t ms = pg_lock_timeout_sql(wait_ns, sql, sizeof sql);
    if (ms == c->lock_timeout_ms)
        return 0;
    c->env->stats->round_trips++;
    PGresult *r = PQexec(c->pc, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        pg_result_error(err, r, c->pc);
    PQclear(r);
    if (ok)
        c->lock_timeout_ms = ms;
    return ok ? 0 : -1;
}

/* Wait until the sent statement's results are all in. When the run stops
 * first, close the session and go (*abandoned): the server ends it once it
 * sees the socket closed, with whatever it waited for, and the next run's
 * clear ends it in any case. A cancel request instead costs a connection
 * (a fork of the postmaster) per waiter: 64 of them at once on this
 * machine kept clients past the run's 2 s grace. 0, or -1 when the session
 * failed. */
static int await_results(struct lock_client *c, bool *abandoned)
{
    *abandoned = false;
    struct pollfd p = {.fd = PQsocket(c->pc), .events = POLLIN};
    for (;;) {
        if (!PQconsumeInput(c->pc))
            return -1;
        if (!PQisBusy(c->pc))
            return 0;
        if (*c->env->stop) {
            PQfinish(c->pc);
            c->pc = NULL;
            *abandoned = true;
            return 0;
        }
        if (poll(&p, 1, PG_POLL_MS) < 0 && errno != EINTR)
            return -1;
    }
}

enum pg_wait pg_wait_exec(struct lock_client *c, const char *name, const char *sql, int nparams,
                          const char *const *params, int64_t wait_ns, PGresult **res,
                          struct lab_err *err)
{
    *res = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (session_ready(c, err) != 0 || set_lock_timeout(c, wait_ns, err) != 0) {
            if (PQstatus(c->pc) == CONNECTION_OK || attempt)
                return PG_WAIT_ERROR;
            continue;
        }
        c->env->stats->round_trips++;
        int sent = name ? PQsendQueryPrepared(c->pc, name, nparams, params, NULL, NULL, 0)
                        : PQsendQuery(c->pc, sql);
        bool abandoned = false;
        int rc = sent ? await_results(c, &abandoned) : -1;
        if (rc == 0 && abandoned)
            return PG_WAIT_TIMEOUT; /* the run is over; so is the session */
        if (rc != 0) {
            pg_conn_error(err, c->pc, "request");
            if (PQstatus(c->pc) == CONNECTION_OK || attempt)
                return PG_WAIT_ERROR;
            continue; /* the session is gone: once more on a new one */
        }
        /* every result of the statements sent: the first failure decides */
        struct pg_results acc = {0};
        PGresult *r;
        while ((r = PQgetResult(c->pc)))
            pg_results_add(&acc, r);
        enum pg_wait w = pg_results_end(&acc, c->pc, true, res, err);
        if (w != PG_WAIT_ERROR || PQstatus(c->pc) == CONNECTION_OK || attempt)
            return w;
    }
    return PG_WAIT_ERROR;
}

void pg_results_add(struct pg_results *acc, PGresult *r)
{
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK && !acc->failed) {
        acc->failed = r;
        return;
    }
    PQclear(acc->last);
    acc->last = r;
}

enum pg_wait pg_results_end(struct pg_results *acc, PGconn *pc, bool lock_wait, PGresult **res,
                            struct lab_err *err)
{
    PGresult *failed = acc->failed, *last = acc->last;
    *res = NULL;
    *acc = (struct pg_results){0};
    if (!failed) {
        *res = last;
        return PG_WAIT_OK;
    }
    PQclear(last);
    const char *state = PQresultErrorField(failed, PG_DIAG_SQLSTATE);
    bool timed_out = lock_wait && state && strcmp(state, "55P03") == 0;
    if (!timed_out)
        pg_result_error(err, failed, pc);
    PQclear(failed);
    return timed_out ? PG_WAIT_TIMEOUT : PG_WAIT_ERROR;
}

void pg_key_id(const char *key, char *buf, size_t n)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a, 64 bits */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    snprintf(buf, n, "%lld", (long long)(int64_t)h);
}
