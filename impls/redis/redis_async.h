/*
 * redis_async.h - the asynchronous hooks (lock_ops.async) of the
 * single-instance Redis designs whose protocol is a few plain commands:
 * redis-lua, redis-set-del and redis-setnx-expire, for client groups.
 *
 * One state machine serves them all; a design picks its acquire and its
 * release by kind, and sends exactly the commands its blocking hooks send
 * (redis_common.c), so a grouped client is the same client to the store.
 */
#ifndef LOCKLAB_REDIS_ASYNC_H
#define LOCKLAB_REDIS_ASYNC_H

#include "lock.h"

enum redis_async_kind {
    REDIS_ASYNC_LUA,         /* SET key token NX PX (fenced: the granting script);
                                release by the compare-and-delete script */
    REDIS_ASYNC_SET_DEL,     /* SET key "locked" NX PX; release by DEL */
    REDIS_ASYNC_SETNX_EXPIRE /* SETNX key token, then PEXPIRE; release by DEL */
};

/* -1 with err set when env's servers are a sentinel topology, which a
 * group's asynchronous connections do not follow (every Redis design's
 * open refuses it the same way); else 0. */
int redis_async_refuse_sentinel(const struct lock_env *env, struct lab_err *err);

/* lock_async_ops.open with the design's kind. */
int redis_async_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                     enum redis_async_kind kind, lock_opened_fn opened, void *arg,
                     struct lab_err *err);
void redis_async_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                         lock_acquired_fn done, void *arg);
void redis_async_release(struct lock_client *c, const char *key, lock_released_fn done,
                         void *arg);
void redis_async_close(struct lock_client *c);

#endif
