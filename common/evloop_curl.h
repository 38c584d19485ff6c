/*
 * evloop_curl.h - libcurl transfers on the lab's event loop (evloop.h),
 * through libcurl's multi interface with its socket API: libcurl says
 * which sockets to watch (CURLMOPT_SOCKETFUNCTION) and when to wake it
 * (CURLMOPT_TIMERFUNCTION), the loop tells it what became ready
 * (curl_multi_socket_action), and finished transfers are handed back to
 * their owners. One multi handle serves a whole loop (a client group), so
 * its connection cache is shared by the group's transfers, as one process
 * keeps one pool of kept-alive connections.
 */
#ifndef LOCKLAB_EVLOOP_CURL_H
#define LOCKLAB_EVLOOP_CURL_H

#include <stdbool.h>

#include <curl/curl.h>

#include "evloop.h"

struct evloop_curl;

/* One transfer's owner: done is called once the transfer ended (rc its
 * result), on the loop, never from inside evloop_curl_start, and not after
 * evloop_curl_stop. Embed it where the easy handle lives, and set it up
 * once with evloop_curl_xfer_init.
 *
 * The multi handle's sockets and timer are nobody's (evloop.h's owners):
 * a group's clients share them. A transfer is the owner's that was current
 * when it started, and done runs as that owner's: while the owner is held
 * (a paused client), a transfer that ends keeps its result until the
 * owner is released, as a stopped process's kernel keeps an answer. */
struct evloop_curl_xfer {
    CURL *easy;
    bool running;
    void (*done)(struct evloop_curl_xfer *x, CURLcode rc);
    struct ev_owner *owner; /* current at evloop_curl_start */
    struct ev_timer later;  /* hands an ended transfer to its held owner */
    CURLcode rc;
};

void evloop_curl_xfer_init(struct evloop_curl_xfer *x,
                           void (*done)(struct evloop_curl_xfer *x, CURLcode rc));

/* The multi handle of loop L, made at the first call and shared by every
 * later one (counted); NULL with err filled. */
struct evloop_curl *evloop_curl_attach(struct evloop *L, struct lab_err *err);
/* Give one reference back; the last frees the multi handle (no transfer
 * may still run). */
void evloop_curl_detach(struct evloop_curl *m);

/* Start x->easy (set up by the caller). 0, or -1 when libcurl refused it
 * (err filled; done will not be called). */
int evloop_curl_start(struct evloop_curl *m, struct evloop_curl_xfer *x, struct lab_err *err);
/* Abandon a running transfer (its connection closes); done is not called. */
void evloop_curl_stop(struct evloop_curl *m, struct evloop_curl_xfer *x);

#endif
