/*
 * lock_caller.c - handing a group operation's outcome to whoever waits
 * for it (see lock_caller.h).
 */
#include "lock_caller.h"

#include <stddef.h>

static void hand(struct lock_caller *k)
{
    if (k->opened)
        lock_deliver_opened(&k->opened, k->arg, k->open_rc, &k->err);
    else if (k->acquired)
        lock_deliver_acquired(&k->acquired, k->arg, k->status, &k->err);
    else if (k->released)
        lock_deliver_released(&k->released, k->arg, k->release, &k->err);
}

static void on_later(struct ev_timer *t)
{
    hand((struct lock_caller *)((char *)t - offsetof(struct lock_caller, later)));
}

void lock_caller_init(struct lock_caller *k, struct evloop *L)
{
    *k = (struct lock_caller){.L = L};
    evloop_timer_init(&k->later, on_later);
}

void lock_caller_begin(struct lock_caller *k, lock_opened_fn opened, lock_acquired_fn acquired,
                       lock_released_fn released, void *arg)
{
    k->opened = opened;
    k->acquired = acquired;
    k->released = released;
    k->arg = arg;
    k->in_hook = true;
}

void lock_caller_done(struct lock_caller *k, int open_rc, enum lock_status st,
                      enum release_status rs, const struct lab_err *err)
{
    k->open_rc = open_rc;
    k->status = st;
    k->release = rs;
    k->err = *err;
    if (k->in_hook)
        evloop_timer_at(k->L, &k->later, 0);
    else
        hand(k);
}

void lock_caller_close(struct lock_caller *k)
{
    k->opened = NULL;
    k->acquired = NULL;
    k->released = NULL;
    evloop_timer_cancel(k->L, &k->later);
}
