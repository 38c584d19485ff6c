/*
 * redis_check_then_set.c - EXISTS, then SET, then EXPIRE as three commands.
 *
 * The first lock most people write (seed 004): look whether the key is
 * there and, if not, set it. Between the EXISTS that saw no key and the SET
 * another client can run the same EXISTS, so both believe they hold the
 * lock: the check-then-act race. Release is a plain DEL.
 *
 * The protocol is redis_machine.c's (REDIS_SM_CHECK_THEN_SET), in either
 * mode.
 */
#include "redis_drive.h"

static const struct redis_sm_design cts = {.kind = REDIS_SM_CHECK_THEN_SET,
                                           .name = "redis-check-then-set"};

REDIS_SM_HOOKS(cts, cts);

const struct lock_ops lock_redis_check_then_set = {
    .name = "redis-check-then-set",
    .backend = "redis",
    .summary = "EXISTS, then SET, then EXPIRE: two clients can both see the key free",
    .caps = LOCK_CAP_TTL,
    .open = cts_open,
    .acquire = redis_block_acquire,
    .release = redis_block_release,
    .close = redis_block_close,
    .async = &cts_async,
};
