/*
 * evloop_post.c - a mailbox of letters delivered on an event loop's next
 * turn (see evloop_post.h): a FIFO and one deferred work item of the loop
 * (evloop_defer). The loop takes the whole list at once and delivers it,
 * so a letter may post again (delivered on the turn after). No lock and no
 * wake-up: poster and loop are one thread.
 */
#include "evloop_post.h"

#include <errno.h>
#include <stdlib.h>

struct evloop_mailbox {
    struct ev_defer run; /* queued while letters wait */
    struct evloop *L;
    struct ev_letter *head, *tail; /* posted, not yet taken */
};

static void mailbox_deliver(struct evloop_mailbox *mb)
{
    struct ev_letter *l = mb->head;
    mb->head = mb->tail = NULL;
    while (l) {
        struct ev_letter *next = l->next;
        l->deliver(l);
        l = next;
    }
}

static void on_turn(struct ev_defer *d)
{
    mailbox_deliver((struct evloop_mailbox *)d);
}

struct evloop_mailbox *evloop_mailbox_new(struct evloop *L, struct lab_err *err)
{
    struct evloop_mailbox *mb = calloc(1, sizeof *mb);
    if (!mb) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    mb->L = L;
    mb->run.run = on_turn;
    mb->run.h.owner = evloop_owner_current(L); /* its letters are the opener's */
    return mb;
}

void evloop_mailbox_post(struct evloop_mailbox *mb, struct ev_letter *l)
{
    l->next = NULL;
    if (mb->head)
        mb->tail->next = l;
    else
        mb->head = l;
    mb->tail = l;
    evloop_defer(mb->L, &mb->run);
}

void evloop_mailbox_free(struct evloop_mailbox *mb)
{
    if (!mb)
        return;
    mailbox_deliver(mb);
    evloop_defer_cancel(mb->L, &mb->run);
    free(mb);
}
