/*
 * zk_machine.h - the ZooKeeper designs as one state machine without I/O:
 * zk-sequential (Curator's InterProcessMutex), zk-ephemeral (one
 * ephemeral node, losers exists-watch it) and zk-semaphore (Curator's
 * InterProcessSemaphoreMutex).
 *
 * What these designs send and what each reply means is decided here,
 * once; the two drivers around the machine only move requests: the
 * per-process one on the C client libzookeeper_mt (zk_drive_block.c),
 * the client groups' one on the lab's own wire session on the event loop
 * (zk_drive_group.c, zk_wire.h). tests/test_zk_machine.c feeds it
 * scripted replies, with no server. The machine reads no clock (the time
 * comes with every call) and knows ZooKeeper's reply codes by their
 * protocol numbers, which both transports report unchanged.
 *
 * Calls return the next thing to do (enum zk_sm_act); before any act,
 * the driver closes the session when m->drop is set (its ephemeral nodes
 * go with it; the next SESSION opens a new one) and clears the flag:
 *
 *   act = zk_sm_acquire(m, key, wait, now)
 *   SEND     send request m->req on m->path (m->want_stat: create2) in the
 *            session; then zk_sm_reply(m, &reply, now). A request that
 *            cannot be sent is fed as its code (no session: ZINVALIDSTATE)
 *   SESSION  a connected session: open one when there is none, then wait
 *            until it is connected or expired, until m->deadline or the
 *            run's stop; then zk_sm_session(m, state, session id, err, now)
 *   WAIT     nothing before a watch or session event or m->deadline (or
 *            the stop), counting events since the last SEND; then
 *            zk_sm_event(m, now) or zk_sm_timer(m, now)
 *   DONE     the operation ended: m->open_rc, m->status or m->release,
 *            with m->err
 *   IGNORED  the event answered nothing awaited: nothing to do
 *
 * Decisions (the blocking and grouped forms once made some apart):
 * - a session lost its connection: wait (within the budget) for the same
 *   session and find out what became of the request; a create whose reply
 *   was lost is found again by its unique name (Curator's protected
 *   mode); an expired session ends the attempt (its nodes are gone);
 * - a give-up takes its node with it (Curator's guaranteed delete): when
 *   ZooKeeper is unreachable, it waits up to one session timeout for the
 *   same session and deletes then; so does giving up after a create whose
 *   outcome is unknown, once it has found that node by its unique name
 *   (zk-ephemeral: the node, if our session owns it). Only a session not
 *   back within its timeout is closed: it has expired on the server, its
 *   nodes with it. Closing it at once cannot reach an unreachable server,
 *   and the waiter's node headed the queue until the session expired;
 * - a held node whose delete fails for two session timeouts closes the
 *   session instead, so it cannot outlive its holder;
 * - a client holding ZK_MAX_HOLDS locks is refused before anything is
 *   sent, in every design: zk-ephemeral's blocking form used to create
 *   the node and delete it again (waking every waiter for nothing), and
 *   the group then dropped its session when the grant could not be
 *   recorded. Curator has no such table; it never creates a node it is
 *   not going to hold, so the check comes first and a grant is always
 *   recorded;
 * - a failure while making the persistent parents gives up a create of
 *   unknown outcome as every other give-up does (the group used to keep
 *   the session and with it a node nobody holds);
 * - a parent creation that failed on a lost connection is tried again
 *   (the same node) once a session is back, as Curator's
 *   creatingParentsIfNeeded retries inside its RetryLoop;
 * - lock.on_disconnect: abort (Curator's tech note 14): the driver raises
 *   lock_env.lost at a disconnect; the release of a lock given up that
 *   way closes the session rather than deleting (not owner).
 */
#ifndef LOCKLAB_ZK_MACHINE_H
#define LOCKLAB_ZK_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "lock.h"

#define ZK_ROOT LOCK_ZK_ROOT /* parent of every lock's persistent node */
#define ZK_PATH_MAX 512      /* longest node path the designs build */
#define ZK_KEY_MAX 256       /* longest lock key */
#define ZK_NODE_MAX (ZK_PATH_MAX + 100) /* a node under a directory of ZK_PATH_MAX */
#define ZK_MAX_HOLDS 8       /* locks (or non-reentrant nested grants) held at once */
#define ZK_CONNECT_NS (10LL * 1000000000) /* the first connect, at open */

