/*
 * mysql_drive_group.c - the client groups' driver of the MariaDB state
 * machine (mysql_drive.h): the machine's acts through MariaDB
 * Connector/C's non-blocking calls on the group's event loop.
 *
 * A connection is opened with MYSQL_OPT_NONBLOCK; every call that may wait
 * on the socket has a _start and a _cont form, and returns what it waits
 * for (MYSQL_WAIT_READ, _WRITE, _TIMEOUT). The loop watches the socket for
 * that, and a timer stands for the library's timeout (the blocking
 * connection's connect, read and write timeouts, mysql_conn_new): when it
 * runs out the call is continued with MYSQL_WAIT_TIMEOUT and fails as the
 * blocking call would, unless the socket is ready by then (a client held
 * by a fault past the timeout reads what came meanwhile first, as a
 * stopped process's poll does when continued). SEND is mysql_real_query
 * then mysql_store_result; CONNECT, SEND and DONE's outcome go from the
 * loop (a deferred kick), never inside the hook that asked; SLEEP is a
 * timer.
 *
 * Every client's socket, timers and kick are its own (objects of its
 * struct ev_owner), so a fault holds or kills one client alone
 * (lock_async_ops.client_faults). Connections come up at most
 * CONNECTING_MAX handshakes at a time per process, the others queued in
 * order and handed a turn as one ends, as a pool fills: a group opening a
 * thousand at once would otherwise have the server greet them all at once,
 * and on a loaded machine some greetings took longer than the connect
 * timeout. A turn never stalls the others: a client held by a fault loses
 * its turn to the first that asks for one (its handshake goes on, past
 * the limit, when it is released), and a queued client looks again every
 * TURN_RECHECK_NS.
 *
 * A stopping run makes every timer of the group due (harness/run/group.c).
 * A statement that waits inside the server for a lock (m->waits) then ends
 * at once: its connection is closed, the server ends the session and gives
 * back whatever it held or was granted meanwhile, and the machine hears
 * mysql_sm_abandoned. Any other statement keeps waiting for its answer,
 * which comes within a round trip (its timer is not armed again, so a
 * silent server is bounded by the runner's grace after the stop).
 */
#include "mysql_drive.h"

#include <errno.h>
#include <mysql.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "evloop.h"
#include "lock_caller.h"

#define IO_GUARD_NS (10LL * 1000000000)     /* a wait without a library timeout: look again */
#define CONNECTING_MAX 32                    /* handshakes under way at once in a process */
#define TURN_RECHECK_NS (100LL * 1000000)    /* a queued client looks for a held turn */

enum gop { G_IDLE, G_SLEEP, G_TURN, G_CONNECT, G_QUERY, G_STORE };

struct mysql_group {
    struct lock_client *c;
    struct evloop *L;
    struct ev_owner *owner;    /* the logical client on the loop (NULL: none) */
    struct ev_io io;           /* the socket a call waits on */
    unsigned want;             /* ... for what (EV_READ | EV_WRITE) */
    struct ev_timer timer;     /* the library's timeout for that wait, a turn's recheck, or
                                  the machine's SLEEP */
    struct ev_defer kick;      /* does pending from the loop */
    enum mysql_sm_act pending; /* CONNECT, SEND or DONE */
    enum gop op;               /* the call under way */
    int64_t io_deadline;       /* when the library's timeout is really due */
    bool io_timeout;           /* the library asked for that timeout */
    MYSQL *conn_ret;           /* what mysql_real_connect_start/_cont gave */
    int query_ret;
    MYSQL_RES *res;
    int turn;                  /* 1 + its slot in turns[]; 0: none */
    bool queued;               /* waiting for a turn (next_waiting links the queue) */
    struct mysql_group *next_waiting;
    struct lock_caller k;      /* who waits (handed over from the kick, never in a hook) */
};

/* The process's handshakes under way, and the clients waiting for a turn
 * (one loop per process: a group's). */
static struct mysql_group *turns[CONNECTING_MAX];
static struct mysql_group *waiting_head, *waiting_tail;

