/*
 * etcd_drive.h - the two drivers of the etcd designs' state machine
 * (etcd_machine.h): one process per client over blocking libcurl
 * (etcd_drive_block.c) and client groups on the event loop
 * (etcd_drive_group.c). Each knows etcd's transport (the gateway's calls
 * and streams over every member, a connection for the client's requests,
 * counted as round trips, and one for its keep-alive) and no design: a
 * design file hands its struct etcd_sm_design to these hooks.
 */
#ifndef LOCKLAB_ETCD_DRIVE_H
#define LOCKLAB_ETCD_DRIVE_H

#include <stdbool.h>

#include "etcd_machine.h"
#include "evloop.h"
#include "lock.h"

#define ETCD_CALL_TIMEOUT_MS 2000 /* one member's answer, then the next member */

struct etcd_block;
struct etcd_group;

struct lock_client {
    const struct lock_env *env;
    struct etcd_sm sm;
    struct etcd_block *bk; /* one process per client: its connections and keep-alive thread */
    struct etcd_group *gr; /* in a client group: its loop's side */
};

/* A new client's machine for d ("<client>.<pid>" its identity): NULL
 * with err. */
struct lock_client *etcd_client_new(const struct lock_env *env, const struct etcd_sm_design *d,
                                    bool keepalive, struct lab_err *err);

/* One process per client (lock_ops hooks, with the design). keepalive:
 * etcd-lease's etcd_keepalive (a session design always keeps one). */
int etcd_block_open(struct lock_client **out, const struct lock_env *env,
                    const struct etcd_sm_design *d, bool keepalive, struct lab_err *err);
enum lock_status etcd_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err);
enum release_status etcd_block_release(struct lock_client *c, const char *key,
                                       struct lab_err *err);
void etcd_block_close(struct lock_client *c);

/* Client groups (lock_async_ops hooks, with the design). */
int etcd_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                    const struct etcd_sm_design *d, bool keepalive, lock_opened_fn opened,
                    void *arg, struct lab_err *err);
void etcd_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                        lock_acquired_fn done, void *arg);
void etcd_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                        void *arg);
void etcd_group_close(struct lock_client *c);
/* Killed by a fault: its requests abandoned, its session left to expire. */
void etcd_group_crash(struct lock_client *c);

/* How long the first close of a group's loop waits for its sessions'
 * revokes (etcd_drive_group.c). */
#define ETCD_GROUP_CLOSE_NS (1000 * 1000000LL)

#endif
