/*
 * redis_script.c - the scenario brings its own Lua lock scripts.
 *
 * So that a user can test their own lock script without writing C:
 * lock.script.acquire, .release and optionally .renew are loaded as they
 * are, and called with KEYS[1] = lock key, ARGV[1] = this client's token,
 * ARGV[2] = TTL in ms. acquire returns 1 when granted (polled like the
 * other designs), release 1 when it released our lock and 0 when the lock
 * was not ours, renew 1 when it extended the lock (run by a watchdog every
 * ttl/3 while held, only when the scenario gives one). A script that fails
 * at run time is counted as an error of the operation, never a crash; a
 * script that grants when it should not is caught by the oracle like any
 * other broken lock.
 */
#include "redis_common.h"

static int rscr_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    long long v = redis_script_call(c, &c->acquire, key, err);
    return v < 0 ? -1 : v == 1;
}

static int rscr_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    if (redis_lock_open(out, env, rscr_try, err) != 0)
        return -1;
    struct lock_client *c = *out;
    c->acquire.src = env->script_acquire;
    c->release.src = env->script_release;
    c->renew.src = env->script_renew && *env->script_renew ? env->script_renew : NULL;
    if (redis_script_load(c->rc, &c->acquire, err) != 0 ||
        redis_script_load(c->rc, &c->release, err) != 0 ||
        (c->renew.src && redis_watchdog_start(c, env->ttl_ns, err) != 0)) {
        redis_lock_close(c);
        *out = NULL;
        return -1;
    }
    return 0;
}

static enum lock_status rscr_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err)
{
    enum lock_status st = redis_poll_acquire(c, key, wait_ns, err);
    /* what lifetime the user's script gives the lock, and what its release
     * returns 0 for, is the script's business: claim no lease floor, so a
     * "not ours" from it is never read as someone else taking the lock */
    c->env->stats->lease_floor_ns = 0;
    if (st == LOCK_GRANTED && c->wd)
        watchdog_arm(c->wd, key);
    return st;
}

static enum release_status rscr_release(struct lock_client *c, const char *key, struct lab_err *err)
{
    if (c->wd)
        watchdog_disarm(c->wd);
    return redis_release_script(c, key, err);
}

const struct lock_ops lock_redis_script = {
    .name = "redis-script",
    .backend = "redis",
    .summary = "acquire/release/renew Lua scripts from the scenario: test your own lock script",
    .caps = LOCK_CAP_TTL,
    .no_fencing = "the scenario's own scripts grant the lock; they return no token",
    .open = rscr_open,
    .acquire = rscr_acquire,
    .release = rscr_release,
    .close = redis_lock_close,
};
