/*
 * pg_async.c - the PostgreSQL designs' sessions in a client group (see
 * pg_async.h), on libpq's non-blocking API and the group's event loop.
 *
 * A request is a few steps, each one command on the session: (re)connect
 * when the session is not usable (PQconnectStartParams, then PQconnectPoll
 * whenever the socket is ready as it last asked), the setup query of an
 * open, the design's PQsendPrepare's, for a lock wait the SET lock_timeout
 * when the session has another, then the statement itself. Each is sent
 * (PQsend*, then PQflush, watching for writable while it returns 1) and
 * its results read when the socket is readable (PQconsumeInput, then
 * PQgetResult while not PQisBusy); a step's end starts the next. These are
 * pg_common.c's blocking steps in the same order, counted the same way, so
 * a grouped client is the same client to the server.
 *
 * The socket: while connecting, libpq may close it and open another (the
 * next address, an SSL attempt refused), possibly under the same number,
 * so it is taken out of the loop before each PQconnectPoll and put back as
 * PQsocket then says. Once connected it stays watched for reading, idle or
 * not (no epoll_ctl per command); a session that libpq drops (the server
 * went away) closes it, so it is forgotten without epoll (evloop_io_forget).
 *
 * Bounds: connect_timeout is not enforced by PQconnectPoll, so a timer
 * gives up a connect after PG_CONNECT_TIMEOUT_S. A lock wait keeps a timer
 * armed while it is under way: when the run stops the group makes it due,
 * and the wait ends as the blocking one does, by closing the session
 * (PG_WAIT_TIMEOUT; the server ends the session and its queued wait).
 */
#include "pg_async.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evloop.h"

#define PA_WATCH_NS (1000LL * 1000000) /* a lock wait's timer, re-armed while it lasts */
#define PA_SQL_MAX 600
#define PA_PARAMS 2
#define PA_PARAM_MAX 400

enum pa_req { PA_OPEN, PA_EXEC, PA_WAIT, PA_PLAIN };
enum pa_phase { PA_IDLE, PA_CONNECTING, PA_SETUP, PA_PREPARE, PA_SET_TIMEOUT, PA_STATEMENT };

struct pg_async {
    struct lock_client *c;
    struct evloop *L;
    struct ev_io io;           /* the session's socket (fd -1: none) */
    struct ev_timer timer;     /* connect timeout, a lock wait's stop watch, a later outcome */
    int64_t connect_deadline;
    const char *setup;         /* the open's first query, until it ran */
    bool (*setup_ok)(const PGresult *r, struct lab_err *err);
    /* the request under way */
    enum pa_req req;
    enum pa_phase phase;
    bool flushing;             /* PQflush has more to write */
    bool starting;             /* inside the call that started it: outcomes go later */
    int prep;                  /* the statement being prepared */
    int attempt;               /* sessions lost under it so far */
    const char *name;
    char sql[PA_SQL_MAX];
    int nparams;
    char param[PA_PARAMS][PA_PARAM_MAX];
    int64_t wait_ns, timeout_ms;
    struct pg_results acc;
    pg_async_fn done;
    /* an outcome the timer delivers */
    bool later, later_hook;
    enum pg_wait later_w;
    PGresult *later_res;
    int later_status;
    /* the group's callbacks */
    lock_opened_fn opened;
    lock_acquired_fn acquired;
    lock_released_fn released;
    void *arg;
    struct lab_err err;
};

static void proceed(struct pg_async *a);

/* ------------------------------------------------------------ the socket */

/* Watch the session's socket for want, re-registering it when libpq's
 * socket is not the one watched. 0 or -1 (err filled). */
static int watch(struct pg_async *a, unsigned want)
{
    int fd = a->c->pc ? PQsocket(a->c->pc) : -1;
    if (fd != a->io.fd && a->io.armed)
        evloop_io_forget(a->L, &a->io); /* closed by libpq (a drop or a connect's retry) */
    a->io.fd = fd;
    if (fd < 0 || evloop_io(a->L, &a->io, want) == 0)
        return 0;
    lab_err_set(&a->err, errno, "PostgreSQL: cannot watch the session's socket: %s",
                strerror(errno));
    return -1;
}

/* Out of the loop, while the socket is still libpq's open one (or forget
 * it when libpq has closed it). */
