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
#include "redis_drive.h"

static const struct redis_sm_design rre = {.kind = REDIS_SM_WATCHDOG, .name = "redis-reentrant",
                                           .reentrant = true};

REDIS_SM_HOOKS(rre, rre);

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
