/*
 * pg_drive_group.c - the client groups' driver of the PostgreSQL state
 * machine (pg_drive.h): the machine's acts on libpq's non-blocking calls
 * and the group's event loop, a session, socket and timer per client.
 *
 * CONNECT is PQconnectStartParams, then PQconnectPoll whenever the socket
 * is ready as it last asked; libpq may close the socket and open another
 * meanwhile (the next address, an SSL attempt refused), possibly under the
 * same number, so it is taken out of the loop before each PQconnectPoll
 * and put back as PQsocket then says. PQconnectPoll does not enforce
 * connect_timeout: the timer gives the connect up after
 * PG_CONNECT_TIMEOUT_S, as blocking libpq does. SEND is PQsendQuery (or
 * PQsendQueryParams), then PQflush, watching for writable while it returns
 * 1; the results are read when the socket is readable (PQconsumeInput,
 * then PQgetResult while not PQisBusy). While a statement is under way the
 * timer stays armed: the group makes it due when the run stops, and the
 * machine hears of the stop. Once connected the socket stays watched for
 * reading, idle or not: a session the server closes between operations is
 * told to the machine then (the blocking driver looks before each
 * operation). A socket libpq closed is forgotten without epoll
 * (evloop_io_forget). An outcome found inside the hook that started the
 * operation is handed over from the loop (lock.h).
 */
#include "pg_drive.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "evloop.h"
#include "lock_caller.h"

#define WATCH_NS (1000LL * 1000000) /* a statement's timer, re-armed while it lasts */

struct pg_group {
    struct lock_client *c;
    struct evloop *L;
    struct ev_io io;       /* the session's socket (fd -1: none) */
    struct ev_timer timer; /* the connect's deadline, a statement's stop watch */
    int64_t connect_deadline;
    bool connecting;       /* PQconnectPoll under way */
    bool inflight;         /* a statement's results are awaited */
    bool flushing;         /* PQflush has more to write */
    struct pg_gather acc;
    struct lock_caller k;
};

static void run(struct lock_client *c, enum pg_sm_act act);

/* ------------------------------------------------------------ the socket */

/* Watch the session's socket for want, re-registering it when libpq's
 * socket is not the one watched. 0 or -1. */
static int watch(struct pg_group *g, unsigned want)
{
    int fd = g->c->pc ? PQsocket(g->c->pc) : -1;
    if (fd != g->io.fd && g->io.armed)
        evloop_io_forget(g->L, &g->io); /* closed by libpq (a drop or a connect's retry) */
    g->io.fd = fd;
    return fd < 0 ? 0 : evloop_io(g->L, &g->io, want);
}

/* Out of the loop, while the socket is still libpq's open one (or forget
 * it when libpq has closed it). */
static void io_off(struct pg_group *g)
{
    if (!g->io.armed)
        return;
    if (g->c->pc && PQsocket(g->c->pc) == g->io.fd)
        evloop_io(g->L, &g->io, 0);
    else
        evloop_io_forget(g->L, &g->io);
}

/* ------------------------------------------------------------ outcomes */

/* The statement under way ended in act (its results, a loss, the stop). */
static void ended(struct lock_client *c, enum pg_sm_act act)
{
    struct pg_group *g = c->g;
    g->inflight = false;
    g->flushing = false;
    pg_gather_clear(&g->acc);
    evloop_timer_cancel(g->L, &g->timer);
    run(c, act);
}

/* The session failed under a statement, or between operations. */
static void lost(struct lock_client *c)
{
    struct pg_group *g = c->g;
    io_off(g);
    enum pg_sm_act act = pg_sm_lost(&c->sm, PQerrorMessage(c->pc));
    if (g->inflight)
        ended(c, act);
}

/* ------------------------------------------------------------ connecting */

static void connect_failed(struct lock_client *c, const char *why)
{
    struct pg_group *g = c->g;
    struct lab_err err = {0};
    if (why)
        lab_err_set(&err, ETIMEDOUT, "PostgreSQL connection: %s", why);
    else
        pg_conn_error(&err, c->pc, "connection");
    io_off(g);
    g->connecting = false;
    evloop_timer_cancel(g->L, &g->timer);
    run(c, pg_sm_connected(&c->sm, false, &err));
}

/* One PQconnectPoll, the socket out of the loop meanwhile. */
static void poll_connect(struct lock_client *c)
{
    struct pg_group *g = c->g;
    io_off(g);
    switch (PQconnectPoll(c->pc)) {
    case PGRES_POLLING_OK:
        if (PQsetnonblocking(c->pc, 1) != 0 || watch(g, EV_READ) != 0)
            break;
        g->connecting = false;
        evloop_timer_cancel(g->L, &g->timer);
        run(c, pg_sm_connected(&c->sm, true, NULL));
        return;
    case PGRES_POLLING_READING:
        if (watch(g, EV_READ) == 0)
            return;
        break;
    case PGRES_POLLING_WRITING:
        if (watch(g, EV_WRITE) == 0)
            return;
        break;
    default:
        break;
    }
    connect_failed(c, NULL);
}

/* A new session in place of the old one; false when it cannot begin. */
static bool connect_begin(struct lock_client *c)
{
    struct pg_group *g = c->g;
    io_off(g);
    PQfinish(c->pc);
    c->pc = pg_connect(c->env, true);
    if (!c->pc || PQstatus(c->pc) == CONNECTION_BAD)
        return false;
    g->connecting = true;
    g->connect_deadline = lab_now_ns() + PG_CONNECT_TIMEOUT_S * 1000000000LL;
    g->io.fd = -1;
    if (watch(g, EV_WRITE) != 0) /* as if PQconnectPoll had said "writing" */
        return false;
    evloop_timer_at(g->L, &g->timer, g->connect_deadline);
    return true;
}

