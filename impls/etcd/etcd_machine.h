/*
 * etcd_machine.h - the etcd designs as one state machine without I/O:
 * etcd-lease, etcd-mutex (concurrency.Mutex over a Session) and
 * etcd-lock-api (etcd's Lock service).
 *
 * What these designs send and what each answer means is decided here,
 * once; the two drivers around the machine only move requests: the
 * per-process one over blocking libcurl (etcd_drive_block.c, common/
 * etcd_conn.h) and the client groups' one on the event loop
 * (etcd_drive_group.c, common/etcd_aconn.h). tests/test_etcd_machine.c
 * feeds it scripted answers, with no server. The machine reads no clock:
 * the time comes with every event.
 *
 * Two lanes, each driven by calls that return the next thing to do. The
 * operation lane (open is nothing: the first request connects):
 *
 *   act = etcd_sm_acquire(m, key, wait, now)
 *   CALL    POST m->path with the body etcd_sm_take(m) on the client's
 *           connection; then etcd_sm_reply(m, resp, NULL, now), or
 *           etcd_sm_reply(m, NULL, err, now) when no member answered or
 *           etcd answered an error (its text in err)
 *   STREAM  the same as a stream (a watch, the Lock call): each message to
 *           etcd_sm_msg (it only looks), until it answers non-zero, until
 *           m->deadline or the run's stop; then etcd_sm_stream_end(m, r,
 *           err, now): 1 it had what it awaited, 0 deadline or stop (the
 *           stream abandoned), -1 with err (cut, failed)
 *   SLEEP   nothing before m->wake_at (m->next_member: the connection's
 *           next request to the next member); then etcd_sm_timer(m, now)
 *   DONE    the operation ended: m->status or m->release, with m->err
 *   IGNORED the event answered nothing in flight (a late answer after the
 *           operation ended or moved on): nothing changed, nothing to do
 *
 * and the keep-alive lane (a session's lease, or etcd-lease's with
 * etcd_keepalive), which the operation lane arms and disarms; the driver
 * runs it beside the operations, on a connection of its own (a thread,
 * or timers on the loop), and asks etcd_sm_ka_state after every call of
 * the operation lane:
 *
 *   WAIT  nothing before m->ka.wake_at; then etcd_sm_ka_timer(m, now)
 *   SEND  POST ETCD_KEEPALIVE with etcd_sm_ka_take(m) on the keep-alive
 *         connection; then etcd_sm_ka_reply(m, resp or NULL, now)
 *   IDLE  nothing armed
 *
 * Decisions, each after what etcd's Go client does (clientv3 and its
 * concurrency package):
 * - a session (Session) is a lease of lock.ttl kept alive every ttl/3; a
 *   renewal no member answers is sent again every 50 ms while the lease
 *   may still run; a renewal answered TTL 0, or none answered for a whole
 *   TTL, ends the session (Session.Done), and the next acquire makes a
 *   new one (NewSession). A late answer for a lease renewed no more
 *   (a session replaced meanwhile) ends nothing;
 * - a request with the session's lease that etcd answers "requested lease
 *   not found" (the lease expired behind a partition or a pause the
 *   keep-alive did not report yet) ends the session: the acquire makes a
 *   new one and tries again, once, as an application does when Lock
 *   returns ErrLeaseNotFound on a session whose Done fired;
 * - a watch its member cut is opened again on the next member after
 *   20 ms, from the same revision (clientv3's watcher resumes); one etcd
 *   canceled (compacted) is an error;
 * - a wait that runs out, or the run's stop, ends in LOCK_TIMEOUT: the
 *   stream abandoned; etcd-mutex deletes its key (Mutex.Lock's clean-up on
 *   a cancelled context), etcd-lease revokes its lease; with the stop
 *   already raised no watch nor Lock call is sent (a cancelled context
 *   fails before the RPC);
 * - a release that could not be sent ends the session (its lease revoked,
 *   best effort): a key left behind would block everyone until its TTL.
 */
