/*
 * evloop_post.h - hand work from other threads to an event loop's thread.
 *
 * A client library that runs threads of its own (the ZooKeeper C client's
 * I/O and completion threads, zookeeper_mt) calls back on them; a client
 * group keeps all of its state on one thread (evloop.h). A mailbox is the
 * bridge: any thread posts a letter, an eventfd wakes the loop, and the
 * loop's thread delivers the letters in the order they were posted.
 */
#ifndef LOCKLAB_EVLOOP_POST_H
#define LOCKLAB_EVLOOP_POST_H

#include "evloop.h"

/* A letter: embed it in the caller's own struct; deliver runs on the loop's
 * thread and owns the letter from then on (frees it, or posts it again). */
struct ev_letter {
    struct ev_letter *next;
    void (*deliver)(struct ev_letter *l);
};

struct evloop_mailbox;

/* A mailbox watched by L, or NULL with err filled. */
struct evloop_mailbox *evloop_mailbox_new(struct evloop *L, struct lab_err *err);

/* Post l from any thread (the loop's own too: it is delivered on a later
 * turn of the loop, never from inside this call). */
void evloop_mailbox_post(struct evloop_mailbox *mb, struct ev_letter *l);

/* Deliver what is still posted, then stop watching and free mb. Nobody
 * may post to it any more. */
void evloop_mailbox_free(struct evloop_mailbox *mb);

#endif
