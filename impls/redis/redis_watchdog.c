/*
 * redis_watchdog.c - redis-lua plus a watchdog that extends the TTL.
 *
 * The seeds' RedisLockUtil4: while the lock is held, a thread extends it
 * every ttl/3 with a Lua compare-and-pexpire, so a critical section longer
 * than the TTL keeps the lock; the watchdog stops before the release. What
 * it cannot survive is a pause of the whole process (a GC pause, SIGSTOP):
 * the watchdog pauses too, the TTL runs out, and a second client gets in.
 *
 * The protocol is redis_machine.c's (REDIS_SM_WATCHDOG), in either mode:
 * the renewals on the watchdog thread one process per client, on a timer
 * of each client's in groups.
 */
#include "redis_common.h"
#include "redis_drive.h"

static const struct redis_sm_design rwd = {.kind = REDIS_SM_WATCHDOG, .name = "redis-watchdog"};

static int rwd_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return redis_block_open(out, env, &rwd, err);
}

static int rwd_group_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    return redis_group_open(out, env, loop, &rwd, opened, arg, err);
}

static const struct lock_async_ops rwd_async = {
    .client_faults = true, /* the group driver shares nothing between clients */
    .open = rwd_group_open,
    .acquire = redis_group_acquire,
    .release = redis_group_release,
    .close = redis_group_close,
};

const struct lock_ops lock_redis_watchdog = {
    .name = "redis-watchdog",
    .backend = "redis",
    .summary = "redis-lua plus a thread renewing the TTL every ttl/3: a paused process still loses it",
    .caps = LOCK_CAP_TTL | LOCK_CAP_RENEWS | LOCK_CAP_FENCING,
    .open = rwd_open,
    .acquire = redis_block_acquire,
    .release = redis_block_release,
    .close = redis_block_close,
    .async = &rwd_async,
};
