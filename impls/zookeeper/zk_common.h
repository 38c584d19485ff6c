/*
 * zk_common.h - what the ZooKeeper lock designs share.
 *
 * All three hold one ZooKeeper session through the multi-threaded C client
 * (zookeeper_mt): the calls below are the synchronous API, and watch
 * callbacks run on the client's completion thread, where they only count
 * the event and signal a condition variable that the client's own thread
 * waits on (with the wait budget as deadline and a look at env->stop every
 * 50 ms). Locks live under a persistent parent /locklab/<key>; what the
 * designs put there is ephemeral, so a lock is held by a session, not by a
 * TTL: it ends when the holder closes its session or the session expires.
 *
 * Besides the session, the calls and the table of holds every design
 * keeps (zk_common.c), this header declares the sequential queue recipe
 * (zk_queue.c: an ephemeral-sequential node per waiter, the lowest holds,
 * each waiter watches only its predecessor), which is zk-sequential's lock
 * and zk-semaphore's internal mutex, and the protected create both use for
 * their nodes. Each design's file is left with what sets it apart:
 * zk-ephemeral's single node, zk-sequential's hold count, zk-semaphore's
 * leases.
 */
#ifndef LOCKLAB_ZK_COMMON_H
#define LOCKLAB_ZK_COMMON_H

#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "lock.h"

#define ZK_ROOT LOCK_ZK_ROOT /* parent of every lock's persistent node */
#define ZK_PATH_MAX 512      /* longest node path the designs build */
#define ZK_KEY_MAX 256       /* longest lock key */
#define ZK_MAX_HOLDS 8       /* locks (or non-reentrant nested grants) held at once */

/* src into dst (n bytes), cut to fit as snprintf(dst, n, "%s", src) would;
 * the length copied. A client group copies node paths with it several
 * times a cycle, where snprintf's format machinery cost more than the copy. */
static inline size_t zk_copy(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len >= n)
        len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
    return len;
}

/* The ZooKeeper designs' own setting, one row they all share (a key of
 * the lock section: lock.on_disconnect). ignore: a holder goes on through
 * a lost connection, trusting its session (the library's default);
 * abort: Curator's tech note 14, a lost connection (the session
 * suspended, not yet expired) is a lost lock: the design raises
 * lock_env.lost, the client abandons its critical section before its
 * write, and the release closes the session instead of deleting. */
enum zk_on_disconnect { ZK_DISCONNECT_IGNORE = 0, ZK_DISCONNECT_ABORT };
struct zk_options {
    int on_disconnect; /* enum zk_on_disconnect */
};
extern const struct opt zk_option_rows[];

/* finish_options of the designs that run in client groups: on_disconnect:
 * abort does not (the group's workload cannot abandon a unit); 0 or -1. */
int zk_finish_options(void *options, const struct lock_opts_ctx *ctx, struct lab_err *err);

/* One lock this client holds: the node that carries it, and in which
 * session it was created (a lock created in an earlier session is gone). */
struct zk_hold {
    char key[ZK_KEY_MAX];   /* lock key as the harness names it */
    char path[ZK_PATH_MAX]; /* the ephemeral node that holds the lock */
    uint64_t gen;           /* session_gen when the node was created */
    int count;              /* hold count: > 1 only for a reentrant design */
};

/* The client state of every ZooKeeper design. */
struct lock_client {
    zhandle_t *zh;               /* the session's handle; NULL after a drop until reopened */
    const struct lock_env *env;  /* harness settings and counters */
    uint64_t session_gen;        /* bumped on every session opened or dropped */
    pthread_mutex_t mu;          /* guards the fields the completion thread writes: */
    pthread_cond_t cv;           /*   broadcast on every watch or session event */
    uint64_t wakes;              /*   watch and session events received */
    char id[33];                 /* random client id, carried in sequential node names */
    uint64_t creates;            /* sequential creates so far (node names are unique) */
    char parent_key[ZK_KEY_MAX]; /* key whose parent node (and subdirs) is known to exist */
    char parent[sizeof ZK_ROOT + ZK_KEY_MAX]; /* that parent: ZK_ROOT "/<key>" */
    const char *const *subdirs;  /* persistent children of the parent the design keeps its
                                    nodes in (NULL-terminated), NULL when none */
    bool abort_on_disconnect;    /* lock.on_disconnect: abort (read by the completion thread) */
    struct zk_hold held[ZK_MAX_HOLDS]; /* granted locks, innermost last */
    int n_held;
    struct zk_async *as;         /* in a client group: the loop's side (zk_async.c), else NULL */
};

