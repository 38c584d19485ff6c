/*
 * redis_drive.h - the drivers of the Redis state machines, two per
 * machine: one process per client (*_drive_block.c) and client groups on
 * the event loop (*_drive_group.c). Each is the glue from its machine's
 * acts to the links (redis_link.h) and decides nothing: the simple
 * designs' (redis_machine.h; a design file hands its struct
 * redis_sm_design to these hooks), Redisson's (redisson_machine.h, with
 * its pub/sub) and Redlock's (redlock_machine.h, a connection per master).
 */
#ifndef LOCKLAB_REDIS_DRIVE_H
#define LOCKLAB_REDIS_DRIVE_H

#include "lock.h"
#include "redis_machine.h"
#include "redisson_machine.h"
#include "redlock_machine.h"

/* One process per client (lock_ops hooks, with the design). */
int redis_block_open(struct lock_client **out, const struct lock_env *env,
                     const struct redis_sm_design *d, struct lab_err *err);
enum lock_status redis_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err);
enum release_status redis_block_release(struct lock_client *c, const char *key,
                                        struct lab_err *err);
void redis_block_close(struct lock_client *c);
/* Its machine (a test-only slowdown sets slow_ping). */
struct redis_sm *redis_block_machine(struct lock_client *c);

/* Client groups (lock_async_ops hooks, with the design). */
int redis_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                     const struct redis_sm_design *d, lock_opened_fn opened, void *arg,
                     struct lab_err *err);
void redis_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                         lock_acquired_fn done, void *arg);
void redis_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                         void *arg);
void redis_group_close(struct lock_client *c);

/* Redisson (lock_ops hooks; lock_async_ops). */
int rsn_block_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err);
enum lock_status rsn_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                   struct lab_err *err);
enum release_status rsn_block_release(struct lock_client *c, const char *key,
                                      struct lab_err *err);
void rsn_block_close(struct lock_client *c);
extern const struct lock_async_ops rsn_group_ops;

/* Redlock (lock_ops hooks; lock_async_ops). */
int rl_block_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err);
enum lock_status rl_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                  struct lab_err *err);
enum release_status rl_block_release(struct lock_client *c, const char *key,
                                     struct lab_err *err);
void rl_block_close(struct lock_client *c);
extern const struct lock_async_ops rl_group_ops;

/* A design's group hooks over its struct redis_sm_design d (the group
 * driver shares nothing between clients, so a fault may hit one alone):
 * prefix_group_open and prefix_async; REDIS_SM_HOOKS adds prefix_open. */
#define REDIS_SM_GROUP_HOOKS(prefix, d)                                                      \
    static int prefix##_group_open(struct lock_client **out, const struct lock_env *env,    \
                                   struct evloop *loop, lock_opened_fn opened, void *arg,   \
                                   struct lab_err *err)                                     \
    {                                                                                       \
        return redis_group_open(out, env, loop, &(d), opened, arg, err);                    \
    }                                                                                       \
    static const struct lock_async_ops prefix##_async = {                                   \
        .client_faults = true,                                                              \
        .open = prefix##_group_open,                                                        \
        .acquire = redis_group_acquire,                                                     \
        .release = redis_group_release,                                                     \
        .close = redis_group_close,                                                         \
    }
#define REDIS_SM_HOOKS(prefix, d)                                                            \
    static int prefix##_open(struct lock_client **out, const struct lock_env *env,          \
                             struct lab_err *err)                                           \
    {                                                                                       \
        return redis_block_open(out, env, &(d), err);                                       \
    }                                                                                       \
    REDIS_SM_GROUP_HOOKS(prefix, d)

#endif
