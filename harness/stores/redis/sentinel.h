/*
 * sentinel.h - an embedded Redis sentinel topology: one master, its
 * replicas and three sentinels, all on free loopback ports, tuned to fail
 * over within about a second; and what the harness asks of it (which
 * server is the master now, is everything settled again).
 */
#ifndef LOCKLAB_SENTINEL_H
#define LOCKLAB_SENTINEL_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "redis_settings.h"

#define SENTINEL_COUNT 3
#define SENTINEL_NAME "locklab" /* the master's name in the sentinels' configuration */
/* Every server of the topology: a replica's full sync starts at once
 * (Redis 7 waits 5 s for more replicas before a diskless one), so that an
 * old master back from a partition is in sync before the next run. */
#define SENTINEL_REDIS_ARGS "--repl-diskless-sync-delay 0"


struct sentinel_group {
    int n_redis;                                 /* master + replicas started */
    struct server redis[1 + REDIS_MAX_REPLICAS];   /* [0] was the first master */
    struct server sentinel[SENTINEL_COUNT];
};

/* Start a master, `replicas` replicas of it and the sentinels, and wait
 * until they are settled (sentinel_settle). 0, or -1 with err filled and
 * whatever was started stopped. */
int sentinel_start(struct sentinel_group *g, int replicas, const volatile int *stop,
                   struct lab_err *err);

/* Stop every server of the group. */
void sentinel_stop(struct sentinel_group *g);

/* The index in g->redis of the server the sentinels name as master now
 * (the first sentinel that answers), or -1 with err filled. */
int sentinel_master(const struct sentinel_group *g, struct lab_err *err);

/* Wait until every server of the group runs, every sentinel names the
 * same master, that master has every other server as an online replica
 * caught up with its offset, and each sentinel knows the other sentinels
 * and the replicas: the state a run starts from, and a failover fault
 * returns to. Gives up after timeout_ns or when *stop is set. 0, or -1
 * with err filled. */
int sentinel_settle(struct sentinel_group *g, int64_t timeout_ns, const volatile int *stop,
                    struct lab_err *err);

/* The failover fault's steps on g (sentinel_failover.c; the contract is
 * backend_ops.failover_step / failover_abort in backend.h). */
int sentinel_failover_step(struct sentinel_group *g, struct failover *fo, bool granted,
                           bool window_over, int64_t now, struct lab_err *err);
void sentinel_failover_abort(struct sentinel_group *g, struct failover *fo);

#endif