/* ---------------------------------------------------------------- session */

/* Allocate a client and open its session with env->servers (conn and
 * session_timeout_ns), waiting until it is connected (or the
 * connect timeout or env->stop). Returns 0 or -1 with err filled; *out is
 * NULL on error. */
int zk_lock_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err);

/* The session timeout to ask for, in ms (env's, else the designs' default). */
int zk_session_timeout_ms(const struct lock_env *env);

/* zookeeper_init with env's ensemble and session timeout, the client's
 * threads started with the run's signals blocked (they stay the caller's).
 * The handle, or NULL with err filled. */
zhandle_t *zk_handle_init(const struct lock_env *env, watcher_fn watcher, void *ctx,
                          struct lab_err *err);

/* Close the session (its ephemeral nodes go with it) and free c. */
void zk_lock_close(struct lock_client *c);

/* Make sure there is a connected session: reopen one whose session expired
 * or was dropped, then wait until connected. 1 connected, 0 deadline
 * (CLOCK_MONOTONIC ns) or stop, -1 with err filled. */
int zk_session_ready(struct lock_client *c, int64_t deadline, struct lab_err *err);

/* Close the session now, so that whatever ephemeral node of ours could not
 * be deleted goes with it; the next zk_session_ready opens a new one. */
void zk_session_drop(struct lock_client *c);

/* A key becomes one path component: no '/', not "." or "..", not empty.
 * 0, or -1 with err filled. */
int zk_key_check(const char *key, struct lab_err *err);

/* A connected session, the persistent parent of key (c->parent) and the
 * design's c->subdirs under it: 1 ready, 0 deadline or stop, -1 with err
 * filled. */
int zk_prepare(struct lock_client *c, const char *key, int64_t deadline, struct lab_err *err);

/* ---------------------------------------------------------------- calls */

/* The synchronous calls the designs use, each counted as one round trip
 * in env->stats. Watches set by the *_watch calls signal c's condition
 * variable (see zk_wait). They return the ZooKeeper code. zk_get_watch
 * reads the node (getData) and watches it: unlike an exists-watch, it sets
 * no watch when the node is missing (ZNONODE). */
int zk_create(struct lock_client *c, const char *path, int mode, char *out, int outlen,
              struct Stat *stat /* the new node's, NULL when not wanted */);
int zk_exists_watch(struct lock_client *c, const char *path, struct Stat *stat);
int zk_get_watch(struct lock_client *c, const char *path);
int zk_children(struct lock_client *c, const char *path, struct String_vector *names);
int zk_children_watch(struct lock_client *c, const char *path, struct String_vector *names);
int zk_delete(struct lock_client *c, const char *path);

/* Take back our children watch on path, as Curator's removeWatchers: the
 * client forgets it (so it wakes nobody), after one check-watches round trip
 * to the server, which keeps its side of the watch until it fires. A watch
 * that already fired is forgotten already: ZNOWATCHER, no round trip. */
int zk_unwatch_children(struct lock_client *c, const char *path);

/* The wake counter now: take it before setting a watch, pass it to zk_wait. */
uint64_t zk_wakes(struct lock_client *c);

/* Wait until an event arrives after `seen` (a watch fired, or the session
 * changed state), the deadline passes or the run stops. 1 woke, 0 not. */
int zk_wait(struct lock_client *c, uint64_t seen, int64_t deadline);

/* True for codes after which the session may still be alive (the request
 * may or may not have been applied): connection loss, operation timeout. */
bool zk_transient(int rc);

/* True for codes that mean the session is gone with its ephemeral nodes. */
bool zk_session_gone(int rc);

/* Fill err from a ZooKeeper code ("zookeeper <what> <path>: <zerror>"); -1. */
int zk_fail(struct lab_err *err, int rc, const char *what, const char *path);

/* After a transient failure of a call made in session gen: wait for the
 * connection to come back. 1 the same session is connected again (retry),
 * 0 deadline or stop, -1 the session is gone or broken (err filled). */
