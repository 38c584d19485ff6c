/*
 * redis_reentrant.c - redis-watchdog plus a per-thread hold count.
 *
 * The seeds' reentrant Jedis lock: the owner may take the lock again while
 * holding it. The count is local (each client process is one thread), so a
 * nested acquire costs no round trip, and only the last release deletes the
 * key and stops the watchdog. It inherits the watchdog's weakness: a paused
 * process loses the lock. With fencing, the outer grant's token stands for
 * the nested holds too: they never reach Redis.
 */
#include <stdio.h>
#include <string.h>

#include "redis_common.h"

static enum lock_status rre_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err)
{
    if (c->holds > 0 && strcmp(c->held_key, key) == 0) {
        c->holds++;
        return LOCK_GRANTED;
    }
    enum lock_status st = redis_watchdog_acquire(c, key, wait_ns, err);
    if (st == LOCK_GRANTED && c->holds == 0) {
        c->holds = 1;
        snprintf(c->held_key, sizeof c->held_key, "%s", key);
    }
    return st;
}

static enum release_status rre_release(struct lock_client *c, const char *key, struct lab_err *err)
{
    if (c->holds > 1 && strcmp(c->held_key, key) == 0) {
        c->holds--;
        return RELEASE_OK;
    }
    c->holds = 0;
    return redis_watchdog_release(c, key, err);
}

const struct lock_ops lock_redis_reentrant = {
    .name = "redis-reentrant",
    .backend = "redis",
    .summary = "redis-watchdog plus a local hold count: the owner may re-acquire",
    .caps = LOCK_CAP_TTL | LOCK_CAP_RENEWS | LOCK_CAP_REENTRANT | LOCK_CAP_FENCING,
    .open = redis_watchdog_open,
    .acquire = rre_acquire,
    .release = rre_release,
    .close = redis_lock_close,
};
