/*
 * evloop.h - a small event loop (epoll and a timer heap) for one process
 * that multiplexes many clients: a client group (harness/run/group.c) and
 * the asynchronous hooks of the designs that can run in one
 * (lock_ops.async, impls/lock.h).
 *
 * Both sides need the same loop: a design's retry pause and a workload's
 * business time are timers on it, its connections are watched by it. It is
 * single-threaded and knows nothing of Redis; evloop_redis.h attaches a
 * hiredis asynchronous context to it.
 */
#ifndef LOCKLAB_EVLOOP_H
#define LOCKLAB_EVLOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "lab.h"

#define EV_READ 1u
#define EV_WRITE 2u

struct evloop;
struct ev_owner;

/* What the loop keeps of a watched object for its owner (zeroed with the
 * object: callers never touch it). */
struct ev_hold {
    struct ev_owner *owner;      /* whose it is (the owner current when the object was
                                    first armed), NULL: nobody's, never held */
    struct ev_hold *prev, *next; /* in the owner's list while held */
    unsigned char kind;          /* EV_KIND_*, set once held */
    bool held;                   /* kept back until the owner is released */
    unsigned want;               /* an io's interest when it was held */
};

/* A file descriptor watched by the loop. */
struct ev_io {
    int fd;
    unsigned armed; /* EV_READ | EV_WRITE as registered now (0: not in the loop) */
    void (*ready)(struct ev_io *io, unsigned events); /* called with EV_READ/EV_WRITE;
                                                          an error or hang-up gives both */
    struct ev_hold h;
};

/* A one-shot timer. */
struct ev_timer {
    int64_t at_ns; /* CLOCK_MONOTONIC when it fires */
    int slot;      /* its place in the loop's heap, -1 when not armed (set it so before
                      first use: evloop_timer_init) */
    void (*fire)(struct ev_timer *t);
    struct ev_hold h;
};

/* One logical client of a group, as the loop sees it: every io, timer and
 * deferred work first armed while it was current (evloop_owner_enter, or
 * inside a callback of an object of its) is its. Held, nothing of its runs:
 * a due timer waits, a ready socket is taken out of epoll (the kernel keeps
 * what arrives, as for a stopped process), deferred work (a write) waits;
 * released, everything kept runs, a timer due meanwhile at once (as after
 * SIGCONT). The loop's other owners run on. */
struct ev_owner {
    bool held;
    struct ev_hold *list; /* the objects kept back */
};

/* Work to run once before the loop next waits (evloop_defer): a
 * connection's writes, gathered while the loop dispatches and sent in one
 * go before it sleeps, so no write needs a wake-up of its own. */
struct ev_defer {
    struct ev_defer *prev, *next; /* in the loop's list while queued */
    bool queued;
    void (*run)(struct ev_defer *d);
    struct ev_hold h;
};

/* A new loop, or NULL with err filled. */
struct evloop *evloop_new(struct lab_err *err);
void evloop_free(struct evloop *L);

/* Watch io for want (EV_READ | EV_WRITE; 0 stops watching it). A removed
 * io whose events are pending in the batch being dispatched is skipped,
 * so a callback may remove (and free) any io. 0 or -1 (errno). */
int evloop_io(struct evloop *L, struct ev_io *io, unsigned want);

/* io's descriptor was closed behind the loop's back (a library such as
 * libpq dropped its connection): the kernel took it out of the epoll set
 * already, so forget io without asking epoll (its number may by now be
 * another connection's). Its pending events are not dispatched. */
void evloop_io_forget(struct evloop *L, struct ev_io *io);

void evloop_timer_init(struct ev_timer *t, void (*fire)(struct ev_timer *t));
/* Arm t for at_ns (re-arming moves it); 0 or -1 out of memory. */
int evloop_timer_at(struct evloop *L, struct ev_timer *t, int64_t at_ns);
void evloop_timer_cancel(struct evloop *L, struct ev_timer *t);
/* Make every armed timer due now (a run that stops cuts its sleeps short,
 * as lab_sleep_ns does with its stop flag). */
void evloop_timers_due_now(struct evloop *L);

/* Queue d to run once before the loop next waits (once, however often it
 * is queued before then; it may queue itself again from run, to run before
 * the wait after). Cancel it before freeing it. */
void evloop_defer(struct evloop *L, struct ev_defer *d);
void evloop_defer_cancel(struct evloop *L, struct ev_defer *d);

/* Make o the current owner (NULL: none); returns the one before, for
 * evloop_owner_enter(L, prev) after. */
struct ev_owner *evloop_owner_enter(struct evloop *L, struct ev_owner *o);

/* The owner whose callback runs (or the one entered), NULL: none. */
struct ev_owner *evloop_owner_current(const struct evloop *L);

/* Hold o (from the next dispatch on, nothing of its runs), or release it
 * (everything kept is armed again). Closing a held owner's objects is
 * allowed: they leave its list. */
void evloop_owner_hold(struct evloop *L, struct ev_owner *o);
void evloop_owner_release(struct evloop *L, struct ev_owner *o);

/* Wait for events or the first timer, at most max_wait_ns, and dispatch
 * them (timers due first, the deferred work just before the wait). Returns
 * the number of events and timers handled, or -1 on an epoll error other
 * than EINTR. */
int evloop_run_once(struct evloop *L, int64_t max_wait_ns);

#endif
