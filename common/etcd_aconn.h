/*
 * etcd_aconn.h - etcd's v3 JSON gateway on the lab's event loop, for
 * client groups: the same calls and streams as etcd_conn.h, sent through
 * the loop's libcurl multi handle (evloop_curl.h) and answered by a
 * callback instead of a return.
 *
 * One connection does one request at a time (a client's, or its
 * keep-alive's), with etcd_conn's endpoint rule: each request goes to the
 * member used last and, when that one does not answer (refused, or no
 * answer within the call timeout), to the next, round the list once. The
 * requests are counted as etcd_conn counts them. Answers come on the loop,
 * never from inside the call that sent the request.
 */
#ifndef LOCKLAB_ETCD_ACONN_H
#define LOCKLAB_ETCD_ACONN_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "etcd_conn.h"
#include "evloop.h"

struct etcd_aconn;

/* A plain call's answer: resp (borrowed: valid during the call), or NULL
 * with err (no member answered, or etcd answered an error). */
typedef void (*etcd_reply_fn)(void *arg, json_t *resp, const struct lab_err *err);
/* A stream's end: 1 the message function had what was awaited, -1 with
 * err (the stream ended first, it failed, or no member answered). */
typedef void (*etcd_stream_end_fn)(void *arg, int r, const struct lab_err *err);

/* A connection to the comma-separated endpoints on loop L, each call
 * given up after timeout_ms on one member. NULL with err filled. */
struct etcd_aconn *etcd_aconn_new(struct evloop *L, const char *endpoints, int timeout_ms,
                                  struct lab_err *err);
/* Abandon what is under way (no callback) and free a. NULL is fine. */
void etcd_aconn_free(struct etcd_aconn *a);

/* Count every request sent in *counter (NULL: none). */
void etcd_aconn_count(struct etcd_aconn *a, int64_t *counter);
/* Send the next request to the next endpoint (after a stream was cut). */
void etcd_aconn_next(struct etcd_aconn *a);
/* A request is under way. */
bool etcd_aconn_busy(const struct etcd_aconn *a);

/* POST req (a reference taken) to path; done is called with the answer.
 * Nothing may be under way on a. */
void etcd_aconn_call(struct etcd_aconn *a, const char *path, json_t *req, etcd_reply_fn done,
                     void *arg);
/* POST req (taken) to path and hand each JSON message of the answer to fn
 * (on the loop, inside libcurl: fn must only look, never send) until it
 * answers non-zero; then end is called. The caller's deadline is its own
 * timer, and etcd_aconn_cancel abandons the stream. */
void etcd_aconn_stream(struct etcd_aconn *a, const char *path, json_t *req, etcd_msg_fn fn,
                       etcd_stream_end_fn end, void *arg);
/* Abandon the request under way (its connection closes: etcd cancels what
 * it did for it); no callback. */
void etcd_aconn_cancel(struct etcd_aconn *a);

#endif
