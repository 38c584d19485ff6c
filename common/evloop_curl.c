/*
 * evloop_curl.c - libcurl's multi socket API on evloop (see evloop_curl.h).
 *
 * Each socket libcurl wants watched gets an ev_io of its own, attached to
 * the socket with curl_multi_assign and freed when libcurl says REMOVE;
 * libcurl's one timeout is one ev_timer. Readiness and the timer both go
 * to curl_multi_socket_action, after which the finished transfers are
 * taken off the multi handle and handed to their owners: outside every
 * libcurl callback, so an owner may start its next transfer at once.
 * libcurl asks for its first timeout (0) while a transfer is added, and
 * that timer fires on the loop's next turn, so nothing starts inside
 * evloop_curl_start. The sockets and the timer are armed as nobody's, so
 * that holding one client of a group never holds the others' transfers.
 */
#include "evloop_curl.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct evloop_curl {
    struct evloop *L;
    CURLM *multi;
    struct ev_timer timer; /* libcurl's timeout */
    int refs;
    struct curl_sock *socks;  /* the sockets watched now */
    struct evloop_curl *next; /* the process's multi handles, one per loop */
};

struct curl_sock {
    struct ev_io io;
    struct evloop_curl *m;
    struct curl_sock *prev, *next;
};

static void sock_free(struct evloop_curl *m, struct curl_sock *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        m->socks = s->next;
    if (s->next)
        s->next->prev = s->prev;
    free(s);
}

static struct evloop_curl *all_multis; /* a loop's owner uses it from the loop's thread */
static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* An ended transfer to its owner (as that owner: current). */
static void hand_back(struct ev_timer *t)
{
    struct evloop_curl_xfer *x =
        (struct evloop_curl_xfer *)((char *)t - offsetof(struct evloop_curl_xfer, later));
    x->running = false;
    x->done(x, x->rc);
}

void evloop_curl_xfer_init(struct evloop_curl_xfer *x,
                           void (*done)(struct evloop_curl_xfer *x, CURLcode rc))
{
    x->done = done;
    evloop_timer_init(&x->later, hand_back);
}

/* Hand every finished transfer back to its owner. */
static void finished(struct evloop_curl *m)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(m->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode rc = msg->data.result;
        struct evloop_curl_xfer *x = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
        curl_multi_remove_handle(m->multi, easy);
        if (!x)
            continue;
        x->rc = rc;
        struct ev_owner *prev = evloop_owner_enter(m->L, x->owner);
        if (x->owner && x->owner->held)
            evloop_timer_at(m->L, &x->later, 0); /* x's owner's: fires once released */
        else
            hand_back(&x->later);
        evloop_owner_enter(m->L, prev);
    }
}

static void on_ready(struct ev_io *io, unsigned events)
{
    struct curl_sock *s = (struct curl_sock *)io;
    struct evloop_curl *m = s->m;
    int flags = (events & EV_READ ? CURL_CSELECT_IN : 0) | (events & EV_WRITE ? CURL_CSELECT_OUT : 0);
    int running;
    curl_multi_socket_action(m->multi, io->fd, flags, &running); /* may free s */
    finished(m);
}

static void on_timer(struct ev_timer *t)
{
    struct evloop_curl *m = (struct evloop_curl *)((char *)t - offsetof(struct evloop_curl, timer));
    int running;
    curl_multi_socket_action(m->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    finished(m);
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)easy;
    struct evloop_curl *m = userp;
    struct curl_sock *s = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (s) {
            evloop_io(m->L, &s->io, 0);
            curl_multi_assign(m->multi, fd, NULL);
            sock_free(m, s);
        }
        return 0;
    }
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s)
            return -1;
        s->io.fd = fd;
        s->io.ready = on_ready;
        s->m = m;
        s->next = m->socks;
        if (m->socks)
            m->socks->prev = s;
        m->socks = s;
        curl_multi_assign(m->multi, fd, s);
    }
    unsigned want = (what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0);
    struct ev_owner *prev = evloop_owner_enter(m->L, NULL); /* the group's socket */
    int rc = evloop_io(m->L, &s->io, want);
    evloop_owner_enter(m->L, prev);
    return rc == 0 ? 0 : -1;
}

static int on_timeout(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    struct evloop_curl *m = userp;
    if (timeout_ms < 0) {
        evloop_timer_cancel(m->L, &m->timer);
        return 0;
    }
    struct ev_owner *prev = evloop_owner_enter(m->L, NULL); /* the group's timer */
    int rc = evloop_timer_at(m->L, &m->timer, lab_now_ns() + (int64_t)timeout_ms * 1000000);
    evloop_owner_enter(m->L, prev);
    return rc;
}

/* One idle connection kept per owner: libcurl's own default (4 per easy
 * handle added) counts only transfers under way, which would close the
 * group's connections between their requests and open new ones. */
static void keep_connections(struct evloop_curl *m)
{
    curl_multi_setopt(m->multi, CURLMOPT_MAXCONNECTS, (long)m->refs);
}

struct evloop_curl *evloop_curl_attach(struct evloop *L, struct lab_err *err)
{
    for (struct evloop_curl *m = all_multis; m; m = m->next)
        if (m->L == L) {
            m->refs++;
            keep_connections(m);
            return m;
        }
    pthread_once(&global_once, global_init);
    struct evloop_curl *m = calloc(1, sizeof *m);
    if (!m || !(m->multi = curl_multi_init())) {
        free(m);
        lab_err_set(err, ENOMEM, "cannot set up libcurl's multi handle");
        return NULL;
    }
    m->L = L;
    m->refs = 1;
    evloop_timer_init(&m->timer, on_timer);
    curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
    curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, on_timeout);
    curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
    keep_connections(m);
    m->next = all_multis;
    all_multis = m;
    return m;
}

void evloop_curl_detach(struct evloop_curl *m)
{
    if (!m)
        return;
    if (--m->refs > 0) {
        keep_connections(m);
        return;
    }
    for (struct evloop_curl **p = &all_multis; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    curl_multi_cleanup(m->multi); /* closes the cached connections */
    while (m->socks)              /* ... some without a REMOVE first: closed, */
        sock_free(m, m->socks);   /* so out of epoll already */
    evloop_timer_cancel(m->L, &m->timer);
    free(m);
}

int evloop_curl_start(struct evloop_curl *m, struct evloop_curl_xfer *x, struct lab_err *err)
{
    curl_easy_setopt(x->easy, CURLOPT_PRIVATE, (char *)x);
    CURLMcode rc = curl_multi_add_handle(m->multi, x->easy);
    if (rc != CURLM_OK) {
        lab_err_set(err, EIO, "libcurl: %s", curl_multi_strerror(rc));
        return -1;
    }
    x->running = true;
    x->owner = evloop_owner_current(m->L);
    return 0;
}

void evloop_curl_stop(struct evloop_curl *m, struct evloop_curl_xfer *x)
{
    if (!x->running)
        return;
    x->running = false;
    evloop_timer_cancel(m->L, &x->later); /* ended, kept for a held owner: dropped */
    curl_multi_remove_handle(m->multi, x->easy);
}
