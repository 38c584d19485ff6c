/*
 * redis_lane.h - how one command goes on a Redis connection, decided once
 * for the state machines of the single-instance designs (redis_machine.c)
 * and of Redisson (redisson_machine.c); without I/O (redis_lane.c).
 *
 * A machine keeps a lane, starts each operation and each new command on
 * it, asks it before a send whether a new connection comes first, and
 * hands it every loss and every error reply; the lane says what follows:
 * - a command whose connection broke under it (no reply) is sent once
 *   more on a new connection (Redisson's RedisExecutor, Lettuce's replay
 *   after a reconnect); a second loss fails the operation, and the next
 *   operation starts on a new connection;
 * - -READONLY / -NOREPLICAS (a master demoted by a failover, or cut off
 *   from its replicas) are the wrong server, not an answer: the connection
 *   is dropped, the master found anew (through the sentinels) and the
 *   command sent once more (Redisson on RedisReadonlyException, Jedis's
 *   sentinel pool);
 * - -NOSCRIPT on a script's call (a server restarted empty lost its
 *   script cache): SCRIPT LOAD and the call again, once per operation
 *   (redis-py's Script, Redisson's EVALSHA fallback);
 * - any other error reply fails the operation with the server's text.
 * Redlock decides none of this: a master's loss or error is a "no" vote
 * for its round (redlock_machine.h).
 */
#ifndef LOCKLAB_REDIS_LANE_H
#define LOCKLAB_REDIS_LANE_H

#include <stdbool.h>

#include "lab.h"

enum redis_lane_next {
    REDIS_LANE_FAIL,   /* the operation failed: err says why */
    REDIS_LANE_RESEND, /* send the command again (on a new connection: broken) */
    REDIS_LANE_RELOAD  /* SCRIPT LOAD the script, then call it again */
};

struct redis_lane {
    bool broken;   /* the connection is unusable: a new one before the next send */
    int resends;   /* resends of the current command (at most 1) */
    bool reloaded; /* this operation reloaded a script already */
};

/* A new connection first: a lane starts so, with no connection yet. */
void redis_lane_init(struct redis_lane *l);
/* An operation starts; a new command (not a resend) is sent. */
void redis_lane_op(struct redis_lane *l);
void redis_lane_cmd(struct redis_lane *l);

/* The command got no reply (why: the connection's word, or NULL). */
enum redis_lane_next redis_lane_lost(struct redis_lane *l, const char *why,
                                     struct lab_err *err);
/* The command got the error reply msg; script: it was a script's call. */
enum redis_lane_next redis_lane_error(struct redis_lane *l, const char *msg, bool script,
                                      struct lab_err *err);

#endif
