/*
 * redis_common.h - what the Redis designs' drivers share: the timeouts,
 * finding the store from a process (the sentinels' master, or the one
 * server). The Lua scripts several designs send and the fence counter's
 * name are the machine's (redis_machine.h). What is sent and what a reply means is decided by the machines
 * (redis_machine.h, redisson_machine.h, redlock_machine.h).
 */
#ifndef LOCKLAB_REDIS_COMMON_H
#define LOCKLAB_REDIS_COMMON_H

#include <stdbool.h>

#include <hiredis/hiredis.h>

#include "lock.h"
#include "redis_machine.h" /* the shared scripts, the fence counter */

/* Connect and command timeout, in either mode: long enough for a loaded
 * 2-core machine, short enough that a dead lock store ends a client's loop. */
#define REDIS_TIMEOUT_MS 10000

/* Sentinel topology, in either mode: how long a client looks for the
 * master across a failover (a few times the failover the lab tunes for),
 * and how often it asks the sentinels meanwhile. */
#define REDIS_SENTINEL_SEARCH_NS (10000000000LL)
#define REDIS_SENTINEL_RETRY_NS (20000000LL)

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

#endif
