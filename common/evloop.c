/*
 * evloop.c - epoll and a binary min-heap of timers (see evloop.h).
 *
 * The heap holds pointers to the callers' timers, each of which remembers
 * its slot, so arming, moving and cancelling are O(log n) with no search.
 * epoll_pwait2 waits with nanosecond precision: a 1 ms retry pause or a
 * 200 us business time would otherwise be rounded up to whole
 * milliseconds (epoll_wait's unit), which would be the lab's own latency.
 *
 * Deferred work (evloop_defer) runs just before the wait: a group's clients
 * queue their commands while the loop dispatches a batch of replies, and
 * the writes go out together, each without arming EPOLLOUT and waiting for
 * it (two epoll_ctl calls and a wake-up saved per command).
 */
#include "evloop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define EV_BATCH 1024

struct evloop {
    int ep;                         /* the epoll descriptor */
    struct ev_timer **heap;         /* armed timers, earliest first */
    int n, cap;                     /* heap size and capacity */
    struct epoll_event batch[EV_BATCH]; /* events being dispatched */
    int batch_n;                    /* how many of them (0 when not dispatching) */
    struct ev_defer *defer_head, *defer_tail; /* to run before the next wait, in order */
    int n_defer;                    /* how many */
};

struct evloop *evloop_new(struct lab_err *err)
{
    struct evloop *L = calloc(1, sizeof *L);
    if (!L || (L->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        lab_err_set(err, errno, "event loop: %s", strerror(errno));
        free(L);
        return NULL;
    }
    return L;
}

void evloop_free(struct evloop *L)
{
    if (!L)
        return;
    close(L->ep);
    free(L->heap);
    free(L);
}

int evloop_io(struct evloop *L, struct ev_io *io, unsigned want)
{
    if (want == io->armed)
        return 0;
    struct epoll_event ev = {.data.ptr = io};
    ev.events = (want & EV_READ ? EPOLLIN : 0) | (want & EV_WRITE ? EPOLLOUT : 0);
    int op = !io->armed ? EPOLL_CTL_ADD : !want ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
    if (epoll_ctl(L->ep, op, io->fd, &ev) != 0 && !(op == EPOLL_CTL_DEL && errno == EBADF))
        return -1;
    io->armed = want;
    if (!want)
        evloop_io_forget(L, io);
    return 0;
}

void evloop_io_forget(struct evloop *L, struct ev_io *io)
{
    io->armed = 0;
    for (int i = 0; i < L->batch_n; i++)
        if (L->batch[i].data.ptr == io)
            L->batch[i].data.ptr = NULL; /* removed: never dispatch it */
}

/* ------------------------------------------------------------ deferred work */

void evloop_defer(struct evloop *L, struct ev_defer *d)
{
    if (d->queued)
        return;
    d->queued = true;
    d->next = NULL;
    d->prev = L->defer_tail;
    if (L->defer_tail)
        L->defer_tail->next = d;
    else
        L->defer_head = d;
    L->defer_tail = d;
    L->n_defer++;
}

void evloop_defer_cancel(struct evloop *L, struct ev_defer *d)
{
    if (!d->queued)
        return;
    d->queued = false;
    L->n_defer--;
    if (d->prev)
        d->prev->next = d->next;
    else
        L->defer_head = d->next;
    if (d->next)
        d->next->prev = d->prev;
    else
        L->defer_tail = d->prev;
}

/* Run as many as were queued when it began, first first: what they queue
 * meanwhile waits for the next round (bounded, even if one keeps queueing
 * itself). */
static void run_deferred(struct evloop *L)
{
    for (int n = L->n_defer; n > 0 && L->defer_head; n--) {
        struct ev_defer *d = L->defer_head;
        evloop_defer_cancel(L, d);
        d->run(d);
    }
}

/* ------------------------------------------------------------------ timers */

void evloop_timer_init(struct ev_timer *t, void (*fire)(struct ev_timer *t))
{
    t->at_ns = 0;
    t->slot = -1;
    t->fire = fire;
}

static void heap_put(struct evloop *L, int i, struct ev_timer *t)
{
    L->heap[i] = t;
    t->slot = i;
}

static void heap_up(struct evloop *L, int i)
{
    struct ev_timer *t = L->heap[i];
    while (i > 0) {
        int p = (i - 1) / 2;
        if (L->heap[p]->at_ns <= t->at_ns)
            break;
        heap_put(L, i, L->heap[p]);
        i = p;
    }
    heap_put(L, i, t);
}

static void heap_down(struct evloop *L, int i)
{
    struct ev_timer *t = L->heap[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= L->n)
            break;
        if (c + 1 < L->n && L->heap[c + 1]->at_ns < L->heap[c]->at_ns)
            c++;
        if (L->heap[c]->at_ns >= t->at_ns)
            break;
        heap_put(L, i, L->heap[c]);
        i = c;
    }
    heap_put(L, i, t);
}

