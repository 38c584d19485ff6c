/*
 * redis_set_del.c - SET key const NX PX ttl; plain DEL to release.
 *
 * Atomic acquire with a TTL, but the value is a constant and the release a
 * bare DEL: a client whose TTL ran out during a long critical section
 * deletes the lock the next client now holds, letting a third one in.
 */
#include "redis_common.h"
#include "redis_async.h"

static int ssd_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    return redis_set_nx_px(c, key, "locked", err);
}

static int ssd_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return redis_lock_open(out, env, ssd_try, err);
}

/* In a client group: the same commands, without blocking (redis_async.c). */
static int ssd_async_open(struct lock_client **out, const struct lock_env *env,
                         struct evloop *loop, lock_opened_fn opened, void *arg,
                         struct lab_err *err)
{
    return redis_async_open(out, env, loop, REDIS_ASYNC_SET_DEL, opened, arg, err);
}

static const struct lock_async_ops ssd_async = {
    .open = ssd_async_open,
    .acquire = redis_async_acquire,
    .release = redis_async_release,
    .close = redis_async_close,
};

const struct lock_ops lock_redis_set_del = {
    .name = "redis-set-del",
    .backend = "redis",
    .summary = "SET NX PX with a constant value, DEL to release: deletes others' locks after expiry",
    .caps = LOCK_CAP_TTL,
    .open = ssd_open,
    .acquire = redis_poll_acquire,
    .release = redis_release_del,
    .close = redis_lock_close,
    .async = &ssd_async,
};
