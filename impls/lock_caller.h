/*
 * lock_caller.h - who waits for a group driver's operation, and the one
 * rule for handing the outcome over.
 *
 * A design's group hooks (lock.h: open, acquire, release) each name a
 * callback; the driver starts the operation on its machine and, when the
 * machine is done, hands the outcome to that callback. lock.h forbids
 * calling it from inside the hook that started the operation (the caller
 * may start the next operation from the callback), so an outcome found
 * while still inside the hook waits for the loop's next turn on a zero
 * timer. Every group driver (Redis, Redisson, RedLock, ZooKeeper,
 * PostgreSQL, MariaDB, etcd) keeps one lock_caller per client.
 */
#ifndef LOCKLAB_LOCK_CALLER_H
#define LOCKLAB_LOCK_CALLER_H

#include "evloop.h"
#include "lock.h"

struct lock_caller {
    struct evloop *L;
    struct ev_timer later;       /* hands a kept outcome over from the loop */
    bool in_hook;                /* inside open/acquire/release */
    lock_opened_fn opened;       /* whoever waits (one at a time) */
    lock_acquired_fn acquired;
    lock_released_fn released;
    void *arg;
    int open_rc;                 /* the outcome, kept for later */
    enum lock_status status;
    enum release_status release;
    struct lab_err err;
};

void lock_caller_init(struct lock_caller *k, struct evloop *L);

/* A hook begins: who waits for its operation (one of the three, the
 * others NULL), and from now until lock_caller_end an outcome waits for
 * the loop. */
void lock_caller_begin(struct lock_caller *k, lock_opened_fn opened, lock_acquired_fn acquired,
                       lock_released_fn released, void *arg);
/* The hook returns. */
static inline void lock_caller_end(struct lock_caller *k)
{
    k->in_hook = false;
}

/* The operation is done: hand its outcome (the field that matches the
 * waiting callback counts) over, at once, or from the loop when still
 * inside the hook. Nothing when nobody waits. */
void lock_caller_done(struct lock_caller *k, int open_rc, enum lock_status st,
                      enum release_status rs, const struct lab_err *err);

/* Does anyone wait? */
static inline bool lock_caller_waiting(const struct lock_caller *k)
{
    return k->opened || k->acquired || k->released;
}

/* Nobody waits any more (the client closes). */
void lock_caller_close(struct lock_caller *k);

#endif
