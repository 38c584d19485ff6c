/*
 * redis_common.h - what the single-instance Redis designs' drivers share:
 * the client's state in either mode, finding the store from a process (the
 * sentinels' master, or the one server), the Lua scripts several designs
 * send and the fence counter's name. What is sent and what a reply means
 * is decided by the machines (redis_machine.h, redisson_machine.h).
 */
#ifndef LOCKLAB_REDIS_COMMON_H
#define LOCKLAB_REDIS_COMMON_H

#include <stdbool.h>

#include <hiredis/hiredis.h>

#include "lock.h"
#include "watchdog.h"

/* Connect and command timeout, in either mode: long enough for a loaded
 * 2-core machine, short enough that a dead lock store ends a client's loop. */
#define REDIS_TIMEOUT_MS 10000

/* Sentinel topology, in either mode: how long a client looks for the
 * master across a failover (a few times the failover the lab tunes for),
 * and how often it asks the sentinels meanwhile. */
#define REDIS_SENTINEL_SEARCH_NS (10000000000LL)
#define REDIS_SENTINEL_RETRY_NS (20000000LL)

struct redis_sm;

/* The client state of the single-instance Redis designs (redis_drive.h)
 * and redisson's (redisson_drive.h). */
struct lock_client {
    redisContext *rc;              /* connection to the lock store (one process per client) */
    const struct lock_env *env;    /* harness settings and counters */
    char token[64];                /* this client's identity (128 random bits in hex, or more) */
    redisContext *wd_rc;           /* the watchdog thread's own connection */
    struct watchdog *wd;           /* renewal thread, NULL for designs without one */
    void *ext;                     /* redisson's driver state */
    unsigned reconnects;           /* times rc was replaced by a new connection */
    struct redis_sm *sm;           /* the designs of redis_machine.h: their state
                                      machine (either driver), else NULL */
    struct redis_sm *renewal;      /* its renewals' machine (watchdog thread), or NULL */
    struct redis_async *as;        /* in a client group: the group driver's side
                                      (redis_drive_group.c; rc is NULL then), else NULL */
};

/* A blocking connection to the design's lock store: the master the
 * sentinels name (checked with ROLE, asked again every
 * REDIS_SENTINEL_RETRY_NS while a failover is under way, for up to
 * REDIS_SENTINEL_SEARCH_NS or until the run stops), or the one server;
 * connect and command timeouts of timeout_ms. NULL with err filled. what
 * names it in messages ("Redis", "Redis (pub/sub)"). */
redisContext *redis_store_open(const char *what, const struct lock_env *env, int timeout_ms,
                               struct lab_err *err);

/* Does this answer to ROLE say master? (Both modes' search asks it.) */
bool redis_says_master(const redisReply *r);

/* The Lua scripts several designs share (KEYS[1] key, ARGV[1] token, ARGV[2] ttl ms). */
extern const char redis_compare_and_delete_lua[]; /* del if ours: 1 deleted, 0 not ours */
extern const char redis_compare_and_pexpire_lua[]; /* pexpire if ours: 1 extended, 0 not */
/* KEYS[1] lock, KEYS[2] its fence counter; ARGV[1] token, ARGV[2] ttl ms.
 * The new counter value when granted, 0 when the lock is taken. */
extern const char redis_fenced_set_nx_px_lua[];

/* Fencing (lock_env.fencing): the suffix of the counter key next to each
 * lock ("<key>:fence") whose INCR, in the granting script, is the token. */
#define REDIS_FENCE_SUFFIX ":fence"

/* The name of key's fence counter into out (len bytes); -1 with err filled
 * when it does not fit. */
int redis_fence_key(char *out, size_t len, const char *key, struct lab_err *err);

#endif
