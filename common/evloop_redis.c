/*
 * evloop_redis.c - the hiredis event hooks on evloop (see evloop_redis.h).
 *
 * Each context gets a small watcher holding its descriptor. hiredis may
 * free a context from inside a read (the server closed it): its cleanup
 * hook then runs while the watcher is being dispatched, so the watcher
 * is freed only once the dispatch is over (dead, busy). The cleanup hook
 * is also where the owner hears that the context is going: hiredis calls
 * it exactly once, whether the connect failed, the connection broke or
 * the owner freed it, after answering the pending replies with NULL.
 *
 * A command of a connected context is written before the loop next waits
 * (evloop_defer), not on an EPOLLOUT event: a loopback socket takes a
 * command whole, so arming EPOLLOUT, waking for it and disarming it again
 * would be two epoll_ctl calls and a wake-up per command, about as much as
 * the write itself. EPOLLOUT is still what a context waits for while it
 * connects (hiredis learns it is connected from the first writable event)
 * and when the socket took only part of a write.
 */
#include "evloop_redis.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct redis_watch {
    struct ev_io io;
    struct evloop *L;
    redisAsyncContext *ac;
    evloop_redis_down_fn down;
    struct ev_defer flush;  /* the write, before the loop next waits */
    unsigned want;          /* what hiredis asked for */
    bool flushing;          /* inside the flush's write */
    bool busy; /* inside its ready callback or its flush */
    bool dead; /* cleaned up meanwhile: free when the callback returns */
};

/* Watch what hiredis wants, except a write queued for the flush. */
static void watch_set(struct redis_watch *w, unsigned want)
{
    w->want = want;
    if (!(want & EV_WRITE))
        evloop_defer_cancel(w->L, &w->flush);
    evloop_io(w->L, &w->io, w->flush.queued ? want & ~EV_WRITE : want);
}

static void on_add_read(void *p) { struct redis_watch *w = p; watch_set(w, w->want | EV_READ); }
static void on_del_read(void *p) { struct redis_watch *w = p; watch_set(w, w->want & ~EV_READ); }
static void on_del_write(void *p) { struct redis_watch *w = p; watch_set(w, w->want & ~EV_WRITE); }

static void on_add_write(void *p)
{
    struct redis_watch *w = p;
    if (!w->flushing && !(w->io.armed & EV_WRITE) && (w->ac->c.flags & REDIS_CONNECTED))
        evloop_defer(w->L, &w->flush);
    watch_set(w, w->want | EV_WRITE);
}

static void on_cleanup(void *p)
{
    struct redis_watch *w = p;
    watch_set(w, 0);
    w->ac->ev.data = NULL;
    if (w->down) /* hiredis has answered what was pending, and frees ac next */
        w->down(w->ac);
    if (w->busy)
        w->dead = true;
    else
        free(w);
}

static void on_flush(struct ev_defer *d)
{
    struct redis_watch *w = (struct redis_watch *)((char *)d - offsetof(struct redis_watch, flush));
    w->busy = w->flushing = true;
    redisAsyncHandleWrite(w->ac); /* what is left, if any, waits for EPOLLOUT */
    w->busy = w->flushing = false;
    if (w->dead)
        free(w);
}

static void on_ready(struct ev_io *io, unsigned events)
{
    struct redis_watch *w = (struct redis_watch *)io;
    w->busy = true;
    if (events & EV_READ)
        redisAsyncHandleRead(w->ac);
    if (!w->dead && (events & EV_WRITE))
        redisAsyncHandleWrite(w->ac);
    w->busy = false;
    if (w->dead)
        free(w);
}

redisAsyncContext *evloop_redis_connect(struct evloop *L, const char *what, const char *host,
                                        int port, void *data, evloop_redis_down_fn down,
                                        struct lab_err *err)
{
    redisAsyncContext *ac = redisAsyncConnect(host, port);
    if (!ac || ac->err) {
        lab_err_set(err, ac ? ac->c.err : ENOMEM, "cannot connect to %s at %s:%d: %s", what,
                    host, port, ac ? ac->errstr : "out of memory");
        if (ac)
            redisAsyncFree(ac);
        return NULL;
    }
    struct redis_watch *w = calloc(1, sizeof *w);
    if (!w) {
        redisAsyncFree(ac);
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    w->io.fd = ac->c.fd;
    w->io.ready = on_ready;
    w->flush.run = on_flush;
    w->L = L;
    w->ac = ac;
    w->down = down;
    ac->data = data;
    ac->ev.data = w;
    ac->ev.addRead = on_add_read;
    ac->ev.delRead = on_del_read;
    ac->ev.addWrite = on_add_write;
    ac->ev.delWrite = on_del_write;
    ac->ev.cleanup = on_cleanup;
    return ac;
}
