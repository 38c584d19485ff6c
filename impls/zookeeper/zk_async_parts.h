/*
 * zk_async_parts.h - private to zk_async.c, zk_async_steps.c and
 * zk_async_letters.c, the three parts of zk-sequential and zk-ephemeral in
 * a client group (zk_async.c's comment tells the whole design): what a
 * client waits for (enum step), its state (struct zk_async), a session's
 * event context and a letter (a reply or an event on its way to the
 * state machine), and the few functions one part calls in another.
 *
 * The parts stand in layers, each calling only those below it: the hooks
 * (zk_async.c) call the state machine (zk_async_steps.c: the session, the
 * acquire and release recipes, the steps, the dispatch of letters and
 * timers), and both call the letters (zk_async_letters.c: the client's
 * lifetime, the requests and their replies' way to the loop, the outcomes).
 */
#ifndef LOCKLAB_ZK_ASYNC_PARTS_H
#define LOCKLAB_ZK_ASYNC_PARTS_H

#include "zk_common.h"

#include <stdatomic.h>

#include "evloop_post.h"
#include "zk_wire.h"

#define ZKA_CONNECT_NS (10LL * 1000000000) /* the first connect, at open (as zk_lock_open) */

/* What a client waits for. */
enum step {
    S_IDLE,
    S_OPENED,     /* open: the first session */
    S_SESSION,    /* a connected session, any (resume when it is) */
    S_RECOVER,    /* the same session connected again (resume when it is) */
    S_ROOT,       /* create ZK_ROOT (persistent) */
    S_PARENT,     /* create ZK_ROOT/<key> (persistent) */
    S_AGAIN,      /* after a failed create: the next turn of zk_enter's loop */
    S_FIND,       /* list, to find our node whose create's reply was lost */
    S_CREATE,     /* create our ephemeral-sequential node */
    S_LIST,       /* list the queue */
    S_ECREATE,    /* zk-ephemeral: create the lock node */
    S_EWATCH,     /* zk-ephemeral: exists-watch the node someone holds */
    S_WATCH,      /* read the predecessor with a watch */
    S_WAIT,       /* until any event of the session, or the deadline */
    S_QUEUE_BACK, /* after a connection loss while queued */
    S_LEAVE,      /* delete our node after a timeout or an error */
    S_DELETE,     /* release: delete our node */
    S_DEL_BACK,   /* release: after a connection loss */
    S_EXISTS      /* release: is the node still our session's? */
};

struct zk_async {
    struct lock_client *c;
    struct evloop *L;
    struct zkw *w;            /* the session (c->zh stays NULL in a group), NULL when none */
    struct evloop_mailbox *box; /* its letters, delivered on the loop's next turn */
    bool crashing;            /* closed as by a crash: no close request for its session */
    void *sess;               /* the context of w's events (struct zka_sess) */
    atomic_int refs;          /* the client's own, and one per letter on its way */
    bool closed;
    bool in_call;             /* inside a hook: an outcome waits for the loop */
    bool ephemeral;           /* zk-ephemeral (else zk-sequential) */
    struct ev_timer timer;    /* the deadline of a wait, or an outcome delivered later */
    enum step step, resume;   /* what it waits for; after S_SESSION/S_RECOVER: what next */
    int ready;                /* what the session wait found: 1 connected, 0 no, -1 gone */
    uint64_t wakes, seen;     /* events received; the count when the watch was set */
    int64_t deadline;
    /* the acquire */
    const char *key;
    char name[96];            /* our node's unique prefix in this attempt */
    char mine[ZK_PATH_MAX];   /* our node */
    bool unknown;             /* a create whose outcome we do not know, in this session */
    bool first;               /* the first turn of the enter loop */
    uint64_t gen;             /* the session our node (or this turn) belongs to */
    int last_rc;              /* the code that sent us waiting */
    bool maybe_created;       /* zk-ephemeral: the last create's outcome is unknown */
    bool nested;              /* zk-ephemeral: this turn, we hold key already */
    /* the release */
    bool retried;
    /* the outcome */
    enum lock_status st;
    enum release_status rs;
    bool due;                 /* the timer delivers the outcome */
    struct lab_err err;
    lock_opened_fn opened;
    lock_acquired_fn acquired;
    lock_released_fn released;
    void *arg;
};

/* One session's event context: which client and session its events are. */
struct zka_sess {
    struct lock_client *c;
    uint64_t gen;
};

/* A reply or an event, from the session's I/O to the state machine. */
struct zka_letter {
    struct ev_letter l;
    struct lock_client *c;
    uint64_t gen;            /* session generation it belongs to */
    enum step step;          /* the request it answers (S_IDLE: an event) */
    int type, state;         /* an event */
    int rc;                  /* a reply's code */
    int pos;                 /* S_LIST: zk_queue_position; S_FIND: 1 found */
    int64_t owner;           /* S_EXISTS, S_EWATCH: the node's ephemeralOwner */
    int64_t czxid;           /* S_ECREATE, S_EWATCH: the node's creating transaction */
    char base[96];           /* in: S_LIST our node's name, S_FIND its prefix */
    char out[ZK_PATH_MAX];   /* S_CREATE the path, S_LIST the predecessor, S_FIND the name */
};
/* (each client posts its letters to its own mailbox, zk_async.box: held
 * with the client when a fault holds it, evloop.h's owners) */

/* ---------------------------------------------------------------- zk_async_letters.c */

/* Give a delivered letter back for the next request; free every letter
 * given back (when the last client closes). */
void zka_letter_free(struct zka_letter *m);
void zka_letters_drain(void);
/* Drop one reference to c; the last frees it. */
void zka_unref(struct lock_client *c);
/* Close c's session (its nodes go with it) and start a new generation. */
void zka_session_drop(struct lock_client *c);
/* A session's events (zkw_event_fn): every watch and session event,
 * posted as a letter. */
void zka_on_event(void *ctx, int type, int state, const char *path);
/* Send the request of step s on path; its reply comes back as a letter. */
void zka_request(struct lock_client *c, enum step s, const char *path, const char *base);
/* Hand the finished operation's outcome to its callback. */
void zka_deliver_now(struct lock_client *c);
/* The acquire (or open) ends with st; the release ends with rs. */
void zka_acq_done(struct lock_client *c, enum lock_status st);
void zka_rel_done(struct lock_client *c, enum release_status rs);
/* The acquire fails with the ZooKeeper code rc of what on path. */
void zka_acq_fail(struct lock_client *c, int rc, const char *what, const char *path);

/* ---------------------------------------------------------------- zk_async_steps.c */

/* Wait until the session is connected, then go on with next. */
void zka_session_then(struct lock_client *c, enum step next, bool same);
/* The top of the acquire's loop: the deadline, then a prepared session. */
void zka_enter_turn(struct lock_client *c);
/* A letter, on the loop's thread (its ev_letter.deliver). */
void zka_deliver(struct ev_letter *l);
/* The client's timer: a deadline, or an outcome delivered from the loop. */
void zka_on_timer(struct ev_timer *t);

#endif
