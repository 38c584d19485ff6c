/*
 * mysql_async.c - one MariaDB statement at a time per logical client, on a
 * client group's event loop (see mysql_async.h), through MariaDB
 * Connector/C's non-blocking calls.
 *
 * The connection is opened with MYSQL_OPT_NONBLOCK; every call that may
 * wait on the socket has a _start and a _cont form, and returns what it
 * waits for (MYSQL_WAIT_READ, _WRITE, _TIMEOUT). The loop watches the
 * socket for that, and a timer stands for the library's timeout (the same
 * connect, read and write timeouts as a blocking connection,
 * mysql_conn_new): when it runs out the call is continued with
 * MYSQL_WAIT_TIMEOUT and fails as the blocking call would. A statement is
 * mysql_real_query, then mysql_store_result (its rows, if any, come whole:
 * the stored result is freed without I/O, so mysql_free_result needs no
 * _start form here); the designs send one statement per string, so there
 * is never a next result to read.
 *
 * Connections come up at most CONNECTING_MAX handshakes at a time per
 * process, the others queued in order, as a pool fills: a group opening a
 * thousand at once would otherwise have the server greet them all at once,
 * and on a loaded machine some greetings took longer than the connect
 * timeout (the connection failed to start, within max_connections).
 *
 * A stopping run makes every timer of the group due (harness/run/group.c).
 * A statement that waits inside the server for a lock (GET_LOCK's slice,
 * FOR UPDATE WAIT) then ends at once: its connection is closed, the server
 * ends the session and gives back whatever it held or was granted
 * meanwhile, and the design reports LOCK_TIMEOUT. Any other statement
 * keeps waiting for its answer, which comes within a round trip (its
 * timer is not armed again, so a silent server is bounded by the
 * runner's grace after the stop, which then kills the group).
 */
#include "mysql_async.h"

#include <errno.h>
#include <mysql.h>
#include <stdlib.h>
#include <string.h>

#define IO_GUARD_NS (10LL * 1000000000) /* a wait without a library timeout: look again */
#define CONNECTING_MAX 32                /* handshakes under way at once in a process */

static void ma_query_start(struct lock_client *c);

/* The process's handshakes under way, and the clients waiting for a turn
 * (one loop per process: a group's). */
static int connecting_n;
static struct mysql_async *waiting_head, *waiting_tail;

/* A turn to connect: 1 now, 0 queued (the kick runs again when it comes). */
static int ma_turn_take(struct mysql_async *a)
{
    if (a->has_turn)
        return 1;
    if (connecting_n < CONNECTING_MAX) {
        connecting_n++;
        a->has_turn = true;
        return 1;
    }
    if (!a->awaits_turn) {
        a->awaits_turn = true;
        a->next_waiting = NULL;
        if (waiting_tail)
            waiting_tail->next_waiting = a;
        else
            waiting_head = a;
        waiting_tail = a;
    }
    return 0;
}

/* Give the turn back (or leave the queue); the first waiting gets it. */
static void ma_turn_give_back(struct mysql_async *a)
{
    if (a->awaits_turn) {
        struct mysql_async **p = &waiting_head, *prev = NULL;
        while (*p && *p != a)
            prev = *p, p = &(*p)->next_waiting;
        if (*p)
            *p = a->next_waiting;
        if (waiting_tail == a)
            waiting_tail = prev;
        a->awaits_turn = false;
        return;
    }
    if (!a->has_turn)
        return;
    a->has_turn = false;
    connecting_n--;
    struct mysql_async *next = waiting_head;
    if (!next)
        return;
    waiting_head = next->next_waiting;
    if (!waiting_head)
        waiting_tail = NULL;
    next->awaits_turn = false;
    next->has_turn = true;
    connecting_n++;
    evloop_defer(next->L, &next->kick);
}

/* The statement (or the open) is over: tell whoever waits for it. */
static void ma_finish(struct lock_client *c, int64_t rc)
{
    struct mysql_async *a = c->as;
    mysql_async_fn fn = a->opened ? a->opened : a->done;
    a->opened = NULL;
    a->done = NULL;
    if (fn)
        fn(c, rc, &a->qerr);
}

/* Close the connection (and one being opened), whatever is under way. */
static void ma_drop(struct lock_client *c)
{
    struct mysql_async *a = c->as;
    evloop_io(a->L, &a->io, 0);
    evloop_timer_cancel(a->L, &a->timer);
    a->io.fd = -1;
    if (a->res)
        mysql_free_result(a->res);
    a->res = NULL;
    if (a->connecting)
        mysql_close(a->connecting);
    a->connecting = NULL;
    ma_turn_give_back(a);
    if (c->m)
        mysql_close(c->m);
    c->m = NULL;
    c->in_txn = false;
    a->op = MA_IDLE;
}

