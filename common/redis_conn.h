/*
 * redis_conn.h - opening a Redis connection, the one thing about Redis that
 * both the lock designs (impls/) and the harness's own server handling
 * need: connect with a timeout, set the same timeout on commands, and turn
 * a failure into a lab_err that names the server; and ask a sentinel
 * which server is the master.
 */
#ifndef LOCKLAB_REDIS_CONN_H
#define LOCKLAB_REDIS_CONN_H

#include <stddef.h>

#include "lab.h"

struct redisContext;

/* Connect to Redis at host:port with connect and command timeouts of
 * timeout_ms. Returns the context, or NULL with err filled ("cannot connect
 * to <what> at host:port: ..."). what names the server in the message. */
struct redisContext *redis_conn_open(const char *what, const char *host, int port,
                                     int timeout_ms, struct lab_err *err);

/* Ask the Redis sentinel at host:port where the master it monitors under
 * name is (SENTINEL get-master-addr-by-name): 0 with host_out/port_out
 * filled, or -1 with err filled (no answer, or the sentinel knows no such
 * master). */
int redis_sentinel_ask(const char *host, int port, const char *name, int timeout_ms,
                       char *host_out, size_t host_len, int *port_out, struct lab_err *err);

#endif
