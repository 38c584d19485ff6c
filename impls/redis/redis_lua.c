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
#include "redis_async.h"
#include "test_slow.h"

/* Test-only (tests/it_baseline.sh, scripts/measure-gate): LOCKLAB_TEST_SLOW
 * (test_slow.h) makes this design slower on purpose, a slowdown of the kind
 * a baseline comparison must catch. Read once per client in its open;
 * unset, it costs a test per operation. */
static struct test_slow slow;

static int rlua_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    if (slow.acquire.twice) { /* the attempt's round trip, twice */
        redisReply *r = redisCommand(c->rc, "PING");
        if (r)
            freeReplyObject(r);
    }
    return redis_set_nx_px(c, key, c->token, err);
}

static enum lock_status rlua_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err)
{
    int64_t t0 = lab_now_ns();
    enum lock_status st = redis_poll_acquire(c, key, wait_ns, err);
    test_slow_stretch(&slow.acquire, t0);
    return st;
}

static enum release_status rlua_release(struct lock_client *c, const char *key,
                                        struct lab_err *err)
{
    int64_t t0 = lab_now_ns();
    enum release_status rs = redis_release_script(c, key, err);
    if (slow.release.twice && rs != RELEASE_ERROR) {
        /* the same compare-and-delete again: the key is gone or another
         * client's, so it deletes nothing, at the same cost */
        struct lab_err ignored = {0};
        redis_release_script(c, key, &ignored);
    }
    test_slow_stretch(&slow.release, t0);
    return rs;
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
    if (test_slow_read("redis-lua", &slow, err) != 0)
        return -1;
    return redis_lua_open_with(out, env, rlua_try, err);
}

/* In a client group: the same commands, without blocking (redis_async.c). */
static int rlua_async_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    return redis_async_open(out, env, loop, REDIS_ASYNC_LUA, opened, arg, err);
}

static const struct lock_async_ops rlua_async = {
    .open = rlua_async_open,
    .acquire = redis_async_acquire,
    .release = redis_async_release,
    .close = redis_async_close,
};

const struct lock_ops lock_redis_lua = {
    .name = "redis-lua",
    .backend = "redis",
    .summary = "unique token, SET NX PX, Lua compare-and-delete: breaks when business time > TTL",
    .caps = LOCK_CAP_TTL | LOCK_CAP_FENCING,
    .open = rlua_open,
    .acquire = rlua_acquire,
    .release = rlua_release,
    .close = redis_lock_close,
    .async = &rlua_async,
};
