/*
 * servers_zk.h - embedded ZooKeeper servers (servers_zk.c): an ensemble of
 * QuorumPeerMain processes, what each says of itself (srvr, mntr), and the
 * one-session clean-up and check the ZooKeeper store's table uses.
 */
#ifndef LOCKLAB_SERVERS_ZK_H
#define LOCKLAB_SERVERS_ZK_H

#include <stddef.h>
#include <stdint.h>

#include "servers.h"

/* Start a ZooKeeper ensemble of n (1 or 3) servers (QuorumPeerMain from
 * Debian's zookeeper package, a generated zoo.cfg each) and wait until a
 * client session connects. hosts receives the connection string
 * "127.0.0.1:p1,...". force_sync sets forceSync. Gives up when *stop (may
 * be NULL) is set during the wait. 0 or -1 with err filled
 * (ENOENT when java or the ZooKeeper jars are missing). */
int servers_zk_start(struct server *srv, int n, int force_sync, const volatile int *stop,
                     char *hosts, size_t hostslen, struct lab_err *err);

/* What one embedded ZooKeeper server says of itself (srvr), without waiting
 * on one that is down or stopped by a fault (a stopped JVM accepts a
 * connection and never answers): down, not serving (starting, looking for a
 * leader, syncing), or its mode. *connections (may be NULL) receives its
 * client connections when it serves. A server that exited is reaped. */
enum zk_mode { ZK_MODE_DOWN = 0, ZK_MODE_NOT_SERVING, ZK_MODE_STANDALONE, ZK_MODE_LEADER,
               ZK_MODE_FOLLOWER, ZK_MODE_OTHER };
enum zk_mode servers_zk_mode(struct server *s, int *connections);

/* Packets received by every server of a ZooKeeper connection string (mntr's
 * zk_packets_received, summed): client requests, session pings included.
 * Only numeric IPv4 addresses. 0 or -1 with err filled. */
int servers_zk_packets(const char *hosts, int64_t *packets, struct lab_err *err);

/* Watch notifications the ZooKeeper servers of hosts have sent so far (the
 * sums of mntr's node created/deleted/children/changed watch counts). 0,
 * or -1 with err filled. */
int servers_zk_watch_events(const char *hosts, int64_t *events, struct lab_err *err);

/* Delete every node below each of the n parents, however deep (the nodes
 * a lock left behind, e.g. those of a client killed in an earlier run,
 * which would otherwise live on until its session times out, and
 * zk-semaphore's locks/ and leases/ with theirs), in one session; the
 * parents stay. A missing parent is fine. 0 or -1 with err filled. */
int servers_zk_clear(const char *hosts, const char *const *parents, int n, struct lab_err *err);

/* Check that a ZooKeeper connection string accepts a session within
 * timeout_ms. 0 or -1 with err filled. */
int servers_zk_ping(const char *hosts, int timeout_ms, struct lab_err *err);

/* The version of the ZooKeeper the lab starts, as Debian's package names
 * it (the server prints none without starting). 0, or -1 when it is not
 * installed. */
int servers_zk_version(char *out, size_t outlen);

#endif
