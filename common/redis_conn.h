/*
 * redis_conn.h - opening a Redis connection, the one thing about Redis that
 * both the lock designs (impls/) and the harness's own server handling
 * need: connect with a timeout, set the same timeout on commands, and turn
 * a failure into a lab_err that names the server.
 */
#ifndef LOCKLAB_REDIS_CONN_H
#define LOCKLAB_REDIS_CONN_H

#include "lab.h"

struct redisContext;

/* Connect to Redis at host:port with connect and command timeouts of
 * timeout_ms. Returns the context, or NULL with err filled ("cannot connect
 * to <what> at host:port: ..."). what names the server in the message. */
struct redisContext *redis_conn_open(const char *what, const char *host, int port,
                                     int timeout_ms, struct lab_err *err);

#endif
