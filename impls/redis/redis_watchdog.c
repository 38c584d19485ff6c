/*
 * redis_watchdog.c - redis-lua plus a watchdog that extends the TTL.
 *
 * The seeds' RedisLockUtil4: while the lock is held, a thread extends it
 * every ttl/3 with a Lua compare-and-pexpire, so a critical section longer
 * than the TTL keeps the lock; the watchdog stops before the release. What
 * it cannot survive is a pause of the whole process (a GC pause, SIGSTOP):
 * the watchdog pauses too, the TTL runs out, and a second client gets in.
 */
#include "redis_common.h"

static int rwd_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    return redis_set_nx_px(c, key, c->token, err);
}

/* Connect, load the release script (and with fencing redis-lua's fenced
 * grant), start the watchdog with the compare-and-pexpire renewal every
 * ttl/3 (also redis-reentrant's open). */
int redis_watchdog_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    if (redis_lock_open(out, env, rwd_try, err) != 0)
        return -1;
    struct lock_client *c = *out;
    c->release.src = redis_compare_and_delete_lua;
    c->renew.src = redis_compare_and_pexpire_lua;
    if (redis_script_load(c->rc, &c->release, err) != 0 || redis_fencing_setup(c, err) != 0 ||
        redis_watchdog_start(c, env->ttl_ns, err) != 0) {
        redis_lock_close(c);
        *out = NULL;
        return -1;
    }
    return 0;
}

enum lock_status redis_watchdog_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                        struct lab_err *err)
{
    enum lock_status st = redis_poll_acquire(c, key, wait_ns, err);
    if (st == LOCK_GRANTED)
        watchdog_arm(c->wd, key);
    return st;
}

enum release_status redis_watchdog_release(struct lock_client *c, const char *key,
                                           struct lab_err *err)
{
    watchdog_disarm(c->wd);
    return redis_release_script(c, key, err);
}

const struct lock_ops lock_redis_watchdog = {
    .name = "redis-watchdog",
    .backend = "redis",
    .summary = "redis-lua plus a thread renewing the TTL every ttl/3: a paused process still loses it",
    .caps = LOCK_CAP_TTL | LOCK_CAP_RENEWS | LOCK_CAP_FENCING,
    .open = redis_watchdog_open,
    .acquire = redis_watchdog_acquire,
    .release = redis_watchdog_release,
    .close = redis_lock_close,
};
