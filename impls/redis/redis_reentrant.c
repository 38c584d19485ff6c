/*
 * redis_reentrant.c - redis-watchdog plus a per-thread hold count.
 *
 * The seeds' reentrant Jedis lock: the owner may take the lock again while
 * holding it. The count is local (each client process is one thread), so a
 * nested acquire costs no round trip, and only the last release deletes the
 * key and stops the watchdog. It inherits the watchdog's weakness: a paused
 * process loses the lock. With fencing, the outer grant's token stands for
 * the nested holds too: they never reach Redis.
 *
 * The protocol is redis_machine.c's (REDIS_SM_WATCHDOG with its hold
 * count), in either mode.
 */
#include "redis_common.h"
#include "redis_drive.h"

static const struct redis_sm_design rre = {.kind = REDIS_SM_WATCHDOG, .name = "redis-reentrant",
                                           .reentrant = true};

static int rre_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return redis_block_open(out, env, &rre, err);
}

static int rre_group_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    return redis_group_open(out, env, loop, &rre, opened, arg, err);
}

static const struct lock_async_ops rre_async = {
    .client_faults = true, /* the group driver shares nothing between clients */
    .open = rre_group_open,
    .acquire = redis_group_acquire,
    .release = redis_group_release,
    .close = redis_group_close,
};

const struct lock_ops lock_redis_reentrant = {
    .name = "redis-reentrant",
    .backend = "redis",
    .summary = "redis-watchdog plus a local hold count: the owner may re-acquire",
    .caps = LOCK_CAP_TTL | LOCK_CAP_RENEWS | LOCK_CAP_REENTRANT | LOCK_CAP_FENCING,
    .open = rre_open,
    .acquire = redis_block_acquire,
    .release = redis_block_release,
    .close = redis_block_close,
    .async = &rre_async,
};