/* ZooKeeper's reply codes (its protocol numbers, as the C client's). */
enum {
    ZK_OK = 0,
    ZK_SYSTEMERROR = -1,
    ZK_CONNECTIONLOSS = -4,
    ZK_OPERATIONTIMEOUT = -7,
    ZK_BADARGUMENTS = -8,
    ZK_INVALIDSTATE = -9,
    ZK_NONODE = -101,
    ZK_NODEEXISTS = -110,
    ZK_SESSIONEXPIRED = -112,
    ZK_AUTHFAILED = -115,
    ZK_SESSIONMOVED = -118
};

/* The ZooKeeper designs' own setting (lock.on_disconnect). ignore: a
 * holder goes on through a lost connection, trusting its session (the
 * library's default); abort: Curator's tech note 14, a lost connection
 * (the session suspended, not yet expired) is a lost lock: the driver
 * raises lock_env.lost, the client abandons its critical section before
 * its write, and the release closes the session instead of deleting. */
enum zk_on_disconnect { ZK_DISCONNECT_IGNORE = 0, ZK_DISCONNECT_ABORT };
struct zk_options {
    int on_disconnect; /* enum zk_on_disconnect */
};

enum zk_sm_kind { ZK_SM_SEQUENTIAL, ZK_SM_EPHEMERAL, ZK_SM_SEMAPHORE };

struct zk_sm_design {
    enum zk_sm_kind kind;
    const char *name;
};

enum zk_sm_act { ZK_SM_SEND, ZK_SM_SESSION, ZK_SM_WAIT, ZK_SM_DONE, ZK_SM_IGNORED };

/* The requests (SEND). */
enum zk_sm_req {
    ZK_REQ_CREATE,          /* a persistent node */
    ZK_REQ_CREATE_SEQ,      /* an ephemeral-sequential node; the reply's path is its name */
    ZK_REQ_CREATE_EPH,      /* an ephemeral node (want_stat: create2, the reply's czxid) */
    ZK_REQ_CHILDREN,        /* the reply's names */
    ZK_REQ_CHILDREN_WATCH,  /* the same, with a children watch */
    ZK_REQ_GET_WATCH,       /* getData with a watch (none set on a missing node) */
    ZK_REQ_EXISTS_WATCH,    /* exists with a watch; the reply's czxid and owner */
    ZK_REQ_EXISTS,          /* the reply's owner */
    ZK_REQ_DELETE,
    ZK_REQ_UNWATCH_CHILDREN /* take back our children watch (Curator's removeWatchers) */
};

/* What a SESSION found. */
enum zk_sm_state {
    ZK_SM_CONNECTED, /* with the session's id */
    ZK_SM_EXPIRED,   /* the session is gone with its nodes */
    ZK_SM_NOT_YET,   /* not connected by the deadline, or the run stops */
    ZK_SM_FAILED     /* no session could be started (err) */
};

/* A reply: its code and, by request, the created path, the node's Stat
 * (czxid, ephemeralOwner) or the children's names. */
struct zk_sm_reply {
    int rc;
    const char *path;
    int64_t czxid, owner;
    int n;
    char *const *names;
};

/* One lock this client holds: its node, and in which session it was
 * created (a lock of an earlier session is gone with it). */
struct zk_sm_hold {
    char key[ZK_KEY_MAX];
    char path[ZK_NODE_MAX];
    uint64_t gen;
    int count; /* > 1 only for zk-sequential's nested grants */
};

enum zk_sm_op { ZSM_OP_NONE, ZSM_OP_OPEN, ZSM_OP_ACQUIRE, ZSM_OP_RELEASE };

/* What the acquire is doing: queueing (zk-sequential, zk-semaphore's
 * internal mutex), zk-ephemeral's node, zk-semaphore's lease, or its
 * internal mutex deleted after the lease. */
enum zk_sm_phase { ZSM_QUEUE, ZSM_EPHEMERAL, ZSM_LEASE, ZSM_UNLOCK };

