/*
 * redis_get_del.c - unique token; release is GET, compare, then DEL.
 *
 * The owner check is right, but it takes two round trips: if the lock
 * expires and another client takes it between our GET and our DEL, the DEL
 * removes the other client's lock (seed 003's "non-atomic release").
 * The failpoint redis-get-del/before-del sits in that window, so a test can
 * widen it on purpose.
 */
#include <string.h>

#include "failpoint.h"
#include "redis_common.h"

static const struct failpoint *sgd_before_del; /* armed failpoint, NULL when not */

static int sgd_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    return redis_set_nx_px(c, key, c->token, err);
}

static int sgd_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    sgd_before_del = failpoint_find("redis-get-del", "before-del");
    return redis_lock_open(out, env, sgd_try, err);
}

static enum release_status sgd_release(struct lock_client *c, const char *key, struct lab_err *err)
{
    redisReply *r = redis_cmd(c, err, "GET %s", key);
    if (!r)
        return RELEASE_ERROR;
    int ours = r->type == REDIS_REPLY_STRING && strcmp(r->str, c->token) == 0;
    freeReplyObject(r);
    if (!ours)
        return RELEASE_NOT_OWNER;
    failpoint_hit(sgd_before_del, c->env->stop);
    int deleted = redis_del(c, key, err);
    return deleted < 0 ? RELEASE_ERROR : deleted ? RELEASE_OK : RELEASE_NOT_OWNER;
}

static const struct lock_failpoint sgd_failpoints[] = {
    {"before-del", "between the GET that found the lock ours and the DEL"},
    {NULL, NULL},
};

const struct lock_ops lock_redis_get_del = {
    .name = "redis-get-del",
    .backend = "redis",
    .summary = "unique token, release by GET then DEL: the release races with expiry",
    .caps = LOCK_CAP_TTL,
    .open = sgd_open,
    .acquire = redis_poll_acquire,
    .release = sgd_release,
    .close = redis_lock_close,
    .failpoints = sgd_failpoints,
};
