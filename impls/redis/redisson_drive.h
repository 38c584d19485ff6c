/*
 * redisson_drive.h - the two drivers of redisson's state machine
 * (redisson_machine.h): one process per client on blocking hiredis
 * connections (redisson_drive_block.c) and client groups on the event
 * loop (redisson_drive_group.c). They know Redis's transport, its
 * topologies and pub/sub, and nothing of what a reply means.
 */
#ifndef LOCKLAB_REDISSON_DRIVE_H
#define LOCKLAB_REDISSON_DRIVE_H

#include "lock.h"
#include "redisson_machine.h"

struct redisReply;

/* hiredis's reply as the machine reads it (valid while r lives). */
void rsn_reply_from_hiredis(const struct redisReply *r, struct rsn_reply *out);

/* One process per client (lock_ops hooks). */
int rsn_block_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err);
enum lock_status rsn_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                   struct lab_err *err);
enum release_status rsn_block_release(struct lock_client *c, const char *key,
                                      struct lab_err *err);
void rsn_block_close(struct lock_client *c);

/* Client groups (lock_async_ops). */
extern const struct lock_async_ops rsn_group_ops;

#endif
