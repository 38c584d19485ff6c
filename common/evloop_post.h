/*
 * evloop_post.h - hand work to an event loop's next turn.
 *
 * A reply a ZooKeeper session reads (impls/zookeeper/zk_wire.c) must not run the
 * recipe's next step from inside that read: the step may send, close or
 * reopen the very session being read. A mailbox holds such work as
 * letters, in the order they were posted, and the loop delivers them just
 * before it next waits (evloop_defer), after the callback that posted them
 * has returned. Everything runs on the loop's one thread: the ZooKeeper C
 * client's own threads, which once posted here, are no longer used in a
 * group.
 */
#ifndef LOCKLAB_EVLOOP_POST_H
#define LOCKLAB_EVLOOP_POST_H

#include "evloop.h"

/* A letter: embed it in the caller's own struct; deliver runs on the loop's
 * turn and owns the letter from then on (frees it, or posts it again). */
struct ev_letter {
    struct ev_letter *next;
    void (*deliver)(struct ev_letter *l);
};

struct evloop_mailbox;

/* A mailbox of L, or NULL with err filled. */
struct evloop_mailbox *evloop_mailbox_new(struct evloop *L, struct lab_err *err);

/* Post l, from the loop's thread: it is delivered before the loop next
 * waits, never from inside this call. */
void evloop_mailbox_post(struct evloop_mailbox *mb, struct ev_letter *l);

/* Deliver what is still posted, then free mb. Nobody may post to it any
 * more. */
void evloop_mailbox_free(struct evloop_mailbox *mb);

#endif
