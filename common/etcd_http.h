/*
 * etcd_http.h - the HTTP side of etcd's v3 JSON gateway that the blocking
 * connection (etcd_conn.c) and the event loop's (etcd_aconn.c) share: an
 * easy handle set up to POST JSON, the growing buffer an answer is read
 * into, a stream's answer cut into lines (one JSON message each) handed
 * to the caller's function as they arrive, and etcd's error answer.
 */
#ifndef LOCKLAB_ETCD_HTTP_H
#define LOCKLAB_ETCD_HTTP_H

#include <stddef.h>

#include <curl/curl.h>
#include <jansson.h>

#include "etcd_conn.h"
#include "lab.h"

struct etcd_buf {
    char *data;
    size_t len, cap;
};

/* Append n bytes (kept NUL-terminated): 0, or -1 out of memory. */
int etcd_buf_add(struct etcd_buf *b, const char *p, size_t n);
/* A CURLOPT_WRITEFUNCTION appending to the struct etcd_buf of its data. */
size_t etcd_buf_collect(char *p, size_t size, size_t nmemb, void *ud);

/* The headers every POST carries (JSON, no Expect: 100-continue). */
struct curl_slist *etcd_http_headers(void);
/* An easy handle with headers, no signals, Nagle off and a connect
 * timeout; NULL out of memory. */
CURL *etcd_http_easy(struct curl_slist *headers, int connect_timeout_ms);
/* The comma-separated endpoints ("host:port,...") as base URLs
 * ("http://host:port") into url[max]: how many, or -1 with err. */
int etcd_http_endpoints(const char *endpoints, char (*url)[96], int max, struct lab_err *err);
/* Point h at base + path ("http://host:port" "/v3/kv/txn") with body. */
void etcd_http_post(CURL *h, const char *base, const char *path, const char *body);

/* etcd's error answer ({"error"/"message", "code"}) into err. */
void etcd_answer_error(const char *body, long status, struct lab_err *err);
/* The whole answer of a plain call (h done with CURLE_OK, body in in):
 * 0 and *resp, or -1 with err (not 200: etcd's error; not JSON). */
int etcd_answer(CURL *h, const char *path, const struct etcd_buf *in, json_t **resp,
                struct lab_err *err);

/* A stream's answer, line by line. */
struct etcd_lines {
    struct etcd_buf in;
    size_t used;       /* bytes of in handed to fn already */
    etcd_msg_fn fn;
    void *arg;
    int result;        /* fn's last non-zero answer (then nothing more is handed) */
    int msgs;          /* messages handed */
    struct lab_err *err;
};

/* Hand every complete line to fn (final: the rest too). */
void etcd_lines_feed(struct etcd_lines *s, int final);
/* A CURLOPT_WRITEFUNCTION for a struct etcd_lines: appends and feeds;
 * once fn answered non-zero it ends the transfer (CURLE_WRITE_ERROR:
 * the request is abandoned, its connection closed). */
size_t etcd_lines_write(char *p, size_t size, size_t nmemb, void *ud);
/* How a stream that ended (rc, h's status) came out, given what fn had:
 * 1 fn had it, 2 no member (could not connect, or no answer before the
 * connect timeout: try the next), -1 with err (failed, or ended first). */
int etcd_lines_end(struct etcd_lines *s, CURL *h, CURLcode rc, const char *path);

#endif
