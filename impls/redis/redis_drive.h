/*
 * redis_drive.h - the two drivers of the Redis designs' state machine
 * (redis_machine.h): one process per client on a blocking hiredis
 * connection (redis_drive_block.c), and client groups on the event loop
 * (redis_drive_group.c). Each knows Redis's transport and topologies (a
 * single server, or the master its sentinels name) and no design: a
 * design file hands its struct redis_sm_design to these hooks.
 */
#ifndef LOCKLAB_REDIS_DRIVE_H
#define LOCKLAB_REDIS_DRIVE_H

#include "lock.h"
#include "redis_machine.h"

#include <stdbool.h>

#include "evloop_redis.h"

struct redisReply;

/* hiredis's reply as the machine reads it (valid while r lives). */
void redis_sm_from_hiredis(const struct redisReply *r, struct redis_sm_reply *out);

/* One process per client (lock_ops hooks, with the design). */
int redis_block_open(struct lock_client **out, const struct lock_env *env,
                     const struct redis_sm_design *d, struct lab_err *err);
enum lock_status redis_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err);
enum release_status redis_block_release(struct lock_client *c, const char *key,
                                        struct lab_err *err);
void redis_block_close(struct lock_client *c);

/* Client groups (lock_async_ops hooks, with the design). */
int redis_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                     const struct redis_sm_design *d, lock_opened_fn opened, void *arg,
                     struct lab_err *err);
void redis_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                         lock_acquired_fn done, void *arg);
void redis_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                         void *arg);
void redis_group_close(struct lock_client *c);

/* A design's two open hooks over its struct redis_sm_design d, and its
 * lock_async_ops (the group driver shares nothing between clients, so a
 * fault may hit one alone): prefix_open, prefix_group_open, prefix_async. */
#define REDIS_SM_HOOKS(prefix, d)                                                            \
    static int prefix##_open(struct lock_client **out, const struct lock_env *env,          \
                             struct lab_err *err)                                           \
    {                                                                                       \
        return redis_block_open(out, env, &(d), err);                                       \
    }                                                                                       \
    static int prefix##_group_open(struct lock_client **out, const struct lock_env *env,    \
                                   struct evloop *loop, lock_opened_fn opened, void *arg,   \
                                   struct lab_err *err)                                     \
    {                                                                                       \
        return redis_group_open(out, env, loop, &(d), opened, arg, err);                    \
    }                                                                                       \
    static const struct lock_async_ops prefix##_async = {                                   \
        .client_faults = true,                                                              \
        .open = prefix##_group_open,                                                        \
        .acquire = redis_group_acquire,                                                     \
        .release = redis_group_release,                                                     \
        .close = redis_group_close,                                                         \
    }

/* Finding the store on an event loop (redis_drive_seek.c), for every
 * group driver: a connection to the single server, or, with sentinels,
 * to the master they name, checked with ROLE, asking again every 20 ms
 * while a failover is under way, for up to 10 s or until the run stops.
 * The owner embeds the struct; every connection it makes carries the
 * owner's data and down hook, and that hook must call redis_seek_down. */
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

#endif
