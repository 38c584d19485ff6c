/*
 * evloop_post.c - a mailbox from any thread to an event loop's thread (see
 * evloop_post.h): a mutex-guarded FIFO of letters and an eventfd the loop
 * watches. Only a post to an empty box writes the eventfd, so a burst of
 * completions costs one wake-up; the loop takes the whole list at once and
 * delivers it outside the lock, so a letter may post again.
 */
#include "evloop_post.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct evloop_mailbox {
    struct ev_io io; /* the eventfd */
    struct evloop *L;
    pthread_mutex_t mu;
    struct ev_letter *head, *tail; /* posted, not yet taken */
};

static void mailbox_deliver(struct evloop_mailbox *mb)
{
    pthread_mutex_lock(&mb->mu);
    struct ev_letter *l = mb->head;
    mb->head = mb->tail = NULL;
    pthread_mutex_unlock(&mb->mu);
    while (l) {
        struct ev_letter *next = l->next;
        l->deliver(l);
        l = next;
    }
}

static void on_ready(struct ev_io *io, unsigned events)
{
    (void)events;
    struct evloop_mailbox *mb = (struct evloop_mailbox *)io;
    uint64_t n;
    while (read(io->fd, &n, sizeof n) < 0 && errno == EINTR)
        ;
    mailbox_deliver(mb);
}

struct evloop_mailbox *evloop_mailbox_new(struct evloop *L, struct lab_err *err)
{
    struct evloop_mailbox *mb = calloc(1, sizeof *mb);
    if (!mb) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    mb->L = L;
    mb->io.ready = on_ready;
    mb->io.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (mb->io.fd < 0 || evloop_io(L, &mb->io, EV_READ) != 0) {
        lab_err_set(err, errno, "event loop mailbox: %s", strerror(errno));
        if (mb->io.fd >= 0)
            close(mb->io.fd);
        free(mb);
        return NULL;
    }
    pthread_mutex_init(&mb->mu, NULL);
    return mb;
}

void evloop_mailbox_post(struct evloop_mailbox *mb, struct ev_letter *l)
{
    l->next = NULL;
    pthread_mutex_lock(&mb->mu);
    bool was_empty = !mb->head;
    if (was_empty)
        mb->head = l;
    else
        mb->tail->next = l;
    mb->tail = l;
    if (was_empty) {
        uint64_t one = 1;
        while (write(mb->io.fd, &one, sizeof one) < 0 && errno == EINTR)
            ;
    }
    pthread_mutex_unlock(&mb->mu);
}

void evloop_mailbox_free(struct evloop_mailbox *mb)
{
    if (!mb)
        return;
    mailbox_deliver(mb);
    evloop_io(mb->L, &mb->io, 0);
    close(mb->io.fd);
    pthread_mutex_destroy(&mb->mu);
    free(mb);
}
