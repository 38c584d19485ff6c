/*
 * etcd_async.h - the etcd designs' client on a group's event loop
 * (etcd_async.c), under each design's grouped state machine
 * (etcd_async_lease.c, ...).
 *
 * A grouped client is the blocking client (struct lock_client of
 * etcd_common.h: its TTL, holds, grants and session lease) with this side
 * added: two connections on the loop (etcd_aconn.h) where the blocking
 * client has two (its own, counted as round trips, and its keep-alive
 * thread's), a timer for the operation under way (the wait budget, a
 * pause, an outcome delivered on the next turn) and the keep-alive as a
 * timer on the loop instead of a thread: the same renewal (a keepalive
 * call every ttl/3, a failed one sent again every 50 ms, over the next
 * member, while the lease may still run), counted as the watchdog counts.
 * A paused group's process sends none, so its leases run out as one
 * process's would.
 *
 * A session (etcd-mutex, etcd-lock-api) is the blocking one's: granted at
 * the first acquire (and anew once lost), kept alive by the timer, given
 * back at close. Close cannot wait on the loop for one client's revoke at
 * a time, so the first close of a group's loop sends the revokes of every
 * session client of that loop at once and runs the loop until they are
 * answered or ETCD_ASYNC_CLOSE_NS has passed; the closes after it only
 * free. A revoke not answered by then (etcd down, slow) is abandoned: that
 * lease, no longer kept alive, runs out after its TTL and takes its keys
 * with it, as a killed blocking client's does; no acquire is under way any
 * more, so nothing waits on it but other runs' waiters, which etcd wakes
 * when it expires.
 */
#ifndef LOCKLAB_ETCD_ASYNC_H
#define LOCKLAB_ETCD_ASYNC_H

#include "etcd_aconn.h"
#include "etcd_common.h"
#include "evloop.h"

struct etcd_async {
    struct lock_client *c;
    struct evloop *L;
    struct etcd_aconn *ec;   /* the client's requests (round trips) */
    struct etcd_aconn *kc;   /* the keep-alive's; NULL when the design keeps none */
    /* the keep-alive */
    struct ev_timer ka_timer;
    int64_t ka_id;           /* the lease renewed */
    bool ka_armed, ka_retry;
    uint64_t ka_gen, ka_gen_sent; /* arms and disarms; the one a renewal was sent for */
    int64_t ka_give_up;      /* a failing renewal is given up at this time */
    /* the operation under way */
    struct ev_timer timer;
    int step;                /* the design's own state */
    const char *key;
    int64_t deadline;        /* end of the wait budget */
    int64_t lease, granted;  /* etcd-lease: the lease asked for this acquire, when */
    int64_t rev;             /* the revision a wait watches from */
    bool canceled;           /* etcd canceled the watch */
    char ekey[ETCD_KEY_MAX + 32];
    char value[64];
    char pfx[ETCD_KEY_MAX + 16];  /* etcd-mutex: the lock's prefix */
    char other[ETCD_KEY_MAX + 32]; /* etcd-mutex: the key waited for */
    int64_t my_rev;          /* etcd-mutex: our key's create revision */
    void (*then)(struct lock_client *c, int64_t lease); /* after a session step */
    /* the session clients of this process, for close */
    struct etcd_async *next, *prev;
    bool listed, revoked;
    int outcome;             /* what the operation ends with, once a last request answered */
    struct lab_err err;
    lock_opened_fn opened;
    lock_acquired_fn acquired;
    lock_released_fn released;
    void *arg;
};

/* lock_async_ops.open: a client with its connections on loop (keepalive:
 * the keep-alive's too), the step timer firing on_timer; opened is called
 * on the loop's next turn (there is no handshake: the first request
 * connects). 0, or -1 with err. */
int etcd_async_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                    bool keepalive, void (*on_timer)(struct ev_timer *t), lock_opened_fn opened,
                    void *arg, struct lab_err *err);
/* lock_async_ops.close: gives the session back (see above), stops
 * everything, frees c. */
void etcd_async_close(struct lock_client *c);
/* The client of the step timer t. */
struct lock_client *etcd_async_of(struct ev_timer *t);
/* Deliver opened; true when the timer was the open's. */
bool etcd_async_opening(struct lock_client *c);

/* How long the first close of a group's loop waits for the sessions'
 * revokes. */
#define ETCD_ASYNC_CLOSE_NS (1000 * 1000000LL)

/* The session's lease as etcd_session gives it (granted and kept alive
 * anew when there is none or it was lost): then(c, id) from the loop, or
 * then(c, 0) with the error in c->as->err. A session still held calls
 * then at once. */
void etcd_async_session(struct lock_client *c,
                        void (*then)(struct lock_client *c, int64_t lease));
/* etcd_session_drop on the loop: the keep-alive stops, the lease is
 * revoked (best effort), the session is lost; then then(c, 0). */
void etcd_async_session_drop(struct lock_client *c,
                             void (*then)(struct lock_client *c, int64_t lease));
/* An acquire failed with err: etcd_session_failed, then LOCK_ERROR. */
void etcd_async_session_error(struct lock_client *c, const struct lab_err *err);

/* Renew lease id every ttl/3 from now; stop renewing. */
void etcd_async_ka_arm(struct lock_client *c, int64_t id);
void etcd_async_ka_disarm(struct lock_client *c);

/* An acquire begins: its key (valid until it ends), whom to tell, and its
 * deadline (now + wait_ns). */
void etcd_async_begin(struct lock_client *c, const char *key, int64_t wait_ns,
                      lock_acquired_fn done, void *arg);
/* A release that could not be sent (err): drop the session (its keys would
 * block everyone until its TTL), then RELEASE_ERROR. */
void etcd_async_release_failed(struct lock_client *c, const struct lab_err *err);
/* A watch its member cut: the next member, after a 20 ms pause (the step
 * timer; the design set the step it resumes at). */
void etcd_async_pause_next(struct lock_client *c);

/* End the acquire or the release under way (callbacks cleared first, so
 * the callee may start the next). */
void etcd_async_acquired(struct lock_client *c, enum lock_status st);
void etcd_async_released(struct lock_client *c, enum release_status rs);

#endif
