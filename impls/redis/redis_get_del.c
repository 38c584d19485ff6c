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
#include "redis_drive.h"

static const struct redis_sm_design sgd = {.kind = REDIS_SM_GET_DEL, .name = "redis-get-del"};

REDIS_SM_HOOKS(sgd, sgd);

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
    .acquire = redis_block_acquire,
    .release = redis_block_release,
    .close = redis_block_close,
    .async = &sgd_async,
    .failpoints = sgd_failpoints,
};