void evloop_timer_cancel(struct evloop *L, struct ev_timer *t)
{
    int i = t->slot;
    if (i < 0)
        return;
    t->slot = -1;
    struct ev_timer *last = L->heap[--L->n];
    if (i == L->n)
        return;
    heap_put(L, i, last);
    heap_up(L, i);
    heap_down(L, last->slot);
}

int evloop_timer_at(struct evloop *L, struct ev_timer *t, int64_t at_ns)
{
    evloop_timer_cancel(L, t);
    if (L->n == L->cap) {
        int cap = L->cap ? 2 * L->cap : 1024;
        struct ev_timer **h = realloc(L->heap, (size_t)cap * sizeof *h);
        if (!h)
            return -1;
        L->heap = h;
        L->cap = cap;
    }
    t->at_ns = at_ns;
    heap_put(L, L->n++, t);
    heap_up(L, t->slot);
    return 0;
}

void evloop_timers_due_now(struct evloop *L)
{
    for (int i = 0; i < L->n; i++)
        L->heap[i]->at_ns = 0; /* all equal: still a heap */
}

/* Fire the timers due at now; returns how many. */
static int fire_due(struct evloop *L, int64_t now)
{
    int fired = 0;
    while (L->n > 0 && L->heap[0]->at_ns <= now) {
        struct ev_timer *t = L->heap[0];
        evloop_timer_cancel(L, t);
        t->fire(t);
        fired++;
    }
    return fired;
}

int evloop_run_once(struct evloop *L, int64_t max_wait_ns)
{
    int handled = fire_due(L, lab_now_ns());
    run_deferred(L);
    /* the wait is reckoned after the deferred work, which may arm a timer
     * (a reply handed over on the loop starts the client's next step) */
    int64_t now = lab_now_ns(), wait = max_wait_ns;
    if (handled || L->defer_head)
        wait = 0; /* what the timers sent may have answers already, or work was
                     queued again meanwhile: look, do not sleep */
    else if (L->n > 0 && L->heap[0]->at_ns - now < wait)
        wait = L->heap[0]->at_ns - now;
    if (wait < 0)
        wait = 0;
    struct timespec ts = {wait / 1000000000, wait % 1000000000};
    int n = epoll_pwait2(L->ep, L->batch, EV_BATCH, &ts, NULL);
    if (n < 0 && errno == ENOSYS) /* a kernel before 5.11: whole milliseconds */
        n = epoll_wait(L->ep, L->batch, EV_BATCH, (int)((wait + 999999) / 1000000));
    if (n < 0)
        return errno == EINTR ? handled : -1;
    L->batch_n = n;
    for (int i = 0; i < n; i++) {
        struct ev_io *io = L->batch[i].data.ptr;
        if (!io)
            continue; /* removed by an earlier callback of this batch */
        uint32_t e = L->batch[i].events;
        unsigned ev = (e & EPOLLIN ? EV_READ : 0) | (e & EPOLLOUT ? EV_WRITE : 0);
        if (e & (EPOLLERR | EPOLLHUP))
            ev |= io->armed;
        io->ready(io, ev & io->armed);
    }
    L->batch_n = 0;
    return handled + n + fire_due(L, lab_now_ns());
}
