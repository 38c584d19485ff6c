/*
 * servers_etcd.h - embedded etcd clusters (servers_etcd.c): one member or
 * three, Debian's etcd-server on free loopback ports, and what each member
 * says of itself (its id and the leader it follows, its metrics), for the
 * etcd store's table (backend_etcd.c).
 */
#ifndef LOCKLAB_SERVERS_ETCD_H
#define LOCKLAB_SERVERS_ETCD_H

#include <stddef.h>
#include <stdint.h>

#include "servers.h"

/* Start a cluster of n (1 or 3) members and wait until a leader is elected
 * and every member answers healthy. endpoints receives
 * "127.0.0.1:p1,...". Gives up when *stop (may be NULL) is set. 0 or -1
 * with err filled (ENOENT when etcd is not installed). */
int servers_etcd_start(struct server *srv, int n, const volatile int *stop, char *endpoints,
                       size_t len, struct lab_err *err);

/* What member s says of itself (/v3/maintenance/status), never waiting on
 * one that is down or stopped by a fault: 1 it answered (*id its member
 * id, *leader the leader it knows, 0 for none), 0 it did not. */
int servers_etcd_status(struct server *s, uint64_t *id, uint64_t *leader);

/* The sum over the members of endpoints of the Prometheus counter metric
 * (its lines starting "metric" followed by a space or '{'). 0, or -1 with
 * err filled. */
int servers_etcd_metric(const char *endpoints, const char *metric, int64_t *sum,
                        struct lab_err *err);

/* Delete every key of keys (n of them, without ETCD_KEY_PREFIX) and every
 * key under "<key>/", on the cluster at endpoints. 0 or -1 with err. */
int servers_etcd_clear(const char *endpoints, char (*keys)[160], int n, struct lab_err *err);

/* Answers healthy (/health) within 5 s: 0, or -1 with err filled. */
int servers_etcd_ping(const char *endpoints, struct lab_err *err);

/* The version line of the installed etcd (backend_ops.version). */
int servers_etcd_version(char *out, size_t outlen);

#endif
