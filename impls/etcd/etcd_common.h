/*
 * etcd_common.h - what the etcd lock designs share (etcd_common.c).
 *
 * Each client talks to every member it is given through etcd's v3 JSON
 * gateway (common/etcd_conn.h), counting each request as a round trip.
 * Leases are etcd's: a lease is granted with lock.ttl in whole seconds (at
 * least 1; a server raises it to its own minimum, 1.5 election timeouts),
 * and a key put with it is deleted when it runs out. Two kinds of lease:
 *   - per hold (etcd-lease): granted for one acquire, the key carries it;
 *   - per client, a session (etcd-mutex, etcd-lock-api, as Go's
 *     concurrency.Session and `etcdctl lock`): granted once, kept alive
 *     every ttl/3 by a keep-alive thread (watchdog.h), revoked on close.
 *     When a keep-alive finds the lease gone (the client was paused past
 *     its TTL), the session is over: the next acquire grants a new one.
 * A waiter waits on a watch of the key it queues behind (a streaming POST
 * to /v3/watch from the revision it read), never polling.
 */
#ifndef LOCKLAB_ETCD_COMMON_H
#define LOCKLAB_ETCD_COMMON_H

#include <stdatomic.h>
#include <stdbool.h>

#include "etcd_conn.h"
#include "lock.h"
#include "watchdog.h"

#define ETCD_KEY_MAX 256
#define ETCD_MAX_HOLDS 8
#define ETCD_CALL_TIMEOUT_MS 2000 /* one member's answer, then the next member */

/* The gateway's calls the designs send (both sides, blocking and grouped). */
#define ETCD_TXN "/v3/kv/txn"
#define ETCD_RANGE "/v3/kv/range"
#define ETCD_DELETE "/v3/kv/deleterange"
#define ETCD_GRANT "/v3/lease/grant"
#define ETCD_REVOKE "/v3/lease/revoke"
#define ETCD_KEEPALIVE "/v3/lease/keepalive"
#define ETCD_WATCH "/v3/watch"
#define ETCD_LOCK "/v3/lock/lock"
#define ETCD_UNLOCK "/v3/lock/unlock"

struct etcd_async; /* a grouped client's side (etcd_async.c) */

/* One grant this client holds (a nested grant is one more). */
struct etcd_hold {
    char key[ETCD_KEY_MAX];  /* the lock key as the harness names it */
    char ekey[ETCD_KEY_MAX + 32]; /* the etcd key that holds it */
    int64_t rev;             /* its create revision: the fencing token */
    int64_t lease;           /* the lease it carries */
    char value[64];          /* etcd-lease: the value it put, unique per grant */
};

struct lock_client {
    const struct lock_env *env;
    struct etcd_conn *ec;        /* the client's own requests */
    struct etcd_conn *wd_conn;   /* the keep-alive thread's */
    struct watchdog *wd;         /* keep-alive; NULL when the design keeps none */
    int64_t ttl_s;               /* the TTL asked for a lease */
    int64_t lease;               /* a session's lease, 0 before the first */
    _Atomic int lease_lost;      /* a keep-alive found the session's lease gone */
    uint64_t grants;             /* grants asked so far (etcd-lease's values) */
    struct etcd_hold held[ETCD_MAX_HOLDS];
    int n_held;
    struct etcd_async *as;       /* in a client group: its loop's side; else NULL */
};

/* A client with nothing open yet (ttl_s from env): NULL with err. */
struct lock_client *etcd_client_new(const struct lock_env *env, struct lab_err *err);

/* Allocate a client for env's servers; keepalive: start the keep-alive
 * thread (the sessions' and etcd-lease's option). 0, or -1 with err
 * filled and *out NULL. */
int etcd_lock_open(struct lock_client **out, const struct lock_env *env, bool keepalive,
                   struct lab_err *err);

/* Stop keep-alives, revoke the session's lease, free c. */
void etcd_lock_close(struct lock_client *c);

/* Grant a lease of c->ttl_s: its id, and when the request went out
 * (CLOCK_MONOTONIC) in *sent (may be NULL). 0 or -1 with err filled. */
int etcd_lease_grant(struct lock_client *c, int64_t *id, int64_t *sent, struct lab_err *err);

/* Revoke lease id (best effort). */
void etcd_lease_revoke(struct lock_client *c, int64_t id);

/* The session's lease, granted (and kept alive) anew when there is none or
 * the last one was lost: its id, or 0 with err filled. */
int64_t etcd_session(struct lock_client *c, struct lab_err *err);

/* End the session after a release that could not be sent: its lease is
 * revoked (or, when etcd cannot be reached either, no longer kept alive,
 * so it runs out), and with it every key of ours, as ZooKeeper's designs
 * close their session; the next acquire grants a new one. */
void etcd_session_drop(struct lock_client *c);

/* After a request with the session's lease failed with err: when etcd no
 * longer knows the lease, the session is over (the next acquire grants a
 * new one). */
void etcd_session_failed(struct lock_client *c, const struct lab_err *err);

/* The requests' bodies, the same from both sides. */
json_t *etcd_grant_req(const struct lock_client *c);   /* a lease of c->ttl_s */
json_t *etcd_lease_id_req(int64_t id);                /* revoke, keep-alive */
/* {key}: a range of one key, its deletion, an Unlock. */
json_t *etcd_key_req(const char *key);
/* A watch of key's deletions from rev + 1. */
json_t *etcd_watch_delete_req(const char *key, int64_t rev);
/* A message of that watch: 1 a deletion (counted as a notification),
 * 0 read on, -1 with err when etcd canceled the watch (*canceled set). */
int etcd_watch_msg(struct lock_client *c, json_t *msg, bool *canceled, struct lab_err *err);

/* Wait until key (the full etcd key) is deleted after revision rev, on a
 * watch from rev + 1. 1 deleted, 0 deadline or stop, -1 with err. */
int etcd_wait_delete(struct lock_client *c, const char *key, int64_t rev, int64_t deadline,
                     struct lab_err *err);

/* Delete key: 1 it was there, 0 it was gone, -1 with err filled. */
int etcd_delete(struct lock_client *c, const char *key, struct lab_err *err);

/* The first kv of a range answer (a txn's response_range or a range's
 * own), NULL when there is none. */
const json_t *etcd_first_kv(const json_t *range);

/* Record a grant of key by etcd key ekey at revision rev with lease, and
 * set the fencing token (with env->fencing). -1 with err when full. */
int etcd_hold_push(struct lock_client *c, const char *key, const char *ekey, int64_t rev,
                   int64_t lease, struct lab_err *err);

/* Take the innermost hold of key into *out: 1, or 0 when there is none. */
int etcd_hold_pop(struct lock_client *c, const char *key, struct etcd_hold *out);

#endif
