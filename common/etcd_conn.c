/*
 * etcd_conn.c - etcd's v3 JSON gateway over libcurl (see etcd_conn.h).
 *
 * Plain calls go through one reused easy handle (one kept-alive HTTP
 * connection per member, as a gRPC client keeps one channel); streams get
 * an easy handle of their own driven by a multi handle in slices of 20 ms,
 * so a caller waiting on a watch still sees its deadline and the run's
 * stop flag. A member that refuses or does not answer in time is left for
 * the next endpoint of the list, round the list once per call.
 */
#include "etcd_conn.h"

#include "etcd_http.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#define ETCD_MAX_ENDPOINTS 9

struct etcd_conn {
    char url[ETCD_MAX_ENDPOINTS][96]; /* http://host:port */
    int n, cur;                       /* endpoints, the one in use */
    int timeout_ms;
    CURL *easy;                       /* plain calls */
    CURL *stream;                     /* streams */
    CURLM *multi;
    struct curl_slist *headers;
    int64_t *count;                   /* requests sent, NULL: not counted */
    struct etcd_buf in;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_start(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct etcd_conn *etcd_conn_new(const char *endpoints, int timeout_ms, struct lab_err *err)
{
    pthread_once(&curl_once, curl_start);
    struct etcd_conn *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    c->timeout_ms = timeout_ms;
    c->n = etcd_http_endpoints(endpoints, c->url, ETCD_MAX_ENDPOINTS, err);
    if (c->n < 0) {
        free(c);
        return NULL;
    }
    c->headers = etcd_http_headers();
    c->easy = etcd_http_easy(c->headers, timeout_ms);
    c->stream = etcd_http_easy(c->headers, timeout_ms);
    c->multi = curl_multi_init();
    if (!c->headers || !c->easy || !c->stream || !c->multi) {
        lab_err_set(err, ENOMEM, "cannot set up libcurl");
        etcd_conn_free(c);
        return NULL;
    }
    curl_easy_setopt(c->easy, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, etcd_buf_collect);
    curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, &c->in);
    return c;
}

void etcd_conn_free(struct etcd_conn *c)
{
    if (!c)
        return;
    if (c->easy)
        curl_easy_cleanup(c->easy);
    if (c->stream)
        curl_easy_cleanup(c->stream);
    if (c->multi)
        curl_multi_cleanup(c->multi);
    curl_slist_free_all(c->headers);
    free(c->in.data);
    free(c);
}

void etcd_conn_next(struct etcd_conn *c)
{
    c->cur = (c->cur + 1) % c->n;
}

void etcd_conn_count(struct etcd_conn *c, int64_t *counter)
{
    c->count = counter;
}

/* Set h up to POST body to path on the current endpoint. */
static void post_to(struct etcd_conn *c, CURL *h, const char *path, const char *body)
{
    etcd_http_post(h, c->url[c->cur], path, body);
    if (c->count)
        (*c->count)++;
}

int etcd_call(struct etcd_conn *c, const char *path, json_t *req, json_t **resp,
              struct lab_err *err)
{
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    *resp = NULL;
    if (!body) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    CURLcode rc = CURLE_OK;
    for (int tries = 0; tries < c->n; tries++) {
        c->in.len = 0;
        post_to(c, c->easy, path, body);
        rc = curl_easy_perform(c->easy);
        if (rc == CURLE_OK)
            break;
        c->cur = (c->cur + 1) % c->n; /* not answering: the next member */
    }
    free(body);
    if (rc != CURLE_OK) {
        lab_err_set(err, EIO, "etcd %s: %s", path, curl_easy_strerror(rc));
        return -1;
    }
    return etcd_answer(c->easy, path, &c->in, resp, err);
}

/* One attempt on the current endpoint: 1, 0 or -1 as etcd_stream; 2 when
 * it could not connect (try the next one). */
static int stream_once(struct etcd_conn *c, const char *path, const char *body,
                       struct etcd_lines *s, int64_t deadline, const volatile int *stop)
{
    CURL *h = c->stream;
    int running = 1, out = 0;
    post_to(c, h, path, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, etcd_lines_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
    curl_multi_add_handle(c->multi, h);
    for (;;) {
        curl_multi_perform(c->multi, &running);
        if (!running) {
            int left;
            CURLMsg *m = curl_multi_info_read(c->multi, &left);
            CURLcode rc = m && m->msg == CURLMSG_DONE ? m->data.result : CURLE_OK;
            out = etcd_lines_end(s, h, rc, path);
            break;
        }
        if ((stop && *stop) || lab_now_ns() >= deadline)
            break; /* out = 0: abandoned, the connection closes */
        curl_multi_poll(c->multi, NULL, 0, 20, NULL);
    }
    curl_multi_remove_handle(c->multi, h);
    return out;
}

int etcd_stream(struct etcd_conn *c, const char *path, json_t *req, etcd_msg_fn fn, void *arg,
                int64_t deadline, const volatile int *stop, struct lab_err *err)
{
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    if (!body) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    int out = 2;
    for (int tries = 0; out == 2 && tries < c->n; tries++) {
        struct etcd_lines s = {.fn = fn, .arg = arg, .err = err};
        out = stream_once(c, path, body, &s, deadline, stop);
        free(s.in.data);
        if (out == 2)
            c->cur = (c->cur + 1) % c->n;
    }
    free(body);
    if (out == 2) {
        lab_err_set(err, EIO, "etcd %s: no member answered", path);
        out = -1;
    }
    return out;
}

int etcd_get(const char *host, int port, const char *path, int timeout_ms, char *out,
             size_t outlen)
{
    pthread_once(&curl_once, curl_start);
    CURL *h = curl_easy_init();
    struct etcd_buf b = {0};
    char url[160];
    long status = 0;
    if (!h)
        return -1;
    snprintf(url, sizeof url, "http://%s:%d%s", host, port, path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, etcd_buf_collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    if (outlen)
        snprintf(out, outlen, "%s", b.data ? b.data : "");
    free(b.data);
    return rc == CURLE_OK && status == 200 ? 0 : -1;
}

/* ---- etcd_json.h: the gateway's JSON, no transport ---- */

static const char b64_chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

json_t *etcd_b64(const char *s, size_t len)
{
    char out[1024];
    size_t o = 0;
    const unsigned char *u = (const unsigned char *)s;
    if ((len + 2) / 3 * 4 >= sizeof out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)u[i] << 16 | (i + 1 < len ? (unsigned)u[i + 1] << 8 : 0) |
                     (i + 2 < len ? u[i + 2] : 0);
        out[o++] = b64_chars[v >> 18 & 63];
        out[o++] = b64_chars[v >> 12 & 63];
        out[o++] = i + 1 < len ? b64_chars[v >> 6 & 63] : '=';
        out[o++] = i + 2 < len ? b64_chars[v & 63] : '=';
    }
    out[o] = '\0';
    return json_string(out);
}

json_t *etcd_b64s(const char *s)
{
    return etcd_b64(s, strlen(s));
}

int etcd_unb64(const json_t *v, char *out, size_t outlen)
{
    const char *s = json_string_value(v);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    if (!s || !outlen)
        return -1;
    for (; *s && *s != '='; s++) {
        const char *p = strchr(b64_chars, *s);
        if (!p)
            return -1;
        acc = acc << 6 | (unsigned)(p - b64_chars);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o + 1 >= outlen)
                return -1;
            out[o++] = (char)(acc >> bits & 0xff);
        }
    }
    out[o] = '\0';
    return (int)o;
}

int64_t etcd_num(const json_t *obj, ...)
{
    va_list ap;
    va_start(ap, obj);
    for (const char *k; obj && (k = va_arg(ap, const char *));)
        obj = json_object_get(obj, k);
    va_end(ap);
    if (json_is_integer(obj))
        return json_integer_value(obj);
    return json_is_string(obj) ? strtoll(json_string_value(obj), NULL, 10) : 0;
}

json_t *etcd_prefix_end(const char *prefix)
{
    char end[512];
    size_t n = strlen(prefix);
    if (n == 0 || n >= sizeof end)
        return NULL;
    memcpy(end, prefix, n);
    end[n - 1]++; /* "locklab/k/" -> "locklab/k0": ASCII prefixes only */
    return etcd_b64(end, n);
}