static void io_off(struct pg_async *a)
{
    if (!a->io.armed)
        return;
    if (a->c->pc && PQsocket(a->c->pc) == a->io.fd)
        evloop_io(a->L, &a->io, 0);
    else
        evloop_io_forget(a->L, &a->io);
}

/* After libpq ran on a connected session: a socket it closed is forgotten. */
static void io_check(struct pg_async *a)
{
    if (a->io.armed && (!a->c->pc || PQsocket(a->c->pc) != a->io.fd))
        evloop_io_forget(a->L, &a->io);
}

/* ------------------------------------------------------------ outcomes */

static void arm_timer(struct pg_async *a)
{
    if (a->phase == PA_CONNECTING)
        evloop_timer_at(a->L, &a->timer, a->connect_deadline);
    else if (a->req == PA_WAIT && a->phase != PA_IDLE)
        evloop_timer_at(a->L, &a->timer, lab_now_ns() + PA_WATCH_NS);
    else
        evloop_timer_cancel(a->L, &a->timer);
}

static void deliver(struct pg_async *a, enum pg_wait w, PGresult *res)
{
    a->phase = PA_IDLE;
    a->flushing = false;
    if (a->starting) { /* from the loop, not from inside the hook */
        a->later = true;
        a->later_hook = false;
        a->later_w = w;
        a->later_res = res;
        evloop_timer_at(a->L, &a->timer, 0);
        return;
    }
    evloop_timer_cancel(a->L, &a->timer);
    if (a->c->pc && PQstatus(a->c->pc) == CONNECTION_OK)
        watch(a, EV_READ); /* no write pending any more */
    if (a->req == PA_OPEN) {
        a->opened(a->arg, w == PG_WAIT_OK ? 0 : -1, &a->err);
        return;
    }
    pg_async_fn done = a->done;
    a->done = NULL;
    done(a->c, w, res);
}

/* The request failed; a lock wait, or a statement whose session was lost
 * under it, goes once more on a new session (pg_exec, pg_wait_exec). */
static void fail(struct pg_async *a)
{
    PGconn *pc = a->c->pc;
    bool again = a->attempt == 0 && PQstatus(pc) != CONNECTION_OK &&
                 (a->req == PA_WAIT || (a->req == PA_EXEC && a->phase == PA_STATEMENT));
    if (a->req == PA_PLAIN) {
        deliver(a, PG_WAIT_ERROR, PQmakeEmptyPGresult(pc, PGRES_FATAL_ERROR));
    } else if (again) {
        a->attempt++;
        proceed(a);
    } else {
        deliver(a, PG_WAIT_ERROR, NULL);
    }
}

/* The session failed under a step (it could not write or read). */
static void conn_failed(struct pg_async *a, const char *what)
{
    pg_conn_error(&a->err, a->c->pc, what);
    PQclear(a->acc.last);
    PQclear(a->acc.failed);
    a->acc = (struct pg_results){0};
    io_check(a);
    fail(a);
}

/* ------------------------------------------------------------ connecting */

static void connected(struct pg_async *a)
{
    if (PQsetnonblocking(a->c->pc, 1) != 0 || watch(a, EV_READ) != 0) {
        pg_conn_error(&a->err, a->c->pc, "connection");
        a->phase = PA_IDLE;
        fail(a);
        return;
    }
    a->phase = PA_IDLE;
    arm_timer(a);
    proceed(a);
}

static void connect_failed(struct pg_async *a, const char *why)
{
    if (why)
        lab_err_set(&a->err, ETIMEDOUT, "PostgreSQL connection: %s", why);
    else
        pg_conn_error(&a->err, a->c->pc, "connection");
    io_off(a); /* the session stays, unusable, as a failed PQconnectdb's: the next
                * request opens a new one (and pgfu_select_sql can still quote) */
    a->phase = PA_IDLE;
    fail(a);
}

/* One PQconnectPoll, the socket out of the loop meanwhile. */
static void poll_connect(struct pg_async *a)
{
    io_off(a);
    switch (PQconnectPoll(a->c->pc)) {
    case PGRES_POLLING_OK:
        connected(a);
        return;
    case PGRES_POLLING_READING:
        if (watch(a, EV_READ) == 0)
            return;
        break;
    case PGRES_POLLING_WRITING:
        if (watch(a, EV_WRITE) == 0)
            return;
        break;
    default:
        break;
    }
    connect_failed(a, NULL);
}