static void run(struct lock_client *c, enum mysql_sm_act act);

/* ------------------------------------------------------------ turns */

static void unqueue(struct mysql_group *g)
{
    if (!g->queued)
        return;
    struct mysql_group **p = &waiting_head, *prev = NULL;
    while (*p != g)
        prev = *p, p = &(*p)->next_waiting;
    *p = g->next_waiting;
    if (waiting_tail == g)
        waiting_tail = prev;
    g->queued = false;
}

/* A turn to connect: true now, false queued (the kick runs again when it
 * comes, or the recheck finds one). */
static bool turn_take(struct mysql_group *g)
{
    if (g->turn)
        return true;
    for (int i = 0; i < CONNECTING_MAX; i++) {
        struct mysql_group *h = turns[i];
        if (h && !(h->owner && h->owner->held))
            continue;
        if (h)
            h->turn = 0; /* held by a fault: its turn passes on */
        turns[i] = g;
        g->turn = i + 1;
        unqueue(g);
        return true;
    }
    if (!g->queued) {
        g->queued = true;
        g->next_waiting = NULL;
        if (waiting_tail)
            waiting_tail->next_waiting = g;
        else
            waiting_head = g;
        waiting_tail = g;
    }
    g->op = G_TURN;
    if (!*g->c->env->stop) /* a stopping run makes timers due at every turn of the loop */
        evloop_timer_at(g->L, &g->timer, lab_now_ns() + TURN_RECHECK_NS);
    return false;
}

/* Give the turn back (or leave the queue); the first waiting gets it. */
static void turn_give_back(struct mysql_group *g)
{
    unqueue(g);
    if (!g->turn)
        return;
    int i = g->turn - 1;
    g->turn = 0;
    turns[i] = NULL;
    struct mysql_group *next = waiting_head;
    if (!next)
        return;
    unqueue(next);
    turns[i] = next;
    next->turn = i + 1;
    evloop_defer(next->L, &next->kick);
}

/* ------------------------------------------------------------ the connection */

/* Close the connection (up or coming up), whatever is under way. */
static void drop(struct lock_client *c)
{
    struct mysql_group *g = c->g;
    evloop_io(g->L, &g->io, 0);
    g->io.fd = -1;
    evloop_timer_cancel(g->L, &g->timer);
    if (g->res)
        mysql_free_result(g->res);
    g->res = NULL;
    turn_give_back(g);
    mysql_conn_close(c->m);
    c->m = NULL;
    g->op = G_IDLE;
}

/* The call under way cannot go on: the connection is closed, and the
 * machine told (a handshake that failed, or a connection lost). */
static void broke(struct lock_client *c, const struct lab_err *err)
{
    bool connecting = c->g->op == G_CONNECT;
    drop(c);
    run(c, connecting ? mysql_sm_connected(&c->sm, false, err, lab_now_ns())
                      : mysql_sm_lost(&c->sm, err, lab_now_ns()));
}

static void call_done(struct lock_client *c);

/* A _start or _cont call returned st: done, or wait for what it says. */
static void progress(struct lock_client *c, int st)
{
    struct mysql_group *g = c->g;
    if (st == 0) {
        evloop_timer_cancel(g->L, &g->timer);
        call_done(c);
        return;
    }
    int fd = (int)mysql_get_socket(c->m);
    if (fd != g->io.fd) {
        evloop_io(g->L, &g->io, 0);
        g->io.fd = fd;
    }
    g->want = (st & (MYSQL_WAIT_READ | MYSQL_WAIT_EXCEPT) ? EV_READ : 0) |
              (st & MYSQL_WAIT_WRITE ? EV_WRITE : 0);
    if (evloop_io(g->L, &g->io, g->want) != 0) {
        struct lab_err err;
        lab_err_set(&err, errno, "MariaDB: cannot watch the connection: %s", strerror(errno));
        broke(c, &err);
        return;
    }
    g->io_timeout = (st & MYSQL_WAIT_TIMEOUT) != 0;
    int64_t wait = g->io_timeout ? (int64_t)mysql_get_timeout_value_ms(c->m) * 1000000 : IO_GUARD_NS;
    g->io_deadline = lab_now_ns() + wait;
    evloop_timer_at(g->L, &g->timer, g->io_deadline);
}

