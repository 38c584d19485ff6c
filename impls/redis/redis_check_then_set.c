/*
 * redis_check_then_set.c - EXISTS, then SET, then EXPIRE as three commands.
 *
 * The first lock most people write (seed 004): look whether the key is
 * there and, if not, set it. Between the EXISTS that saw no key and the SET
 * another client can run the same EXISTS, so both believe they hold the
 * lock: the check-then-act race. Release is a plain DEL.
 */
#include "redis_common.h"

static int cts_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    redisReply *r = redis_cmd(c, err, "EXISTS %s", key);
    if (!r)
        return -1;
    int taken = r->type == REDIS_REPLY_INTEGER && r->integer > 0;
    freeReplyObject(r);
    if (taken)
        return 0;
    r = redis_cmd(c, err, "SET %s %s", key, c->token);
    if (!r)
        return -1;
    freeReplyObject(r);
    r = redis_cmd(c, err, "PEXPIRE %s %lld", key, redis_ttl_ms(c));
    if (!r)
        return -1;
    freeReplyObject(r);
    return 1;
}

static int cts_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return redis_lock_open(out, env, cts_try, err);
}

const struct lock_ops lock_redis_check_then_set = {
    .name = "redis-check-then-set",
    .backend = "redis",
    .summary = "EXISTS, then SET, then EXPIRE: two clients can both see the key free",
    .caps = LOCK_CAP_TTL,
    .open = cts_open,
    .acquire = redis_poll_acquire,
    .release = redis_release_del,
    .close = redis_lock_close,
};