/* Begin connecting c->pc (fresh from pg_connect). 0, or -1 with err set. */
static int connect_begin(struct pg_async *a)
{
    PGconn *pc = a->c->pc;
    if (!pc || PQstatus(pc) == CONNECTION_BAD) {
        pg_conn_error(&a->err, pc, "connection");
        return -1;
    }
    a->phase = PA_CONNECTING;
    a->connect_deadline = lab_now_ns() + PG_CONNECT_TIMEOUT_S * 1000000000LL;
    a->io.fd = -1;
    if (watch(a, EV_WRITE) != 0) /* as if PQconnectPoll had said "writing" */
        return -1;
    arm_timer(a);
    return 0;
}

/* pg_common.c's session_ready: a new session for one the server closed. */
static void reconnect(struct pg_async *a)
{
    struct lock_client *c = a->c;
    io_off(a);
    PQfinish(c->pc);
    c->pc = pg_connect(c->env, true);
    c->prepared = false;
    c->lock_timeout_ms = -1;
    c->depth = 0;
    c->reconnects++;
    a->prep = 0;
    if (connect_begin(a) != 0)
        connect_failed(a, NULL);
}

/* ------------------------------------------------------------ the steps */

/* Send the step's command (sent: what PQsend* returned) and flush it. */
static void sent(struct pg_async *a, enum pa_phase phase, int ok)
{
    a->phase = phase;
    int f = ok ? PQflush(a->c->pc) : -1;
    a->flushing = f == 1;
    if (f < 0 || watch(a, EV_READ | (a->flushing ? EV_WRITE : 0)) != 0)
        conn_failed(a, "request");
}

/* Go on with the request from where it stands: the next step's command. */
static void proceed(struct pg_async *a)
{
    struct lock_client *c = a->c;
    PGconn *pc = c->pc;
    if (a->req == PA_PLAIN && PQstatus(pc) != CONNECTION_OK) {
        a->phase = PA_STATEMENT;
        fail(a); /* PQexec on a closed session: its error result */
        return;
    }
    if (PQstatus(pc) != CONNECTION_OK) {
        reconnect(a);
        return;
    }
    if (a->setup) {
        sent(a, PA_SETUP, PQsendQuery(pc, a->setup));
        return;
    }
    if (!c->prepared) {
        const struct pg_stmt *s = c->stmts ? &c->stmts[a->prep] : NULL;
        if (s && s->name) {
            sent(a, PA_PREPARE, PQsendPrepare(pc, s->name, s->sql, s->nparams, NULL));
            return;
        }
        c->prepared = true;
    }
    if (a->req == PA_OPEN) {
        deliver(a, PG_WAIT_OK, NULL);
        return;
    }
    if (a->req == PA_WAIT) {
        char sql[64];
        a->timeout_ms = pg_lock_timeout_sql(a->wait_ns, sql, sizeof sql);
        if (a->timeout_ms != c->lock_timeout_ms) {
            c->env->stats->round_trips++;
            sent(a, PA_SET_TIMEOUT, PQsendQuery(pc, sql));
            return;
        }
    }
    c->env->stats->round_trips++;
    const char *params[PA_PARAMS];
    for (int i = 0; i < a->nparams; i++)
        params[i] = a->param[i];
    sent(a, PA_STATEMENT, a->name ? PQsendQueryPrepared(pc, a->name, a->nparams, params, NULL,
                                                        NULL, 0)
                                  : PQsendQuery(pc, a->sql));
}