/* Continue the call under way with the events that came. */
static void resume(struct lock_client *c, int events)
{
    struct mysql_group *g = c->g;
    int st;
    if (g->op == G_CONNECT)
        st = mysql_real_connect_cont(&g->conn_ret, c->m, events);
    else if (g->op == G_QUERY)
        st = mysql_real_query_cont(&g->query_ret, c->m, events);
    else if (g->op == G_STORE)
        st = mysql_store_result_cont(&g->res, c->m, events);
    else
        return;
    progress(c, st);
}

/* The call under way completed. */
static void call_done(struct lock_client *c)
{
    struct mysql_group *g = c->g;
    if (g->op == G_CONNECT) {
        struct lab_err err = {0};
        if (!g->conn_ret) {
            const struct lock_endpoint *at = &c->env->servers->node[0];
            mysql_conn_refused(c->m, "the MariaDB lock store", at->host, at->port, &err);
            broke(c, &err);
            return;
        }
        g->op = G_IDLE;
        turn_give_back(g);
        run(c, mysql_sm_connected(&c->sm, true, NULL, lab_now_ns()));
    } else if (g->op == G_QUERY && g->query_ret == 0) {
        g->op = G_STORE;
        progress(c, mysql_store_result_start(&g->res, c->m));
    } else { /* the statement is over: its error, or its result */
        struct mysql_sm_result r;
        mysql_drive_read(c->m, g->op == G_QUERY ? g->query_ret : 0, g->res, &r);
        g->res = NULL; /* freed by the read */
        g->op = G_IDLE;
        if (r.err.code && mysql_drive_gone(r.err.code))
            broke(c, &r.err);
        else
            run(c, mysql_sm_result(&c->sm, &r, lab_now_ns()));
    }
}

static void connect_start(struct lock_client *c)
{
    struct mysql_group *g = c->g;
    if (!turn_take(g))
        return;
    struct lab_err err = {0};
    g->op = G_CONNECT;
    c->m = mysql_conn_new(MYSQL_LOCK_TIMEOUT_MS, &err);
    if (!c->m) {
        broke(c, &err);
        return;
    }
    mysql_options(c->m, MYSQL_OPT_NONBLOCK, 0);
    const struct lock_endpoint *at = &c->env->servers->node[0];
    progress(c, mysql_real_connect_start(&g->conn_ret, c->m, at->host, MYSQL_CONN_USER,
                                         MYSQL_CONN_PASSWORD, MYSQL_CONN_DB,
                                         (unsigned)at->port, NULL, 0));
}

/* ------------------------------------------------------------ the loop's callbacks */

static void on_kick(struct ev_defer *d)
{
    struct mysql_group *g = (struct mysql_group *)((char *)d - offsetof(struct mysql_group, kick));
    struct lock_client *c = g->c;
    if (g->pending == MYSQL_SM_DONE) {
        lock_caller_done(&g->k, c->sm.open_rc, c->sm.status, c->sm.release, &c->sm.err);
    } else if (g->op != G_IDLE && g->op != G_TURN) {
        return; /* a turn handed over after the recheck took one */
    } else if (g->pending == MYSQL_SM_CONNECT) {
        connect_start(c);
    } else {
        g->op = G_QUERY;
        progress(c, mysql_real_query_start(&g->query_ret, c->m, c->sm.sql, strlen(c->sm.sql)));
    }
}

static void on_io(struct ev_io *io, unsigned events)
{
    struct mysql_group *g = (struct mysql_group *)((char *)io - offsetof(struct mysql_group, io));
    if (g->op < G_CONNECT) { /* the server spoke between statements (it is closing): the
                                next statement finds out */
        evloop_io(g->L, io, 0);
        return;
    }
    resume(g->c, (events & EV_READ ? MYSQL_WAIT_READ : 0) |
                     (events & EV_WRITE ? MYSQL_WAIT_WRITE : 0));
}

