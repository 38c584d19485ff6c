/*
 * evloop_redis.h - hiredis asynchronous connections on the lab's event
 * loop (evloop.h): the adapter hiredis asks of an event library (its
 * addRead/delRead/addWrite/delWrite/cleanup hooks), written for evloop
 * rather than pulling in libevent for one process kind.
 */
#ifndef LOCKLAB_EVLOOP_REDIS_H
#define LOCKLAB_EVLOOP_REDIS_H

#include <hiredis/async.h>

#include "evloop.h"

/* Called once when the connection is going: it could not connect, it
 * broke, or its owner freed it. hiredis frees ac right after; forget it
 * here (ac->err says why, 0 when freed on purpose). Replies still pending
 * were answered with NULL before this. */
typedef void (*evloop_redis_down_fn)(redisAsyncContext *ac);

/* Start connecting to host:port (commands may be queued at once; they go
 * out when it is connected), with ac->data = data. Returns the context, or
 * NULL with err filled ("cannot connect to <what> at host:port: ..."). */
redisAsyncContext *evloop_redis_connect(struct evloop *L, const char *what, const char *host,
                                        int port, void *data, evloop_redis_down_fn down,
                                        struct lab_err *err);

#endif
