/*
 * redis_admin.h - what the harness itself asks of a lock store: clear the
 * lock keys before a run and count the commands it served, from INFO
 * commandstats, to report server operations per acquire; and the one-off
 * commands of the sentinel topology's settling and failover.
 */
#ifndef LOCKLAB_REDIS_ADMIN_H
#define LOCKLAB_REDIS_ADMIN_H

#include <stdint.h>

#include "lab.h"
#include "redis_conn.h"

/* One command (no arguments to format) on a new connection to host:port
 * with timeout_ms: the reply, or NULL with err filled when the server did
 * not answer or answered an error. The caller frees the reply. */
struct redisReply *redis_admin_command(const char *host, int port, int timeout_ms,
                                       const char *cmd, struct lab_err *err);

/* Delete key on host:port. 0 or -1 with err filled. */
int redis_admin_del(const char *host, int port, const char *key, struct lab_err *err);

/* Total calls of every command in INFO commandstats, leaving out the
 * harness's own (info, config, ping). Read it after clearing the lock keys: the
 * DEL of that reset is not left out. 0 or -1 with err filled. */
int redis_admin_calls(const char *host, int port, int64_t *calls, struct lab_err *err);

#endif