static void on_timer(struct ev_timer *t)
{
    struct mysql_group *g = (struct mysql_group *)((char *)t - offsetof(struct mysql_group, timer));
    struct lock_client *c = g->c;
    int64_t now = lab_now_ns();
    if (g->op == G_SLEEP) {
        g->op = G_IDLE;
        run(c, mysql_sm_timer(&c->sm, now));
    } else if (g->op == G_TURN) {
        connect_start(c);
    } else if (g->op == G_IDLE) {
        return;
    } else if (now < g->io_deadline) { /* made due by a stopping run */
        if (c->sm.waits && g->op != G_CONNECT && *c->env->stop) {
            drop(c);
            run(c, mysql_sm_abandoned(&c->sm, now));
        }
    } else if (!g->io_timeout) { /* no timeout of the library's: keep waiting */
        g->io_deadline = now + IO_GUARD_NS;
        evloop_timer_at(g->L, &g->timer, g->io_deadline);
    } else {
        struct pollfd p = {.fd = g->io.fd, .events = (short)((g->want & EV_READ ? POLLIN : 0) |
                                                             (g->want & EV_WRITE ? POLLOUT : 0))};
        int ev = MYSQL_WAIT_TIMEOUT;
        if (poll(&p, 1, 0) == 1)
            ev = (p.revents & POLLOUT ? MYSQL_WAIT_WRITE : 0) |
                 (p.revents & ~POLLOUT ? MYSQL_WAIT_READ : 0);
        resume(c, ev);
    }
}

/* Do the machine's act: SLEEP on a timer, the others from the loop (an
 * outcome is never handed over inside the hook that started it). */
static void run(struct lock_client *c, enum mysql_sm_act act)
{
    struct mysql_group *g = c->g;
    if (act == MYSQL_SM_SLEEP) {
        g->op = G_SLEEP;
        evloop_timer_at(g->L, &g->timer, c->sm.wake_at);
    } else {
        g->pending = act;
        evloop_defer(g->L, &g->kick);
    }
}

/* ---------------------------------------------------------------- hooks */

int mysql_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                     enum mysql_sm_kind kind, lock_opened_fn opened, void *arg,
                     struct lab_err *err)
{
    struct lock_client *c = *out = mysql_drive_client(env, kind, err);
    struct mysql_group *g = c ? calloc(1, sizeof *g) : NULL;
    if (!g) {
        if (c)
            lab_err_set(err, ENOMEM, "out of memory");
        free(c);
        *out = NULL;
        return -1;
    }
    c->g = g;
    g->c = c;
    g->L = loop;
    g->owner = evloop_owner_current(loop);
    g->io = (struct ev_io){.fd = -1, .ready = on_io};
    evloop_timer_init(&g->timer, on_timer);
    g->kick.run = on_kick;
    lock_caller_init(&g->k, loop);
    lock_caller_begin(&g->k, opened, NULL, NULL, arg);
    run(c, mysql_sm_open(&c->sm, lab_now_ns()));
    lock_caller_end(&g->k);
    return 0;
}

void mysql_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                         lock_acquired_fn done, void *arg)
{
    lock_caller_begin(&c->g->k, NULL, done, NULL, arg);
    run(c, mysql_sm_acquire(&c->sm, key, wait_ns, lab_now_ns()));
    lock_caller_end(&c->g->k);
}

void mysql_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                         void *arg)
{
    lock_caller_begin(&c->g->k, NULL, NULL, done, arg);
    run(c, mysql_sm_release(&c->sm, key, lab_now_ns()));
    lock_caller_end(&c->g->k);
}

void mysql_group_close(struct lock_client *c)
{
    if (!c)
        return;
    struct mysql_group *g = c->g;
    evloop_defer_cancel(g->L, &g->kick);
    lock_caller_close(&g->k);
    drop(c);
    free(g);
    free(c);
}
