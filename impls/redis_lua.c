/*
 * redis_lua.c - unique token; SET NX PX; release by a Lua compare-and-delete.
 *
 * The textbook single-instance lock (seeds 003 and 004): acquire and
 * release are each one atomic step, and a client can only delete its own
 * lock. What it cannot survive is a critical section longer than the TTL:
 * the lock expires under its holder and a second client gets it.
 */
#include "redis_common.h"

/* KEYS[1] = lock key, ARGV[1] = our token: delete only if the value is ours. */
static const char release_script[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('del', KEYS[1])\n"
    "end\n"
    "return 0\n";

static int rlua_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    return redis_set_nx_px(c, key, c->token, err);
}

static int rlua_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return redis_lock_open(out, env, release_script, rlua_try, err);
}

static enum release_status rlua_release(struct lock_client *c, const char *key, struct lab_err *err)
{
    long long n = redis_script_call(c, key, err);
    return n < 0 ? RELEASE_ERROR : n > 0 ? RELEASE_OK : RELEASE_NOT_OWNER;
}

const struct lock_ops lock_redis_lua = {
    .name = "redis-lua",
    .backend = "redis",
    .summary = "unique token, SET NX PX, Lua compare-and-delete: breaks when business time > TTL",
    .caps = LOCK_CAP_TTL,
    .open = rlua_open,
    .acquire = redis_poll_acquire,
    .release = rlua_release,
    .close = redis_lock_close,
};