/* ------------------------------------------------------------ the acts */

/* Send the machine's statement and flush it; false when it could not be. */
static bool send_stmt(struct lock_client *c)
{
    struct pg_group *g = c->g;
    struct pg_sm *m = &c->sm;
    PGconn *pc = c->pc;
    int sent = m->nparams ? PQsendQueryParams(pc, m->sql, m->nparams, NULL, m->params, NULL,
                                              NULL, 0)
                          : PQsendQuery(pc, m->sql);
    int f = sent ? PQflush(pc) : -1;
    g->flushing = f == 1;
    if (f < 0 || watch(g, EV_READ | (g->flushing ? EV_WRITE : 0)) != 0)
        return false;
    g->inflight = true;
    evloop_timer_at(g->L, &g->timer, lab_now_ns() + WATCH_NS);
    return true;
}

static void run(struct lock_client *c, enum pg_sm_act act)
{
    struct pg_group *g = c->g;
    for (;;) {
        switch (act) {
        case PG_SM_CONNECT: {
            if (connect_begin(c))
                return;
            struct lab_err err = {0};
            pg_conn_error(&err, c->pc, "connection");
            io_off(g);
            act = pg_sm_connected(&c->sm, false, &err);
            continue;
        }
        case PG_SM_SEND:
            if (send_stmt(c))
                return;
            io_off(g);
            act = pg_sm_lost(&c->sm, PQerrorMessage(c->pc));
            continue;
        case PG_SM_CLOSE:
            io_off(g);
            PQfinish(c->pc);
            c->pc = NULL;
            /* fall through */
        case PG_SM_DONE:
            lock_caller_done(&g->k, c->sm.open_rc, c->sm.status, c->sm.release, &c->sm.err);
            return;
        case PG_SM_IGNORED:
            return;
        }
    }
}

static void on_io(struct ev_io *io, unsigned events)
{
    struct pg_group *g = (struct pg_group *)((char *)io - offsetof(struct pg_group, io));
    struct lock_client *c = g->c;
    PGconn *pc = c->pc;
    if (g->connecting) {
        poll_connect(c);
        return;
    }
    if (!pc)
        return;
    if (g->flushing) {
        if ((events & EV_READ) && !PQconsumeInput(pc)) {
            lost(c);
            return;
        }
        int f = PQflush(pc);
        if (f < 0 || (f == 0 && watch(g, EV_READ) != 0)) {
            lost(c);
            return;
        }
        g->flushing = f == 1;
        if (g->flushing)
            return;
    }
    if (!PQconsumeInput(pc)) {
        lost(c); /* between operations too: the next one opens a new session */
        return;
    }
    if (!g->inflight)
        return;
    while (!PQisBusy(pc)) {
        PGresult *r = PQgetResult(pc);
        if (!r) {
            if (PQstatus(pc) != CONNECTION_OK)
                io_off(g);
            ended(c, pg_gather_feed(&g->acc, pc, &c->sm));
            return;
        }
        pg_gather_add(&g->acc, r);
    }
}

static void on_timer(struct ev_timer *t)
{
    struct pg_group *g = (struct pg_group *)((char *)t - offsetof(struct pg_group, timer));
    struct lock_client *c = g->c;
    if (g->connecting) {
        if (lab_now_ns() >= g->connect_deadline)
            connect_failed(c, "timeout expired");
        else
            evloop_timer_at(g->L, &g->timer, g->connect_deadline);
    } else if (g->inflight) {
        enum pg_sm_act act = *c->env->stop ? pg_sm_stop(&c->sm) : PG_SM_IGNORED;
        if (act != PG_SM_IGNORED)
            ended(c, act);
        else
            evloop_timer_at(g->L, &g->timer, lab_now_ns() + WATCH_NS);
    }
}

/* ------------------------------------------------------------ hooks */

int pg_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                  const struct pg_sm_design *d, lock_opened_fn opened, void *arg,
                  struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    struct pg_group *g = calloc(1, sizeof *g);
    if (!c || !g) {
        free(c);
        free(g);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    c->g = g;
    g->c = c;
    g->L = loop;
    g->io = (struct ev_io){.fd = -1, .ready = on_io};
    evloop_timer_init(&g->timer, on_timer);
    pg_sm_init(&c->sm, d, env);
    lock_caller_init(&g->k, loop);
    lock_caller_begin(&g->k, opened, NULL, NULL, arg);
    run(c, pg_sm_open(&c->sm));
    lock_caller_end(&g->k);
    *out = c;
    return 0;
}

void pg_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                      lock_acquired_fn done, void *arg)
{
    struct pg_group *g = c->g;
    lock_caller_begin(&g->k, NULL, done, NULL, arg);
    run(c, pg_sm_acquire(&c->sm, key, wait_ns));
    lock_caller_end(&g->k);
}

void pg_group_release(struct lock_client *c, const char *key, lock_released_fn done, void *arg)
{
    struct pg_group *g = c->g;
    lock_caller_begin(&g->k, NULL, NULL, done, arg);
    run(c, pg_sm_release(&c->sm, key));
    lock_caller_end(&g->k);
}

void pg_group_close(struct lock_client *c)
{
    if (!c)
        return;
    struct pg_group *g = c->g;
    evloop_timer_cancel(g->L, &g->timer);
    lock_caller_close(&g->k);
    io_off(g);
    pg_gather_clear(&g->acc);
    PQfinish(c->pc);
    free(g);
    free(c);
}
