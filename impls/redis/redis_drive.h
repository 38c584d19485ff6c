/*
 * redis_drive.h - the two drivers of the Redis designs' state machine
 * (redis_machine.h): one process per client on a blocking hiredis
 * connection (redis_drive_block.c), and client groups on the event loop
 * (redis_drive_group.c). Each knows Redis's transport and topologies (a
 * single server, or the master its sentinels name) and no design: a
 * design file hands its struct redis_sm_design to these hooks.
 */
#ifndef LOCKLAB_REDIS_DRIVE_H
#define LOCKLAB_REDIS_DRIVE_H

#include "lock.h"
#include "redis_machine.h"

struct redisReply;

/* hiredis's reply as the machine reads it (valid while r lives). */
void redis_sm_from_hiredis(const struct redisReply *r, struct redis_sm_reply *out);

/* One process per client (lock_ops hooks, with the design). */
int redis_block_open(struct lock_client **out, const struct lock_env *env,
                     const struct redis_sm_design *d, struct lab_err *err);
enum lock_status redis_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err);
enum release_status redis_block_release(struct lock_client *c, const char *key,
                                        struct lab_err *err);

/* Client groups (lock_async_ops hooks, with the design). */
int redis_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                     const struct redis_sm_design *d, lock_opened_fn opened, void *arg,
                     struct lab_err *err);
void redis_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                         lock_acquired_fn done, void *arg);
void redis_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                         void *arg);
void redis_group_close(struct lock_client *c);

/* -1 with err set when env's servers are a sentinel topology: for the
 * group forms that do not follow sentinels yet (redisson, redlock); else 0. */
int redis_async_refuse_sentinel(const struct lock_env *env, struct lab_err *err);

#endif