/* The statement failed on the server or on the way: err from the handle,
 * and a broken connection dropped, as mysql_lock_exec's does. */
static void ma_fail(struct lock_client *c, const char *what)
{
    struct mysql_async *a = c->as;
    mysql_conn_error(c->m, what, &a->qerr);
    a->op = MA_IDLE;
    if (mysql_lock_broken(a->qerr.code))
        ma_drop(c);
    ma_finish(c, -1);
}

static void ma_call_done(struct lock_client *c);

/* A _start or _cont call returned st: done, or wait for what it says. */
static void ma_progress(struct lock_client *c, int st)
{
    struct mysql_async *a = c->as;
    if (st == 0) {
        evloop_timer_cancel(a->L, &a->timer);
        ma_call_done(c);
        return;
    }
    MYSQL *m = a->op == MA_CONNECT ? a->connecting : c->m;
    int fd = (int)mysql_get_socket(m);
    if (fd != a->io.fd) {
        evloop_io(a->L, &a->io, 0);
        a->io.fd = fd;
    }
    unsigned want = (st & (MYSQL_WAIT_READ | MYSQL_WAIT_EXCEPT) ? EV_READ : 0) |
                    (st & MYSQL_WAIT_WRITE ? EV_WRITE : 0);
    if (evloop_io(a->L, &a->io, want) != 0) {
        lab_err_set(&a->qerr, errno, "MariaDB: cannot watch the connection: %s",
                    strerror(errno));
        a->op = MA_IDLE;
        ma_drop(c);
        ma_finish(c, -1);
        return;
    }
    a->io_timeout = (st & MYSQL_WAIT_TIMEOUT) != 0;
    int64_t wait = a->io_timeout ? (int64_t)mysql_get_timeout_value_ms(m) * 1000000 : IO_GUARD_NS;
    a->io_deadline = lab_now_ns() + wait;
    evloop_timer_at(a->L, &a->timer, a->io_deadline);
}

/* Continue the call under way with the events that came. */
static void ma_resume(struct lock_client *c, int events)
{
    struct mysql_async *a = c->as;
    int st = 0;
    switch (a->op) {
    case MA_CONNECT:
        st = mysql_real_connect_cont(&a->conn_ret, a->connecting, events);
        break;
    case MA_QUERY:
        st = mysql_real_query_cont(&a->query_ret, c->m, events);
        break;
    case MA_STORE:
        st = mysql_store_result_cont(&a->res, c->m, events);
        break;
    case MA_IDLE:
        return;
    }
    ma_progress(c, st);
}

/* The call under way completed. */
static void ma_call_done(struct lock_client *c)
{
    struct mysql_async *a = c->as;
    switch (a->op) {
    case MA_CONNECT: {
        MYSQL *m = a->connecting;
        a->connecting = NULL;
        a->op = MA_IDLE;
        ma_turn_give_back(a);
        if (!a->conn_ret) {
            const struct lock_endpoint *at = &c->env->servers->node[0];
            mysql_conn_refused(m, "the MariaDB lock store", at->host, at->port, &a->qerr);
            evloop_io(a->L, &a->io, 0);
            a->io.fd = -1;
            mysql_close(m);
            ma_finish(c, -1);
            return;
        }
        c->m = m;
        c->in_txn = false;
        if (a->opened)
            ma_finish(c, 0);
        else
            ma_query_start(c);
        return;
    }
    case MA_QUERY:
        if (a->query_ret != 0) {
            ma_fail(c, "query");
            return;
        }
        a->op = MA_STORE;
        ma_progress(c, mysql_store_result_start(&a->res, c->m));
        return;
    case MA_STORE: {
        MYSQL_RES *r = a->res;
        a->res = NULL;
        if (!r && (a->ncols > 0 || mysql_field_count(c->m) != 0)) {
            ma_fail(c, "result");
            return;
        }
        a->op = MA_IDLE;
        int64_t rc;
        if (r) {
            int n = a->ncols < 2 ? a->ncols : 2;
            rc = mysql_conn_take_ints(r, a->row, n, &a->row_null);
            if (a->ncols == 0)
                rc = 0;
        } else {
            rc = (int64_t)mysql_affected_rows(c->m);
        }
        ma_finish(c, rc);
        return;
    }
    case MA_IDLE:
        return;
    }
}

static void ma_connect_start(struct lock_client *c)
{
    struct mysql_async *a = c->as;
    if (!ma_turn_take(a))
        return;
    MYSQL *m = mysql_conn_new(MYSQL_LOCK_TIMEOUT_MS, &a->qerr);
    if (!m) {
        ma_turn_give_back(a);
        ma_finish(c, -1);
        return;
    }
    mysql_options(m, MYSQL_OPT_NONBLOCK, 0);
    const struct lock_endpoint *at = &c->env->servers->node[0];
    a->connecting = m;
    a->op = MA_CONNECT;
    ma_progress(c, mysql_real_connect_start(&a->conn_ret, m, at->host, MYSQL_CONN_USER,
                                         MYSQL_CONN_PASSWORD, MYSQL_CONN_DB,
                                         (unsigned)at->port, NULL, 0));
}

