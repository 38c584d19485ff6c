/*
 * redis_setnx_expire.c - SETNX, then EXPIRE as a second command; DEL.
 *
 * SETNX alone is atomic, so two live clients never both win; but the TTL is
 * set by a separate command, and a client that dies between the two leaves
 * a lock that never expires (seed 003). Release is a plain DEL, which also
 * removes a lock that has already passed to someone else.
 */
#include "failpoint.h"
#include "redis_common.h"
#include "redis_async.h"

static const struct failpoint *sne_after_setnx; /* armed failpoint, NULL when not */

static int sne_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    redisReply *r = redis_cmd(c, err, "SETNX %s %s", key, c->token);
    if (!r)
        return -1;
    int won = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    if (!won)
        return 0;
    failpoint_hit(sne_after_setnx, c->env->stop);
    r = redis_cmd(c, err, "PEXPIRE %s %lld", key, redis_ttl_ms(c));
    if (!r)
        return -1;
    freeReplyObject(r);
    return 1;
}

static int sne_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    sne_after_setnx = failpoint_find("redis-setnx-expire", "after-setnx");
    return redis_lock_open(out, env, sne_try, err);
}

static const struct lock_failpoint sne_failpoints[] = {
    {"after-setnx", "between the SETNX that won and the EXPIRE"},
    {NULL, NULL},
};

/* In a client group: the same commands, without blocking (redis_async.c). */
static int sne_async_open(struct lock_client **out, const struct lock_env *env,
                         struct evloop *loop, lock_opened_fn opened, void *arg,
                         struct lab_err *err)
{
    return redis_async_open(out, env, loop, REDIS_ASYNC_SETNX_EXPIRE, opened, arg, err);
}

static const struct lock_async_ops sne_async = {
    .open = sne_async_open,
    .acquire = redis_async_acquire,
    .release = redis_async_release,
    .close = redis_async_close,
};

const struct lock_ops lock_redis_setnx_expire = {
    .name = "redis-setnx-expire",
    .backend = "redis",
    .summary = "SETNX then EXPIRE: a client dying in between leaves a lock with no TTL",
    .caps = LOCK_CAP_TTL,
    .open = sne_open,
    .acquire = redis_poll_acquire,
    .release = redis_release_del,
    .close = redis_lock_close,
    .async = &sne_async,
    .failpoints = sne_failpoints,
};