int zk_recover(struct lock_client *c, uint64_t gen, int64_t deadline, struct lab_err *err);

/* ---------------------------------------------------------------- holds */

/* The innermost hold of key, NULL when none. It may come from a session
 * that is gone since (hold->gen != c->session_gen): then it is not ours. */
struct zk_hold *zk_hold_find(struct lock_client *c, const char *key);

/* Record a grant of key by node path in the current session, with its
 * fencing token (set in env->stats->fence_token when env->fencing; 0 when
 * the design has none); -1 with err filled when the table is full (the
 * caller deletes the node). */
int zk_hold_push(struct lock_client *c, const char *key, const char *path, int64_t token,
                 struct lab_err *err);

/* The fencing token of the sequential designs: the sequence number
 * ZooKeeper appended to an ephemeral-sequential node's path (its last 10
 * digits; the ensemble numbers a parent's children in creation order),
 * plus one, since the first child's 0 would read as "no token". 0 when
 * the path has none. */
int64_t zk_sequence_of(const char *path);

/* Release the innermost hold of key: delete its node (the reentrant design
 * decrements its count first and calls this at zero). RELEASE_NOT_OWNER
 * when there is no hold, when its session is gone or when the node was
 * gone (someone deleted it); RELEASE_ERROR when ZooKeeper cannot be
 * reached (the session is then dropped so that the node surely goes). */
enum release_status zk_hold_release(struct lock_client *c, const char *key, struct lab_err *err);

/* Delete our node path, created in session gen, as zk_hold_release does:
 * through connection losses (for up to two session timeouts), deleting
 * again only a node still our session's; the same outcomes. */
enum release_status zk_delete_ours(struct lock_client *c, const char *path, uint64_t gen,
                                   struct lab_err *err);

/* ---------------------------------------------------------------- queue (zk_queue.c) */

/* Create our ephemeral-sequential node "<name><sequence>" under key's
 * parent, or under its subdirectory sub (NULL: the parent itself); mine
 * receives its path. name must be unique to this client and attempt: a
 * create whose reply a connection loss ate is found again by listing
 * (Curator's protected mode). Opens or reopens the session as needed, so
 * compare c->session_gen before and after when the session matters.
 * 1 created, 0 deadline or stop, -1 with err filled. */
int zk_enter(struct lock_client *c, const char *key, const char *sub, const char *name,
             char *mine, size_t len, int64_t deadline, struct lab_err *err);

/* Delete our node after a timeout or failure, if its session gen is still
 * ours; when ZooKeeper cannot be reached now, close the session instead: a
 * node left behind would block everyone. */
void zk_leave(struct lock_client *c, const char *path, uint64_t gen);

/* The sequential recipe, Curator's InterProcessMutex without the hold
 * count: create "lock-<client id>-<n>-" under key's parent (or its
 * subdirectory sub), list, hold when ours has the lowest sequence, else
 * watch the next lower one only (getData: a predecessor already gone
 * leaves no watch) and list again when it fires or turns out gone. On
 * timeout (deadline or stop) our node is deleted before returning.
 * 1 ours is the lowest (mine = its path, in session c->session_gen),
 * 0 timeout, -1 with err filled. */
int zk_queue_lock(struct lock_client *c, const char *key, const char *sub, char *mine,
                  size_t len, int64_t deadline, struct lab_err *err);

/* Where our node `mine` (a name, not a path) stands among the queue's
 * children: 1 lowest (it holds), 0 not (pred = the next lower node's
 * name), -1 it is not there. */
int zk_queue_position(const struct String_vector *sv, const char *mine, char *pred,
                      size_t predlen);

/* zk-sequential's acquire: zk_queue_lock under key's parent, the node
 * recorded as a hold on grant (zk_hold_push). */
enum lock_status zk_queue_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                  struct lab_err *err);

/* ---------------------------------------------------------------- groups (zk_async.c) */

/* zk-sequential's and zk-ephemeral's hooks for client groups: the same
 * requests through the lab's own wire session on the group's loop
 * (zk_wire.h), not the C client. */
extern const struct lock_async_ops zk_sequential_async;
extern const struct lock_async_ops zk_ephemeral_async;

#endif
