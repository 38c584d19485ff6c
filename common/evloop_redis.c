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
 */
#include "evloop_redis.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct redis_watch {
    struct ev_io io;
    struct evloop *L;
    redisAsyncContext *ac;
    evloop_redis_down_fn down;
    unsigned want;
    bool busy; /* inside its ready callback */
    bool dead; /* cleaned up meanwhile: free when the callback returns */
};

static void watch_set(struct redis_watch *w, unsigned want)
{
    w->want = want;
    evloop_io(w->L, &w->io, want);
}

static void on_add_read(void *p) { struct redis_watch *w = p; watch_set(w, w->want | EV_READ); }
static void on_del_read(void *p) { struct redis_watch *w = p; watch_set(w, w->want & ~EV_READ); }
static void on_add_write(void *p) { struct redis_watch *w = p; watch_set(w, w->want | EV_WRITE); }
static void on_del_write(void *p) { struct redis_watch *w = p; watch_set(w, w->want & ~EV_WRITE); }

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