/* Every result of the step's command is in. */
static void step_done(struct pg_async *a)
{
    struct lock_client *c = a->c;
    PGresult *r;
    switch (a->phase) {
    case PA_SETUP: {
        bool ok = a->setup_ok(a->acc.failed ? a->acc.failed : a->acc.last, &a->err);
        PQclear(a->acc.last);
        PQclear(a->acc.failed);
        a->acc = (struct pg_results){0};
        if (!ok) {
            fail(a);
            return;
        }
        a->setup = NULL;
        proceed(a);
        return;
    }
    case PA_PREPARE:
    case PA_SET_TIMEOUT:
        if (pg_results_end(&a->acc, c->pc, false, &r, &a->err) != PG_WAIT_OK) {
            fail(a);
            return;
        }
        PQclear(r);
        if (a->phase == PA_PREPARE)
            a->prep++;
        else
            c->lock_timeout_ms = a->timeout_ms;
        proceed(a);
        return;
    case PA_STATEMENT:
        if (a->req == PA_PLAIN) {
            r = a->acc.failed ? a->acc.failed : a->acc.last;
            if (r == a->acc.failed)
                PQclear(a->acc.last);
            a->acc = (struct pg_results){0};
            deliver(a, PG_WAIT_OK, r);
            return;
        }
        {
            enum pg_wait w = pg_results_end(&a->acc, c->pc, a->req == PA_WAIT, &r, &a->err);
            if (w == PG_WAIT_ERROR)
                fail(a);
            else
                deliver(a, w, r);
        }
        return;
    default:
        return;
    }
}

static void on_io(struct ev_io *io, unsigned events)
{
    struct pg_async *a = (struct pg_async *)((char *)io - offsetof(struct pg_async, io));
    PGconn *pc = a->c->pc;
    if (a->phase == PA_CONNECTING) {
        poll_connect(a);
        return;
    }
    if (!pc)
        return;
    if (a->flushing) {
        if ((events & EV_READ) && !PQconsumeInput(pc)) {
            conn_failed(a, "request");
            return;
        }
        int f = PQflush(pc);
        if (f < 0) {
            conn_failed(a, "request");
            return;
        }
        if (f == 1)
            return;
        a->flushing = false;
        if (watch(a, EV_READ) != 0) {
            conn_failed(a, "request");
            return;
        }
    }
    if (!PQconsumeInput(pc)) {
        if (a->phase == PA_IDLE)
            io_check(a); /* gone while idle: the next request opens a new one */
        else
            conn_failed(a, "request");
        return;
    }
    if (a->phase == PA_IDLE)
        return;
    while (!PQisBusy(pc)) {
        PGresult *r = PQgetResult(pc);
        if (!r) {
            step_done(a);
            return;
        }
        pg_results_add(&a->acc, r);
    }
}

static void on_timer(struct ev_timer *t)
{
    struct pg_async *a = (struct pg_async *)((char *)t - offsetof(struct pg_async, timer));
    struct lock_client *c = a->c;
    if (a->later) {
        a->later = false;
        if (!a->later_hook) {
            deliver(a, a->later_w, a->later_res);
        } else if (a->acquired) {
            pg_async_acquired(c, (enum lock_status)a->later_status);
        } else if (a->released) {
            pg_async_released(c, (enum release_status)a->later_status);
        }
        return;
    }
    if (a->phase == PA_IDLE)
        return;
    if (*c->env->stop) {
        /* the run is over: close the session rather than wait on (the
         * server ends it, with whatever it waited for) */
        io_off(a);
        PQfinish(c->pc);
        c->pc = NULL;
        PQclear(a->acc.last);
        PQclear(a->acc.failed);
        a->acc = (struct pg_results){0};
        if (a->req != PA_WAIT)
            lab_err_set(&a->err, ECANCELED, "PostgreSQL: the run stopped while connecting");
        deliver(a, a->req == PA_WAIT ? PG_WAIT_TIMEOUT : PG_WAIT_ERROR, NULL);
        return;
    }
    if (a->phase == PA_CONNECTING && lab_now_ns() >= a->connect_deadline) {
        connect_failed(a, "timeout expired");
        return;
    }
    arm_timer(a);
}

/* ------------------------------------------------------------ requests */

