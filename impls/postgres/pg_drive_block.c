/*
 * pg_drive_block.c - the per-process driver of the PostgreSQL state
 * machine (pg_drive.h): the machine's acts on one blocking libpq session,
 * and the session and result helpers both drivers share.
 *
 * CONNECT is PQconnectdbParams. SEND is PQsendQuery (PQsendQueryParams
 * with parameters) and a wait for its results with poll() on the socket in
 * 20 ms slices, so the run's stop reaches the machine while the server
 * holds the statement in a lock queue; CLOSE is PQfinish. Before each
 * operation the idle socket is read without waiting: a session the server
 * closed meanwhile is found then, as the group driver's watch finds it,
 * and the machine starts the operation on a new one.
 */
#include "pg_drive.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#define PG_POLL_MS 20
#define PG_STR(x) #x
#define PG_XSTR(x) PG_STR(x)

static void quiet_notices(void *arg, const char *message)
{
    (void)arg, (void)message;
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

void pg_conn_error(struct lab_err *err, PGconn *pc, const char *what)
{
    const char *m = pc ? PQerrorMessage(pc) : "out of memory";
    int len = (int)strcspn(m, "\n");
    lab_err_set(err, EIO, "PostgreSQL %s: %.*s", what, len > 100 ? 100 : len, m);
}

void pg_gather_add(struct pg_gather *g, PGresult *r)
{
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK && !g->failed) {
        g->failed = r;
        return;
    }
    PQclear(g->last);
    g->last = r;
}

void pg_gather_clear(struct pg_gather *g)
{
    PQclear(g->last);
    PQclear(g->failed);
    *g = (struct pg_gather){0};
}

enum pg_sm_act pg_gather_feed(struct pg_gather *g, PGconn *pc, struct pg_sm *m)
{
    enum pg_sm_act act;
    if (PQstatus(pc) != CONNECTION_OK) {
        act = pg_sm_lost(m, PQerrorMessage(pc));
    } else {
        struct pg_sm_result r = {.ok = !g->failed};
        if (g->failed) {
            r.sqlstate = PQresultErrorField(g->failed, PG_DIAG_SQLSTATE);
            r.message = PQresultErrorMessage(g->failed);
        } else if (g->last) {
            r.rows = PQntuples(g->last);
            r.value = r.rows > 0 && PQnfields(g->last) > 0 ? PQgetvalue(g->last, 0, 0) : NULL;
            r.tag = PQcmdStatus(g->last);
        }
        PGTransactionStatusType ts = PQtransactionStatus(pc);
        r.txn = ts == PQTRANS_INTRANS ? PG_TXN_IN : ts == PQTRANS_INERROR ? PG_TXN_FAILED
                                                                          : PG_TXN_IDLE;
        act = pg_sm_result(m, &r);
    }
    pg_gather_clear(g);
    return act;
}

/* ------------------------------------------------------------ the acts */

/* Send the machine's statement and wait for its results (or the stop). */
static enum pg_sm_act exec(struct lock_client *c)
{
    struct pg_sm *m = &c->sm;
    PGconn *pc = c->pc;
    int sent = m->nparams ? PQsendQueryParams(pc, m->sql, m->nparams, NULL, m->params, NULL,
                                              NULL, 0)
                          : PQsendQuery(pc, m->sql);
    struct pollfd p = {.fd = PQsocket(pc), .events = POLLIN};
    while (sent && PQconsumeInput(pc)) {
        if (!PQisBusy(pc)) {
            struct pg_gather g = {0};
            PGresult *r;
            while ((r = PQgetResult(pc)))
                pg_gather_add(&g, r);
            return pg_gather_feed(&g, pc, m);
        }
        if (*c->env->stop) {
            enum pg_sm_act act = pg_sm_stop(m);
            if (act != PG_SM_IGNORED)
                return act;
        }
        if (poll(&p, 1, PG_POLL_MS) < 0 && errno != EINTR)
            break;
    }
    return pg_sm_lost(m, PQerrorMessage(pc));
}

/* Do the machine's acts until it is done. */
static void run(struct lock_client *c, enum pg_sm_act act)
{
    for (;;) {
        switch (act) {
        case PG_SM_CONNECT: {
            struct lab_err err = {0};
            PQfinish(c->pc);
            c->pc = pg_connect(c->env, false);
            bool ok = PQstatus(c->pc) == CONNECTION_OK;
            if (!ok)
                pg_conn_error(&err, c->pc, "connection");
            act = pg_sm_connected(&c->sm, ok, &err);
            break;
        }
        case PG_SM_SEND:
            act = exec(c);
            break;
        case PG_SM_CLOSE:
            PQfinish(c->pc);
            c->pc = NULL;
            return;
        case PG_SM_DONE:
        case PG_SM_IGNORED:
            return;
        }
    }
}

/* Read the idle socket without waiting: a session the server closed is lost. */
static void look(struct lock_client *c)
{
    if (!c->pc)
        return;
    struct pollfd p = {.fd = PQsocket(c->pc), .events = POLLIN};
    for (int i = 0; i < 4 && poll(&p, 1, 0) == 1 && PQconsumeInput(c->pc); i++)
        ;
    if (PQstatus(c->pc) != CONNECTION_OK)
        pg_sm_lost(&c->sm, NULL);
}

/* ------------------------------------------------------------ hooks */

int pg_block_open(struct lock_client **out, const struct lock_env *env,
                  const struct pg_sm_design *d, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    pg_sm_init(&c->sm, d, env);
    run(c, pg_sm_open(&c->sm));
    if (c->sm.open_rc != 0) {
        *err = c->sm.err;
        pg_block_close(c);
        return -1;
    }
    *out = c;
    return 0;
}

enum lock_status pg_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                  struct lab_err *err)
{
    look(c);
    run(c, pg_sm_acquire(&c->sm, key, wait_ns));
    if (c->sm.status == LOCK_ERROR)
        *err = c->sm.err;
    return c->sm.status;
}

enum release_status pg_block_release(struct lock_client *c, const char *key,
                                     struct lab_err *err)
{
    look(c);
    run(c, pg_sm_release(&c->sm, key));
    if (c->sm.release == RELEASE_ERROR)
        *err = c->sm.err;
    return c->sm.release;
}

void pg_block_close(struct lock_client *c)
{
    if (!c)
        return;
    PQfinish(c->pc);
    free(c);
}
