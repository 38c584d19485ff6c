/*
 * redlock_drive.h - the two drivers of redlock's state machine
 * (redlock_machine.h): one process per client on blocking hiredis
 * connections (redlock_drive_block.c) and client groups on the event loop
 * (redlock_drive_group.c). Each sends the machine's fan-outs to the
 * masters and feeds back what each master did; neither decides anything.
 */
#ifndef LOCKLAB_REDLOCK_DRIVE_H
#define LOCKLAB_REDLOCK_DRIVE_H

#include "lock.h"
#include "redlock_machine.h"

/* One process per client (lock_ops hooks). */
int rl_block_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err);
enum lock_status rl_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                  struct lab_err *err);
enum release_status rl_block_release(struct lock_client *c, const char *key,
                                     struct lab_err *err);
void rl_block_close(struct lock_client *c);

/* Client groups (lock_async_ops). */
extern const struct lock_async_ops rl_group_ops;

#endif