static void start(struct lock_client *c, enum pa_req req, const char *name, const char *sql,
                  int nparams, const char *const *params, int64_t wait_ns, pg_async_fn done)
{
    struct pg_async *a = c->as;
    a->req = req;
    a->name = name;
    a->nparams = nparams;
    a->wait_ns = wait_ns;
    a->done = done;
    a->attempt = 0;
    a->starting = true;
    bool fits = nparams <= PA_PARAMS && strlen(sql ? sql : "") < sizeof a->sql;
    for (int i = 0; fits && i < nparams; i++)
        fits = strlen(params[i]) < sizeof a->param[i];
    if (!fits) {
        lab_err_set(&a->err, E2BIG, "PostgreSQL: a statement or parameter too long for a group");
        deliver(a, PG_WAIT_ERROR, req == PA_PLAIN ? PQmakeEmptyPGresult(NULL, PGRES_FATAL_ERROR)
                                                  : NULL);
    } else {
        snprintf(a->sql, sizeof a->sql, "%s", sql ? sql : "");
        for (int i = 0; i < nparams; i++)
            snprintf(a->param[i], sizeof a->param[i], "%s", params[i]);
        a->phase = PA_IDLE;
        proceed(a);
    }
    a->starting = false;
    if (!a->later && a->phase != PA_IDLE && a->phase != PA_CONNECTING)
        arm_timer(a); /* a lock wait's stop watch (connecting has its own) */
}

void pg_async_exec(struct lock_client *c, const char *name, int nparams,
                   const char *const *params, pg_async_fn done)
{
    start(c, PA_EXEC, name, NULL, nparams, params, 0, done);
}

void pg_async_wait(struct lock_client *c, const char *name, const char *sql, int nparams,
                   const char *const *params, int64_t wait_ns, pg_async_fn done)
{
    start(c, PA_WAIT, name, sql, nparams, params, wait_ns, done);
}

void pg_async_plain(struct lock_client *c, const char *sql, pg_async_fn done)
{
    start(c, PA_PLAIN, NULL, sql, 0, NULL, 0, done);
}

/* ------------------------------------------------------------ hooks' side */

void pg_async_will_acquire(struct lock_client *c, lock_acquired_fn done, void *arg)
{
    c->as->acquired = done;
    c->as->arg = arg;
}

void pg_async_will_release(struct lock_client *c, lock_released_fn done, void *arg)
{
    c->as->released = done;
    c->as->arg = arg;
}

void pg_async_acquired(struct lock_client *c, enum lock_status st)
{
    struct pg_async *a = c->as;
    lock_deliver_acquired(&a->acquired, a->arg, st, &a->err);
}

void pg_async_released(struct lock_client *c, enum release_status rs)
{
    struct pg_async *a = c->as;
    lock_deliver_released(&a->released, a->arg, rs, &a->err);
}

/* The timer tells the group (an outcome known inside the hook itself). */
static void hook_later(struct pg_async *a, int status)
{
    a->later = true;
    a->later_hook = true;
    a->later_status = status;
    evloop_timer_at(a->L, &a->timer, 0);
}

void pg_async_acquired_later(struct lock_client *c, enum lock_status st)
{
    hook_later(c->as, (int)st);
}

void pg_async_released_later(struct lock_client *c, enum release_status rs)
{
    hook_later(c->as, (int)rs);
}

struct lab_err *pg_async_err(struct lock_client *c)
{
    return &c->as->err;
}

/* ------------------------------------------------------------ open, close */

int pg_async_open(struct lock_client **out, const struct lock_env *env, struct evloop *L,
                  const struct pg_stmt *stmts, const char *setup,
                  bool (*setup_ok)(const PGresult *r, struct lab_err *err),
                  lock_opened_fn opened, void *arg, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    struct pg_async *a = calloc(1, sizeof *a);
    if (!c || !a) {
        free(c);
        free(a);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    c->stmts = stmts;
    c->lock_timeout_ms = -1;
    c->as = a;
    a->c = c;
    a->L = L;
    a->io = (struct ev_io){.fd = -1, .ready = on_io};
    evloop_timer_init(&a->timer, on_timer);
    a->setup = setup;
    a->setup_ok = setup_ok;
    a->req = PA_OPEN;
    a->opened = opened;
    a->arg = arg;
    c->pc = pg_connect(env, true);
    if (connect_begin(a) != 0) {
        *err = a->err;
        pg_async_close(c);
        return -1;
    }
    *out = c;
    return 0;
}

void pg_async_close(struct lock_client *c)
{
    if (!c)
        return;
    struct pg_async *a = c->as;
    evloop_timer_cancel(a->L, &a->timer);
    io_off(a);
    PQclear(a->acc.last);
    PQclear(a->acc.failed);
    if (a->later && !a->later_hook)
        PQclear(a->later_res);
    PQfinish(c->pc);
    free(a);
    free(c);
}
