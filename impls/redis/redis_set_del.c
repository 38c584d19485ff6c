/*
 * redis_set_del.c - SET key const NX PX ttl; plain DEL to release.
 *
 * Atomic acquire with a TTL, but the value is a constant and the release a
 * bare DEL: a client whose TTL ran out during a long critical section
 * deletes the lock the next client now holds, letting a third one in.
 *
 * The protocol is redis_machine.c's (REDIS_SM_SET_DEL), in either mode.
 */
#include "redis_drive.h"

static const struct redis_sm_design ssd = {.kind = REDIS_SM_SET_DEL, .name = "redis-set-del"};

REDIS_SM_HOOKS(ssd, ssd);

const struct lock_ops lock_redis_set_del = {
    .name = "redis-set-del",
    .backend = "redis",
    .summary = "SET NX PX with a constant value, DEL to release: deletes others' locks after expiry",
    .caps = LOCK_CAP_TTL,
    .open = ssd_open,
    .acquire = redis_block_acquire,
    .release = redis_block_release,
    .close = redis_block_close,
    .async = &ssd_async,
};