static void ma_query_start(struct lock_client *c)
{
    struct mysql_async *a = c->as;
    if (a->build(c, a->sql, sizeof a->sql, &a->qerr) != 0) {
        ma_finish(c, -1);
        return;
    }
    c->env->stats->round_trips++;
    a->op = MA_QUERY;
    ma_progress(c, mysql_real_query_start(&a->query_ret, c->m, a->sql, strlen(a->sql)));
}

static void ma_on_kick(struct ev_defer *d)
{
    struct mysql_async *a = (struct mysql_async *)((char *)d - offsetof(struct mysql_async, kick));
    struct lock_client *c = a->client;
    if (a->deliver) {
        a->deliver = false;
        ma_finish(c, a->deliver_rc);
    } else if (!c->m) {
        ma_connect_start(c);
    } else {
        ma_query_start(c);
    }
}

static void ma_on_io(struct ev_io *io, unsigned events)
{
    struct mysql_async *a = (struct mysql_async *)((char *)io - offsetof(struct mysql_async, io));
    if (a->op == MA_IDLE) { /* the server spoke between statements (it is closing): the
                               next statement finds out */
        evloop_io(a->L, io, 0);
        return;
    }
    ma_resume(a->client, (events & EV_READ ? MYSQL_WAIT_READ : 0) |
                          (events & EV_WRITE ? MYSQL_WAIT_WRITE : 0));
}

static void ma_on_timer(struct ev_timer *t)
{
    struct mysql_async *a = (struct mysql_async *)((char *)t - offsetof(struct mysql_async, timer));
    struct lock_client *c = a->client;
    if (a->op == MA_IDLE)
        return;
    if (lab_now_ns() < a->io_deadline) { /* made due by a stopping run */
        if (a->waits && a->op != MA_CONNECT && *c->env->stop) {
            ma_drop(c);
            ma_finish(c, MYSQL_ASYNC_STOPPED);
        }
        return;
    }
    if (!a->io_timeout) { /* no timeout of the library's: keep waiting */
        a->io_deadline = lab_now_ns() + IO_GUARD_NS;
        evloop_timer_at(a->L, &a->timer, a->io_deadline);
        return;
    }
    ma_resume(c, MYSQL_WAIT_TIMEOUT);
}

int mysql_async_open(struct lock_client **out, const struct lock_env *env, struct evloop *L,
                     mysql_async_fn opened, struct lab_err *err)
{
    *out = NULL;
    if (env->servers->n < 1) {
        lab_err_set(err, EINVAL, "no MariaDB server to talk to");
        return -1;
    }
    struct lock_client *c = calloc(1, sizeof *c);
    struct mysql_async *a = calloc(1, sizeof *a);
    if (!c || !a) {
        free(c);
        free(a);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    if (lab_random_hex(c->token, 16) != 0) {
        free(c);
        free(a);
        lab_err_set(err, EIO, "no random bytes for a token");
        return -1;
    }
    c->env = env;
    c->as = a;
    a->client = c;
    a->L = L;
    a->io = (struct ev_io){.fd = -1, .ready = ma_on_io};
    evloop_timer_init(&a->timer, ma_on_timer);
    evloop_timer_init(&a->pause, NULL);
    a->kick.run = ma_on_kick;
    a->opened = opened;
    evloop_defer(L, &a->kick); /* connects from the loop */
    *out = c;
    return 0;
}

void mysql_async_run(struct lock_client *c, mysql_async_sql_fn build, int ncols, bool waits,
                     mysql_async_fn done)
{
    struct mysql_async *a = c->as;
    a->build = build;
    a->ncols = ncols;
    a->waits = waits;
    a->done = done;
    a->deliver = false;
    evloop_defer(a->L, &a->kick);
}

void mysql_async_later(struct lock_client *c, int64_t rc, mysql_async_fn done)
{
    struct mysql_async *a = c->as;
    a->done = done;
    a->deliver = true;
    a->deliver_rc = rc;
    evloop_defer(a->L, &a->kick);
}

void mysql_async_close(struct lock_client *c)
{
    if (!c)
        return;
    struct mysql_async *a = c->as;
    evloop_defer_cancel(a->L, &a->kick);
    evloop_timer_cancel(a->L, &a->pause);
    a->opened = NULL;
    a->done = NULL;
    ma_drop(c);
    free(a);
    free(c);
}
