/*
 * redis_persist.h - what an embedded Redis keeps across a restart fault:
 * backends.redis.persistence (none, aof-everysec, aof-always), applied to
 * the running server before each run and to its next start.
 */
#ifndef LOCKLAB_REDIS_PERSIST_H
#define LOCKLAB_REDIS_PERSIST_H

#include "lab.h"
#include "redis_settings.h"
#include "servers.h"

/* Make embedded Redis s keep what p says from now on: CONFIG SET
 * appendfsync and appendonly (turning the AOF on waits until its first
 * rewrite is on disk), and the same settings for the server's restarts
 * (s->more_args). 0 or -1 with err filled. */
int redis_persist_apply(struct server *s, enum redis_persistence p, struct lab_err *err);

/* "none", "aof-everysec" or "aof-always", as a scenario writes it. */
const char *redis_persist_name(enum redis_persistence p);

#endif