struct zk_sm {
    /* what it is */
    const struct zk_sm_design *design;
    const struct lock_env *env;
    char id[33];                  /* this client's id, in its node names */
    bool abort_on_disconnect;     /* lock.on_disconnect: abort */
    uint64_t creates;             /* attempts so far (node names are unique) */
    /* the session, as the machine sees it */
    uint64_t gen;                 /* bumped at every drop */
    int64_t session_id;           /* of the connected session */
    uint64_t wakes, seen;         /* events fed; the count at the last watch set */
    char parent_key[ZK_KEY_MAX];  /* key whose parent (and subdirs) is known to exist */
    char parent[ZK_PATH_MAX];
    struct zk_sm_hold held[ZK_MAX_HOLDS];
    int n_held;
    /* the operation under way */
    enum zk_sm_op op;
    enum zk_sm_phase phase;
    int step, resume;             /* what it awaits; after a session wait, what next */
    bool same;                    /* the session wait wants the session of my_gen */
    bool inflight;                /* a request awaits its reply */
    int ready;                    /* the session wait: 1 connected, 0 not yet, -1 gone */
    const char *key;
    int64_t deadline;
    int sub_i;                    /* the subdirectory being made */
    char name[96];                /* our node's unique prefix in this attempt */
    char dir[ZK_NODE_MAX];        /* the directory our node goes in */
    char mine[ZK_NODE_MAX];       /* our node */
    uint64_t my_gen;              /* the session our node (or this turn) belongs to */
    bool unknown;                 /* a create whose outcome we do not know, in this session */
    bool first;                   /* the first turn of the enter loop */
    bool maybe_created;           /* zk-ephemeral: the last create's outcome is unknown */
    bool nested;                  /* zk-ephemeral: this turn, we hold key already */
    bool watching;                /* zk-semaphore: a children watch on leases/ to take back */
    bool retried;                 /* the delete: a lost reply was retried */
    int last_rc;
    char lock[ZK_NODE_MAX];       /* zk-semaphore: its internal mutex's node */
    uint64_t lock_gen;
    char lease[ZK_NODE_MAX];      /* zk-semaphore: its lease, while the mutex goes */
    enum lock_status st;          /* the outcome decided, while cleaning up */
    struct lab_err acq_err;       /* its error */
    int clean;                    /* a give-up: what it takes with it */
    struct lab_err clean_err;     /* the give-up's error, kept through its clean-up */
    /* what to do (for the act just returned) */
    bool drop;                    /* close the session first */
    enum zk_sm_req req;
    char path[ZK_NODE_MAX];
    bool want_stat;
    /* the outcome (DONE) */
    int open_rc;
    enum lock_status status;
    enum release_status release;
    struct lab_err err;
};

/* Set m up for design d in env with the client's id (32 hex digits). */
void zk_sm_init(struct zk_sm *m, const struct zk_sm_design *d, const struct lock_env *env,
                const char *id);

/* The session timeout to ask for, in ms (env's, else 10 s). */
int zk_sm_session_ms(const struct lock_env *env);

/* Start an operation; each returns the first act. */
enum zk_sm_act zk_sm_open(struct zk_sm *m, int64_t now);
enum zk_sm_act zk_sm_acquire(struct zk_sm *m, const char *key, int64_t wait_ns, int64_t now);
enum zk_sm_act zk_sm_release(struct zk_sm *m, const char *key, int64_t now);

/* Feed what happened; each returns the next act. */
enum zk_sm_act zk_sm_reply(struct zk_sm *m, const struct zk_sm_reply *r, int64_t now);
enum zk_sm_act zk_sm_session(struct zk_sm *m, enum zk_sm_state st, int64_t id,
                             const struct lab_err *err, int64_t now);
enum zk_sm_act zk_sm_event(struct zk_sm *m, int64_t now);
enum zk_sm_act zk_sm_timer(struct zk_sm *m, int64_t now);

/* The fencing token of a sequential node: its sequence number plus one
 * (0 when the path has none). */
int64_t zk_sm_sequence_of(const char *path);

#endif