#ifndef LOCKLAB_ETCD_MACHINE_H
#define LOCKLAB_ETCD_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "etcd_requests.h"
#include "lock.h"

#define ETCD_MAX_HOLDS 8
#define ETCD_REWATCH_NS (20 * 1000000LL)  /* a cut watch: the next member after this */
#define ETCD_KA_RETRY_NS (50 * 1000000LL) /* an unanswered renewal: again after this */

enum etcd_sm_kind {
    ETCD_SM_LEASE,   /* a key put with a lease per acquire; watch its deletion */
    ETCD_SM_MUTEX,   /* a key per waiter under the prefix, a session's lease */
    ETCD_SM_LOCK_API /* the Lock call with a session's lease */
};

struct etcd_sm_design {
    enum etcd_sm_kind kind;
    const char *name;
};

enum etcd_sm_act {
    ETCD_SM_CALL,
    ETCD_SM_STREAM,
    ETCD_SM_SLEEP,
    ETCD_SM_DONE,
    ETCD_SM_IGNORED /* an event nothing of ours awaited (a late answer): nothing to do */
};
enum etcd_ka_act { ETCD_KA_IDLE, ETCD_KA_WAIT, ETCD_KA_SEND };

enum etcd_sm_step {
    ESM_IDLE,
    ESM_GRANT,        /* a lease grant: etcd-lease's, or a session's */
    ESM_REVOKE_STALE, /* etcd-lease: a lease half gone, revoked before a fresh one */
    ESM_TRY,          /* etcd-lease: the creating transaction */
    ESM_WATCH,        /* the watch of wkey's deletion from rev (a stream) */
    ESM_PAUSE,        /* a cut watch: the pause before the next member */
    ESM_ENTER,        /* etcd-mutex: the entering transaction */
    ESM_LOWER,        /* etcd-mutex: the last key created before ours */
    ESM_OWN,          /* etcd-mutex: our own key read again */
    ESM_GIVE_UP,      /* etcd-mutex: our key deleted after the wait ran out */
    ESM_LOCK,         /* etcd-lock-api: the Lock call (a stream) */
    ESM_TOKEN,        /* etcd-lock-api: the owner key's create revision */
    ESM_END_REVOKE,   /* etcd-lease: the acquire's lease revoked, then the outcome */
    ESM_RELEASE,      /* the release's request */
    ESM_DROP,         /* a release that failed: the session revoked */
    ESM_CLOSE         /* close: the session revoked */
};

enum etcd_sm_op { ESM_OP_NONE, ESM_OP_ACQUIRE, ESM_OP_RELEASE, ESM_OP_CLOSE };

/* One grant this client holds (a nested grant is one more). */
struct etcd_hold {
    char key[ETCD_KEY_MAX];   /* the lock key as the harness names it */
    char ekey[ETCD_EKEY_MAX]; /* the etcd key that holds it */
    int64_t rev;              /* its create revision: the fencing token */
    char value[64];           /* etcd-lease: the value it put, unique per grant */
};

/* The keep-alive lane. */
struct etcd_ka {
    bool armed;       /* renewing id */
    bool inflight;    /* a renewal awaits its answer */
    bool retry;       /* the one in flight is a resend of an unanswered one */
    int64_t id;       /* the lease renewed */
    int64_t sent_id;  /* the lease of the renewal in flight */
    uint64_t gen, gen_sent; /* arms and disarms; the one the renewal in flight is for */
    int64_t give_up;  /* an unanswered renewal is given up at this time */
    int64_t wake_at;  /* WAIT: the next renewal */
    json_t *body;     /* SEND: the request */
};

