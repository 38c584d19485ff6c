/*
 * redis_setnx_expire.c - SETNX, then EXPIRE as a second command; DEL.
 *
 * SETNX alone is atomic, so two live clients never both win; but the TTL is
 * set by a separate command, and a client that dies between the two leaves
 * a lock that never expires (seed 003). Release is a plain DEL, which also
 * removes a lock that has already passed to someone else.
 *
 * The protocol is redis_machine.c's (REDIS_SM_SETNX_EXPIRE), in either
 * mode, with its failpoint after-setnx between the two commands.
 */
#include "redis_drive.h"

static const struct redis_sm_design sne = {.kind = REDIS_SM_SETNX_EXPIRE,
                                           .name = "redis-setnx-expire"};

REDIS_SM_HOOKS(sne, sne);

static const struct lock_failpoint sne_failpoints[] = {
    {"after-setnx", "between the SETNX that won and the EXPIRE"},
    {NULL, NULL},
};

const struct lock_ops lock_redis_setnx_expire = {
    .name = "redis-setnx-expire",
    .backend = "redis",
    .summary = "SETNX then EXPIRE: a client dying in between leaves a lock with no TTL",
    .caps = LOCK_CAP_TTL,
    .open = sne_open,
    .acquire = redis_block_acquire,
    .release = redis_block_release,
    .close = redis_block_close,
    .async = &sne_async,
    .failpoints = sne_failpoints,
};
