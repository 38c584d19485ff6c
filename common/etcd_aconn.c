/*
 * etcd_aconn.c - etcd's JSON gateway on the event loop (see etcd_aconn.h).
 *
 * A connection is one easy handle, reused request after request; the
 * group's multi handle keeps the kept-alive HTTP connections, so a
 * group's clients share one pool of them (no more than their requests
 * under way, and the streams: a watch or a Lock call holds a connection
 * until it ends, and an abandoned one closes it, as the blocking client's
 * does). A request that could not be started fails from a timer at 0, so
 * its callback too comes from the loop.
 */
#include "etcd_aconn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_http.h"
#include "evloop_curl.h"

#define ETCD_ACONN_ENDPOINTS 9

struct etcd_aconn {
    struct evloop *L;
    struct evloop_curl *m;
    struct evloop_curl_xfer x;
    struct curl_slist *headers;
    char url[ETCD_ACONN_ENDPOINTS][96];
    int n, cur;                /* endpoints, the one in use */
    int timeout_ms;
    int64_t *count;            /* requests sent, NULL: not counted */
    /* the request under way */
    bool busy, stream;
    char path[48];
    char *body;
    int tries;                 /* members tried for it */
    struct etcd_buf in;        /* a call's answer */
    struct etcd_lines lines;   /* a stream's */
    struct lab_err err;
    etcd_reply_fn reply;
    etcd_stream_end_fn end;
    void *arg;
    struct ev_timer later;     /* delivers a request that could not start */
};

static void deliver(struct etcd_aconn *a, json_t *resp, int r)
{
    bool stream = a->stream;
    etcd_reply_fn reply = a->reply;
    etcd_stream_end_fn end = a->end;
    void *arg = a->arg;
    a->busy = false;
    free(a->body);
    a->body = NULL;
    if (stream)
        end(arg, r, &a->err);
    else
        reply(arg, resp, &a->err);
}

static void on_later(struct ev_timer *t)
{
    struct etcd_aconn *a = (struct etcd_aconn *)((char *)t - offsetof(struct etcd_aconn, later));
    deliver(a, NULL, -1);
}

/* Send the request under way to the current member. */
static void send_now(struct etcd_aconn *a)
{
    CURL *h = a->x.easy;
    etcd_http_post(h, a->url[a->cur], a->path, a->body);
    if (a->stream) {
        free(a->lines.in.data);
        a->lines = (struct etcd_lines){.fn = a->lines.fn, .arg = a->lines.arg, .err = &a->err};
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 0L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, etcd_lines_write);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &a->lines);
    } else {
        a->in.len = 0;
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)a->timeout_ms);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, etcd_buf_collect);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &a->in);
    }
    if (a->count)
        (*a->count)++;
    if (evloop_curl_start(a->m, &a->x, &a->err) != 0)
        evloop_timer_at(a->L, &a->later, 0);
}

static void on_done(struct evloop_curl_xfer *x, CURLcode rc)
{
    struct etcd_aconn *a = (struct etcd_aconn *)((char *)x - offsetof(struct etcd_aconn, x));
    if (a->stream) {
        int r = etcd_lines_end(&a->lines, x->easy, rc, a->path);
        if (r == 2 && ++a->tries < a->n) {
            a->cur = (a->cur + 1) % a->n; /* no member there: the next one */
            send_now(a);
            return;
        }
        if (r == 2)
            lab_err_set(&a->err, EIO, "etcd %s: no member answered", a->path);
        deliver(a, NULL, r == 1 ? 1 : -1);
        return;
    }
    if (rc != CURLE_OK) {
        a->cur = (a->cur + 1) % a->n; /* not answering: the next member */
        if (++a->tries < a->n) {
            send_now(a);
            return;
        }
        lab_err_set(&a->err, EIO, "etcd %s: %s", a->path, curl_easy_strerror(rc));
        deliver(a, NULL, -1);
        return;
    }
    json_t *resp;
    if (etcd_answer(x->easy, a->path, &a->in, &resp, &a->err) != 0) {
        deliver(a, NULL, -1);
        return;
    }
    deliver(a, resp, 0);
    json_decref(resp);
}

struct etcd_aconn *etcd_aconn_new(struct evloop *L, const char *endpoints, int timeout_ms,
                                  struct lab_err *err)
{
    struct etcd_aconn *a = calloc(1, sizeof *a);
    if (!a) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    a->L = L;
    a->timeout_ms = timeout_ms;
    evloop_timer_init(&a->later, on_later);
    evloop_curl_xfer_init(&a->x, on_done);
    a->n = etcd_http_endpoints(endpoints, a->url, ETCD_ACONN_ENDPOINTS, err);
    if (a->n < 0) {
        free(a);
        return NULL;
    }
    a->m = evloop_curl_attach(L, err);
    if (!a->m) {
        free(a);
        return NULL;
    }
    a->headers = etcd_http_headers();
    a->x.easy = a->headers ? etcd_http_easy(a->headers, timeout_ms) : NULL;
    if (!a->x.easy) {
        lab_err_set(err, ENOMEM, "cannot set up libcurl");
        etcd_aconn_free(a);
        return NULL;
    }
    return a;
}

void etcd_aconn_free(struct etcd_aconn *a)
{
    if (!a)
        return;
    etcd_aconn_cancel(a);
    if (a->x.easy)
        curl_easy_cleanup(a->x.easy);
    curl_slist_free_all(a->headers);
    evloop_curl_detach(a->m);
    free(a->in.data);
    free(a->lines.in.data);
    free(a);
}

void etcd_aconn_count(struct etcd_aconn *a, int64_t *counter)
{
    a->count = counter;
}

void etcd_aconn_next(struct etcd_aconn *a)
{
    a->cur = (a->cur + 1) % a->n;
}

bool etcd_aconn_busy(const struct etcd_aconn *a)
{
    return a->busy;
}

/* Start req on path: stream or call. */
static void start(struct etcd_aconn *a, const char *path, json_t *req)
{
    a->busy = true;
    a->tries = 0;
    snprintf(a->path, sizeof a->path, "%s", path);
    a->body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    if (!a->body) {
        lab_err_set(&a->err, ENOMEM, "out of memory");
        evloop_timer_at(a->L, &a->later, 0);
        return;
    }
    send_now(a);
}

void etcd_aconn_call(struct etcd_aconn *a, const char *path, json_t *req, etcd_reply_fn done,
                     void *arg)
{
    a->stream = false;
    a->reply = done;
    a->arg = arg;
    start(a, path, req);
}

void etcd_aconn_stream(struct etcd_aconn *a, const char *path, json_t *req, etcd_msg_fn fn,
                       etcd_stream_end_fn end, void *arg)
{
    a->stream = true;
    a->end = end;
    a->arg = arg;
    a->lines.fn = fn;
    a->lines.arg = arg;
    start(a, path, req);
}

void etcd_aconn_cancel(struct etcd_aconn *a)
{
    evloop_timer_cancel(a->L, &a->later);
    evloop_curl_stop(a->m, &a->x);
    a->busy = false;
    free(a->body);
    a->body = NULL;
}
