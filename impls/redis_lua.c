/*
 * redis_lua.c - unique token; SET NX PX; release by a Lua compare-and-delete.
 *
 * The textbook single-instance lock (seeds 003 and 004): acquire and
 * release are each one atomic step, and a client can only delete its own
 * lock. What it cannot survive is a critical section longer than the TTL:
 * the lock expires under its holder and a second client gets it.
 *
 * With fencing (lock_env.fencing) the grant is one script instead of the
 * SET: SET NX PX and, when it granted, INCR of "<key>:fence", whose value
 * is the grant's token (redis_fencing_setup). The store behind the lock
 * can then refuse the late writes of a holder whose lock expired.
 */
#include "redis_common.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Test-only (tests/it_baseline.sh): LOCKLAB_TEST_SLOW=redis-lua adds one
 * PING round trip to every attempt, a real slowdown of the kind a baseline
 * comparison must catch. Read once per client; unset, it costs a test. */
static bool slow;

static int rlua_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    if (slow) {
        redisReply *r = redisCommand(c->rc, "PING");
        if (r)
            freeReplyObject(r);
    }
    return redis_set_nx_px(c, key, c->token, err);
}

int redis_lua_open_with(struct lock_client **out, const struct lock_env *env, lock_try_fn attempt,
                        struct lab_err *err)
{
    if (redis_lock_open(out, env, attempt, err) != 0)
        return -1;
    (*out)->release.src = redis_compare_and_delete_lua;
    if (redis_script_load((*out)->rc, &(*out)->release, err) != 0 ||
        redis_fencing_setup(*out, err) != 0) {
        redis_lock_close(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

static int rlua_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    const char *t = getenv("LOCKLAB_TEST_SLOW");
    slow = t && strcmp(t, "redis-lua") == 0;
    return redis_lua_open_with(out, env, rlua_try, err);
}

const struct lock_ops lock_redis_lua = {
    .name = "redis-lua",
    .backend = "redis",
    .summary = "unique token, SET NX PX, Lua compare-and-delete: breaks when business time > TTL",
    .caps = LOCK_CAP_TTL | LOCK_CAP_FENCING,
    .open = rlua_open,
    .acquire = redis_poll_acquire,
    .release = redis_release_script,
    .close = redis_lock_close,
};
