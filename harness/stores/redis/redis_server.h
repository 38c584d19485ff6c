/*
 * redis_server.h - start an embedded redis-server and wait until it
 * answers: the lock store's servers in every topology, the sentinels'
 * PING wait, and the stock store the stock workload counts its sales in.
 * The process itself (its port, directory, tracking and clean-up) is
 * proc/servers.h's struct server.
 */
#ifndef LOCKLAB_REDIS_SERVER_H
#define LOCKLAB_REDIS_SERVER_H

#include "servers.h"

/* Start redis-server for role and wait until it answers PING.
 * Returns 0, or -1 with err filled (err->code ENOENT when redis-server is
 * not installed). The binary is $LOCKLAB_REDIS_SERVER or redis-server on PATH. */
int servers_redis_start(struct server *s, const char *role, struct lab_err *err);

/* The same with more redis-server arguments (extra, space-separated, kept
 * in s->extra for restarts, e.g. "--replicaof 127.0.0.1 6379"; "" for none)
 * and a library to preload into it now and at every restart (preload, NULL
 * for none: struct server.preload). */
int servers_redis_start_with(struct server *s, const char *role, const char *extra,
                             const char *preload, struct lab_err *err);

/* Wait until s (a redis-server, or one in sentinel mode: what names it)
 * answers PING; -1 with err filled if it died (its log is s->dir/logname)
 * or never answered. */
int servers_wait_ping(struct server *s, const char *what, const char *logname,
                      struct lab_err *err);

/* Check that a Redis at host:port answers PING within timeout_ms. 0 or -1. */
int servers_redis_ping(const char *host, int port, int timeout_ms, struct lab_err *err);

/* The version line of the redis-server the lab starts (Redis's version
 * hook, backend_ops.version). 0, or -1 when it is not installed. */
int servers_redis_version(char *out, size_t outlen);

#endif
