/*
 * zk_wire.h - a small ZooKeeper client session on an event loop
 * (evloop.h), speaking the wire protocol itself: the transport of
 * the ZooKeeper designs in a client group (zk_drive_group.c).
 *
 * The C client Debian ships is the multi-threaded one: two threads per
 * session, every request crossing three threads, which kept a group of
 * ZooKeeper clients at half of what one thread speaking the protocol
 * reaches. This session does the same work on the group's own thread: a
 * non-blocking TCP connection to one of the ensemble's servers, the
 * connect handshake, pings at a third of the negotiated timeout, replies
 * matched to their requests by xid (the server answers in order), watch
 * notifications, and after a lost connection the same session resumed on
 * the next server (its id and password). Outcomes and events carry the C
 * client's numbers (ZOK, ZNONODE, ZCONNECTIONLOSS, ZSESSIONEXPIRED...,
 * ZOO_SESSION_EVENT, ZOO_CONNECTED_STATE...), so code written against the
 * library reads them unchanged: a request in flight when the connection
 * drops ends with ZCONNECTIONLOSS, a session the server no longer knows
 * turns ZKW_EXPIRED with a session event in the expired state.
 *
 * Every callback runs on the loop's thread, from inside the session's I/O
 * or timer handling (or from zkw_close): a callback must not close the
 * session it is called for.
 */
#ifndef LOCKLAB_ZK_WIRE_H
#define LOCKLAB_ZK_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "evloop.h"

/* A session's state (zkw_state), the C client's numbers. */
#define ZKW_CONNECTING 1
#define ZKW_CONNECTED 3
#define ZKW_EXPIRED (-112)
/* Event types and the flags of a create, the C client's numbers too. */
#define ZKW_SESSION_EVENT (-1)
#define ZKW_EPHEMERAL 1
#define ZKW_SEQUENTIAL 2
#define ZKW_WATCH_CHILDREN 1 /* a watch type: children (ZWATCHTYPE_CHILD) */

struct zkw;

/* What a reply brought: rc, and by request the created path, the node's
 * Stat (czxid, ephemeralOwner) or the children's names. */
struct zkw_result {
    int rc;
    const char *path;   /* create: the node's path ("" otherwise) */
    int64_t czxid;      /* create with stat, exists, get */
    int64_t owner;      /* exists, get: the node's ephemeral owner */
    int n;              /* children: how many names */
    char **names;       /* children: valid during the callback only */
};
typedef void (*zkw_done_fn)(void *arg, const struct zkw_result *r);
/* A watch notification or a session event (type ZKW_SESSION_EVENT, state
 * the session's new state). */
typedef void (*zkw_event_fn)(void *ctx, int type, int state, const char *path);

/* A new session with hosts ("host:port,host:port"), asking for timeout_ms;
 * it connects in the background (a session event says when). NULL with
 * err filled on a bad host list or out of memory. */
struct zkw *zkw_open(struct evloop *L, const char *hosts, int timeout_ms, zkw_event_fn on_event,
                     void *ctx, struct lab_err *err);
/* Close the session (closeSession sent when connected, not waited for) and
 * free it; a request still in flight ends with ZCLOSING. */
void zkw_close(struct zkw *w);

/* The same without the close request: the socket just closes, as a dying
 * process's does, and the server ends the session when it times out. */
void zkw_abandon(struct zkw *w);
int zkw_state(const struct zkw *w);
/* The session's id (0 before the first connect). */
int64_t zkw_session_id(const struct zkw *w);

/* Requests. Each returns ZOK when sent (done will be called once), or the
 * code why not (ZCONNECTIONLOSS while not connected, ZINVALIDSTATE once
 * expired, ZBADARGUMENTS for a path too long): then done is not called. */
int zkw_create(struct zkw *w, const char *path, int flags, bool want_stat, zkw_done_fn done,
               void *arg);
int zkw_delete(struct zkw *w, const char *path, zkw_done_fn done, void *arg);
int zkw_children(struct zkw *w, const char *path, bool watch, zkw_done_fn done, void *arg);
int zkw_exists(struct zkw *w, const char *path, bool watch, zkw_done_fn done, void *arg);
int zkw_get(struct zkw *w, const char *path, bool watch, zkw_done_fn done, void *arg);
/* Take back this session's watches of type (ZKW_WATCH_CHILDREN) on path,
 * as the C client's zoo_remove_watches (removeWatches): ZNOWATCHER when
 * the server has none left (it fired). */
int zkw_remove_watches(struct zkw *w, const char *path, int type, zkw_done_fn done, void *arg);

#endif
