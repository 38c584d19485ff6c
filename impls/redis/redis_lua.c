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
 * is the grant's token. The store behind the lock can then refuse the
 * late writes of a holder whose lock expired.
 *
 * The protocol is redis_machine.c's (REDIS_SM_LUA), in either mode.
 */
#include "redis_drive.h"
#include "test_slow.h"

static const struct redis_sm_design rlua = {.kind = REDIS_SM_LUA, .name = "redis-lua"};

/* Test-only (tests/it_baseline.sh, scripts/measure-gate): LOCKLAB_TEST_SLOW
 * (test_slow.h) makes this design slower on purpose, a slowdown of the kind
 * a baseline comparison must catch. Read once per client in its open;
 * unset, it costs a test per operation. One process per client only. */
static struct test_slow slow;

static int rlua_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    if (test_slow_read("redis-lua", &slow, err) != 0 || redis_block_open(out, env, &rlua, err) != 0)
        return -1;
    redis_block_machine(*out)->slow_ping = slow.acquire.twice; /* each attempt's round trip, twice */
    return 0;
}

static enum lock_status rlua_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err)
{
    int64_t t0 = lab_now_ns();
    enum lock_status st = redis_block_acquire(c, key, wait_ns, err);
    test_slow_stretch(&slow.acquire, t0);
    return st;
}

static enum release_status rlua_release(struct lock_client *c, const char *key,
                                        struct lab_err *err)
{
    int64_t t0 = lab_now_ns();
    enum release_status rs = redis_block_release(c, key, err);
    if (slow.release.twice && rs != RELEASE_ERROR) {
        /* the same compare-and-delete again: the key is gone or another
         * client's, so it deletes nothing, at the same cost */
        struct lab_err ignored = {0};
        redis_block_release(c, key, &ignored);
    }
    test_slow_stretch(&slow.release, t0);
    return rs;
}

REDIS_SM_GROUP_HOOKS(rlua, rlua);

const struct lock_ops lock_redis_lua = {
    .name = "redis-lua",
    .backend = "redis",
    .summary = "unique token, SET NX PX, Lua compare-and-delete: breaks when business time > TTL",
    .caps = LOCK_CAP_TTL | LOCK_CAP_FENCING,
    .open = rlua_open,
    .acquire = rlua_acquire,
    .release = rlua_release,
    .close = redis_block_close,
    .async = &rlua_async,
};
