/*
 * redis_link.h - a machine's command connection to the Redis store, one
 * kind per mode, for every Redis state machine's drivers (the simple
 * designs', Redisson's): send argv, get the reply as the machines read it
 * (struct redis_sm_reply) or the loss, and make a new connection to the
 * store (the master the sentinels name, or the single server). A driver
 * is the glue from its machine's acts to a link.
 *
 * The blocking link (redis_link_block.c) is a hiredis connection found by
 * redis_store_open, with connect and command timeouts of REDIS_TIMEOUT_MS
 * (a timed-out command is a loss: hiredis leaves the context dead).
 *
 * The loop link (redis_link_loop.c) is a hiredis asynchronous connection
 * on the group's event loop, found by the search below; a command has a
 * timeout of REDIS_TIMEOUT_MS (it drops the connection, fed as a loss; the
 * run's stop, which makes every timer due, leaves a command not yet late
 * to answer). A reconnect runs from the loop, never inside a hiredis
 * callback. Everything of a loop link is armed by its owner's calls, so it
 * is the logical client's that makes them (evloop.h's owners).
 */
#ifndef LOCKLAB_REDIS_LINK_H
#define LOCKLAB_REDIS_LINK_H

#include <stdbool.h>

#include <hiredis/hiredis.h>

#include "evloop_redis.h"
#include "lock.h"
#include "redis_machine.h"

/* hiredis's reply as the machines read it (valid while r lives). */
void redis_sm_from_hiredis(const redisReply *r, struct redis_sm_reply *out);

/* ------------------------------------------------------------ blocking */

struct redis_blink {
    const struct lock_env *env;
    const char *what;   /* "Redis", "Redis (watchdog)": for messages */
    redisContext *rc;   /* NULL: none yet */
    redisReply *last;   /* the latest reply, kept until the next call */
};

void redis_blink_init(struct redis_blink *l, const struct lock_env *env, const char *what);
/* Send argv and read its reply into *out (valid until the next call):
 * true; false when none came (*why says why). */
bool redis_blink_call(struct redis_blink *l, int argc, const char **argv,
                      struct redis_sm_reply *out, const char **why);
/* A new connection to the store in place of the old; false with err. */
bool redis_blink_reconnect(struct redis_blink *l, struct lab_err *err);
void redis_blink_close(struct redis_blink *l);

/* ------------------------------------------------------------ the store on the loop */

/* Finding the store on an event loop (redis_link_seek.c), for the loop
 * link and redisson's pub/sub hub: a connection to the single server, or,
 * with sentinels, to the master they name, checked with ROLE, asking again
 * every 20 ms while a failover is under way, for up to 10 s or until the
 * run stops. The owner embeds the struct; every connection it makes
 * carries the owner's data and down hook, and that hook must call
 * redis_seek_down. */
struct redis_seek;
typedef void (*redis_seek_fn)(struct redis_seek *s, bool ok, const struct lab_err *err);
struct redis_seek {
    struct evloop *L;
    const struct lock_env *env;
    const char *what;            /* "Redis", "Redis (pub/sub)": for messages */
    void *data;                  /* ac->data of its connections */
    evloop_redis_down_fn down;   /* their down hook */
    redis_seek_fn found;         /* ok: ac is the store's connection; else err says why */
    redisAsyncContext *ac;       /* the store's connection (a candidate while checking) */
    redisAsyncContext *sac;      /* a sentinel asked where the master is */
    bool checking;               /* ac's ROLE is being asked */
    int sentinel;                /* the sentinel being asked */
    int64_t deadline;            /* the end of the search */
    struct ev_timer timer;       /* the search's next round */
};
void redis_seek_init(struct redis_seek *s, struct evloop *L, const struct lock_env *env,
                     const char *what, void *data, evloop_redis_down_fn down, redis_seek_fn found);
/* Drop s->ac and find the store anew; found() comes later, or at once
 * for a single server (call it from the loop, not inside hiredis). */
void redis_seek_start(struct redis_seek *s);
/* From the owner's down hook: forget ac if it is one of s's. */
void redis_seek_down(struct redis_seek *s, redisAsyncContext *ac);
/* Stop searching and drop every connection. */
void redis_seek_close(struct redis_seek *s);
/* Forget a connection on purpose: its pending replies go to nobody. */
void redis_seek_drop(redisAsyncContext **slot);

/* ------------------------------------------------------------ on the loop */

struct redis_alink;
/* The command's reply (r), or its loss (r NULL, why says why). */
typedef void (*redis_alink_reply_fn)(struct redis_alink *l, const struct redis_sm_reply *r,
                                     const char *why);
/* The reconnect's outcome: ok, or err says why not. */
typedef void (*redis_alink_connected_fn)(struct redis_alink *l, bool ok,
                                         const struct lab_err *err);

struct redis_alink {
    struct redis_seek seek;      /* seek.ac: the connection, NULL when there is none */
    redis_alink_reply_fn replied;
    redis_alink_connected_fn connected;
    bool inflight;               /* a command awaits its reply on seek.ac */
    struct ev_timer reconnect;   /* the reconnect, from the loop */
    struct ev_timer cmd_timer;   /* the command timeout */
    int64_t cmd_deadline;
};

void redis_alink_init(struct redis_alink *l, struct evloop *L, const struct lock_env *env,
                      redis_alink_reply_fn replied, redis_alink_connected_fn connected);
/* Queue argv; replied() comes later, or at once when it cannot be queued. */
void redis_alink_send(struct redis_alink *l, int argc, const char **argv);
/* Drop the connection and find the store anew, from the loop: connected(). */
void redis_alink_reconnect(struct redis_alink *l);
void redis_alink_close(struct redis_alink *l);

#endif