struct etcd_sm {
    /* what it is (etcd_sm_init) */
    const struct etcd_sm_design *design;
    const struct lock_env *env;   /* settings, counters, stop flag */
    char ident[32];               /* this client's identity (etcd-lease's values) */
    int64_t ttl_s;                /* a lease's TTL in whole seconds, at least 1 */
    bool keepalive;               /* etcd-lease: renew its lease while held */
    /* the session (etcd-mutex, etcd-lock-api) */
    int64_t lease;                /* its lease, 0 before the first */
    bool lease_lost;              /* it is over: the next acquire makes a new one */
    uint64_t grants;              /* etcd-lease: grants asked (its values) */
    struct etcd_hold held[ETCD_MAX_HOLDS];
    int n_held;
    struct etcd_ka ka;
    /* the operation under way */
    enum etcd_sm_op op;
    enum etcd_sm_step step;
    const char *key;
    int64_t deadline;             /* the end of the wait budget */
    bool renewed;                 /* this acquire made a new session after "lease not found" */
    int64_t op_lease, granted;    /* etcd-lease: this acquire's lease, when it was asked */
    int64_t rev;                  /* a watch's revision read; a grant's token */
    int64_t my_rev;               /* etcd-mutex: our key's create revision */
    bool canceled;                /* etcd canceled the watch */
    char ekey[ETCD_EKEY_MAX];     /* our key (etcd-lease, etcd-mutex); the owner key */
    char wkey[ETCD_EKEY_MAX];     /* the key a watch waits on */
    char pfx[ETCD_KEY_MAX + 16];  /* etcd-mutex: the lock's prefix */
    char value[64];               /* etcd-lease: this grant's value */
    int outcome;                  /* what the operation ends with after a last request */
    /* what to do (for the act just returned) */
    const char *path;
    json_t *body;                 /* CALL, STREAM: the request (etcd_sm_take) */
    int64_t wake_at;              /* SLEEP */
    bool next_member;             /* SLEEP: move the connection to the next member */
    /* the outcome (DONE) */
    enum lock_status status;
    enum release_status release;
    struct lab_err err;
};

/* Set m up for design d in env; ident tells this client's values apart
 * ("<client>.<pid>"); keepalive: etcd-lease's etcd_keepalive. */
void etcd_sm_init(struct etcd_sm *m, const struct etcd_sm_design *d, const struct lock_env *env,
                  const char *ident, bool keepalive);
/* Free what m still owns (a request not taken). */
void etcd_sm_free(struct etcd_sm *m);
/* The design keeps a session (its lease is revoked at close). */
bool etcd_sm_has_session(const struct etcd_sm *m);

/* Start an operation; each returns the first act. */
enum etcd_sm_act etcd_sm_acquire(struct etcd_sm *m, const char *key, int64_t wait_ns,
                                 int64_t now);
enum etcd_sm_act etcd_sm_release(struct etcd_sm *m, const char *key, int64_t now);
/* Close: the keep-alive disarmed, the session's lease revoked (CALL) or
 * nothing to do (DONE). */
enum etcd_sm_act etcd_sm_close(struct etcd_sm *m, int64_t now);

/* The request of a CALL or STREAM (a reference handed over). */
json_t *etcd_sm_take(struct etcd_sm *m);

/* Feed what happened; each returns the next act. */
enum etcd_sm_act etcd_sm_reply(struct etcd_sm *m, const json_t *resp, const struct lab_err *err,
                               int64_t now);
/* A stream's message (as etcd_msg_fn: 1 have it, 0 read on, -1 with err). */
/* The TTL of the designs' leases for lock.ttl ttl_ns: whole seconds, rounded
 * up, at least 1 (etcd grants leases in seconds). */
int64_t etcd_sm_lease_s(int64_t ttl_ns);

int etcd_sm_msg(struct etcd_sm *m, const json_t *msg, struct lab_err *err);
enum etcd_sm_act etcd_sm_stream_end(struct etcd_sm *m, int r, const struct lab_err *err,
                                    int64_t now);
enum etcd_sm_act etcd_sm_timer(struct etcd_sm *m, int64_t now);

/* The keep-alive lane. */
enum etcd_ka_act etcd_sm_ka_state(const struct etcd_sm *m);
enum etcd_ka_act etcd_sm_ka_timer(struct etcd_sm *m, int64_t now);
enum etcd_ka_act etcd_sm_ka_reply(struct etcd_sm *m, const json_t *resp, int64_t now);
json_t *etcd_sm_ka_take(struct etcd_sm *m);

#endif
