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
 *
 * Owners (struct ev_owner): each object remembers the owner current when
 * it was first armed; the loop makes an object's owner current while its
 * callback runs, so what a logical client arms from its callbacks is its
 * too. A held owner's objects are kept back lazily, when they would run:
 * a due timer leaves the heap, a ready io leaves epoll, deferred work
 * leaves the queue, each onto the owner's list, and the release arms them
 * again. An owner never held costs a pointer test per dispatch.
 */
#include "evloop.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define EV_BATCH 1024

enum { EV_KIND_IO = 1, EV_KIND_TIMER, EV_KIND_DEFER };

struct evloop {
    int ep;                         /* the epoll descriptor */
    struct ev_timer **heap;         /* armed timers, earliest first */
    int n, cap;                     /* heap size and capacity */
    struct epoll_event batch[EV_BATCH]; /* events being dispatched */
    int batch_n;                    /* how many of them (0 when not dispatching) */
    struct ev_defer *defer_head, *defer_tail; /* to run before the next wait, in order */
    int n_defer;                    /* how many */
    struct ev_owner *current;       /* the owner whose callback runs, or NULL */
};

/* ------------------------------------------------------------ owners */

/* Tag h with the current owner the first time its object is armed. */
static void own(struct evloop *L, struct ev_hold *h)
{
    if (!h->owner)
        h->owner = L->current;
}

static bool held_owner(const struct ev_hold *h)
{
    return h->owner && h->owner->held;
}

/* Keep h back on its owner's list. */
static void hold(struct ev_hold *h, unsigned char kind)
{
    struct ev_owner *o = h->owner;
    h->kind = kind;
    h->held = true;
    h->prev = NULL;
    h->next = o->list;
    if (o->list)
        o->list->prev = h;
    o->list = h;
}

/* Take h off its owner's list (it is armed again, or closed). */
static void unhold(struct ev_hold *h)
{
    if (!h->held)
        return;
    h->held = false;
    if (h->prev)
        h->prev->next = h->next;
    else
        h->owner->list = h->next;
    if (h->next)
        h->next->prev = h->prev;
    h->prev = h->next = NULL;
}

struct ev_owner *evloop_owner_enter(struct evloop *L, struct ev_owner *o)
{
    struct ev_owner *prev = L->current;
    L->current = o;
    return prev;
}

struct ev_owner *evloop_owner_current(const struct evloop *L)
{
    return L->current;
}

void evloop_owner_hold(struct evloop *L, struct ev_owner *o)
{
    (void)L;
    o->held = true;
}

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
    own(L, &io->h);
    if (io->h.held) { /* kept back: what it wants when released */
        io->h.want = want;
        if (!want)
            unhold(&io->h);
        return 0;
    }
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
    unhold(&io->h);
    io->armed = 0;
    for (int i = 0; i < L->batch_n; i++)
        if (L->batch[i].data.ptr == io)
            L->batch[i].data.ptr = NULL; /* removed: never dispatch it */
}

/* ------------------------------------------------------------ deferred work */

void evloop_defer(struct evloop *L, struct ev_defer *d)
{
    own(L, &d->h);
    if (d->queued || d->h.held)
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
    unhold(&d->h);
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
        if (held_owner(&d->h)) {
            hold(&d->h, EV_KIND_DEFER);
            continue;
        }
        struct ev_owner *prev = evloop_owner_enter(L, d->h.owner);
        d->run(d);
        L->current = prev;
    }
}

/* ------------------------------------------------------------------ timers */

void evloop_timer_init(struct ev_timer *t, void (*fire)(struct ev_timer *t))
{
    t->at_ns = 0;
    t->slot = -1;
    t->fire = fire;
    t->h = (struct ev_hold){0};
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
    unhold(&t->h);
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
    own(L, &t->h);
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
        if (held_owner(&t->h)) {
            hold(&t->h, EV_KIND_TIMER);
            continue;
        }
        struct ev_owner *prev = evloop_owner_enter(L, t->h.owner);
        t->fire(t);
        L->current = prev;
        fired++;
    }
    return fired;
}

void evloop_owner_release(struct evloop *L, struct ev_owner *o)
{
    o->held = false;
    while (o->list) {
        struct ev_hold *h = o->list;
        unhold(h);
        if (h->kind == EV_KIND_TIMER) {
            struct ev_timer *t = (struct ev_timer *)((char *)h - offsetof(struct ev_timer, h));
            evloop_timer_at(L, t, t->at_ns); /* due meanwhile: at once */
        } else if (h->kind == EV_KIND_IO) {
            struct ev_io *io = (struct ev_io *)((char *)h - offsetof(struct ev_io, h));
            evloop_io(L, io, h->want);
        } else {
            evloop_defer(L, (struct ev_defer *)((char *)h - offsetof(struct ev_defer, h)));
        }
    }
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
        if (held_owner(&io->h)) { /* out of epoll until released: the kernel keeps it */
            unsigned want = io->armed;
            evloop_io(L, io, 0);
            io->h.want = want;
            hold(&io->h, EV_KIND_IO);
            continue;
        }
        uint32_t e = L->batch[i].events;
        unsigned ev = (e & EPOLLIN ? EV_READ : 0) | (e & EPOLLOUT ? EV_WRITE : 0);
        if (e & (EPOLLERR | EPOLLHUP))
            ev |= io->armed;
        struct ev_owner *prev = evloop_owner_enter(L, io->h.owner);
        io->ready(io, ev & io->armed);
        L->current = prev;
    }
    L->batch_n = 0;
    return handled + n + fire_due(L, lab_now_ns());
}
