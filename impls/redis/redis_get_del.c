/*
 * redis_get_del.c - unique token; release is GET, compare, then DEL.
 *
 * The owner check is right, but it takes two round trips: if the lock
 * expires and another client takes it between our GET and our DEL, the DEL
 * removes the other client's lock (seed 003's "non-atomic release").
 * The failpoint redis-get-del/before-del sits in that window, so a test can
 * widen it on purpose.
 *
 * The protocol is redis_machine.c's (REDIS_SM_GET_DEL), in either mode.
 */
#include "redis_common.h"
#include "redis_drive.h"

static const struct redis_sm_design sgd = {.kind = REDIS_SM_GET_DEL, .name = "redis-get-del"};

static int sgd_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return redis_block_open(out, env, &sgd, err);
}

static int sgd_group_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    return redis_group_open(out, env, loop, &sgd, opened, arg, err);
}

static const struct lock_failpoint sgd_failpoints[] = {
    {"before-del", "between the GET that found the lock ours and the DEL"},
    {NULL, NULL},
};

static const struct lock_async_ops sgd_async = {
    .client_faults = true, /* the group driver shares nothing between clients */
    .open = sgd_group_open,
    .acquire = redis_group_acquire,
    .release = redis_group_release,
    .close = redis_group_close,
};

const struct lock_ops lock_redis_get_del = {
    .name = "redis-get-del",
    .backend = "redis",
    .summary = "unique token, release by GET then DEL: the release races with expiry",
    .caps = LOCK_CAP_TTL,
    .open = sgd_open,
    .acquire = redis_block_acquire,
    .release = redis_block_release,
    .close = redis_block_close,
    .async = &sgd_async,
    .failpoints = sgd_failpoints,
};
