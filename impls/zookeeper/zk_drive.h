/*
 * zk_drive.h - the two drivers of the ZooKeeper designs' state machine
 * (zk_machine.h): one process per client on the C client libzookeeper_mt
 * (zk_drive_block.c) and client groups on the lab's own wire session on
 * the event loop (zk_drive_group.c, zk_wire.h). Each knows ZooKeeper's
 * transport (a session, its requests counted as round trips, its watch
 * and session events) and no design: a design file hands its struct
 * zk_sm_design to these hooks. Also the designs' shared setting
 * (lock.on_disconnect).
 */
#ifndef LOCKLAB_ZK_DRIVE_H
#define LOCKLAB_ZK_DRIVE_H

#include "evloop.h"
#include "lock.h"
#include "zk_machine.h"

struct zk_block;
struct zk_group;

struct lock_client {
    const struct lock_env *env;
    struct zk_sm sm;
    struct zk_block *bk; /* one process per client: its session and threads */
    struct zk_group *gr; /* in a client group: its loop's side */
};

/* lock.on_disconnect's row, and its check: abort cannot run in client
 * groups (their workload cannot abandon a unit); 0 or -1. */
extern const struct opt zk_option_rows[];
int zk_finish_options(void *options, const struct lock_opts_ctx *ctx, struct lab_err *err);

/* One process per client (lock_ops hooks, with the design). */
int zk_block_open(struct lock_client **out, const struct lock_env *env,
                  const struct zk_sm_design *d, struct lab_err *err);
enum lock_status zk_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                  struct lab_err *err);
enum release_status zk_block_release(struct lock_client *c, const char *key,
                                     struct lab_err *err);
void zk_block_close(struct lock_client *c);

/* Client groups (lock_async_ops hooks, with the design). */
int zk_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                  const struct zk_sm_design *d, lock_opened_fn opened, void *arg,
                  struct lab_err *err);
void zk_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                      lock_acquired_fn done, void *arg);
void zk_group_release(struct lock_client *c, const char *key, lock_released_fn done, void *arg);
void zk_group_close(struct lock_client *c);
void zk_group_crash(struct lock_client *c);

#endif
