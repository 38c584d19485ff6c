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
#include "redis_drive.h"

static const struct redis_sm_design rwd = {.kind = REDIS_SM_WATCHDOG, .name = "redis-watchdog"};

REDIS_SM_HOOKS(rwd, rwd);

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
