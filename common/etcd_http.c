/*
 * etcd_http.c - the HTTP pieces both etcd connections share (see
 * etcd_http.h).
 */
#include "etcd_http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int etcd_buf_add(struct etcd_buf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

size_t etcd_buf_collect(char *p, size_t size, size_t nmemb, void *ud)
{
    return etcd_buf_add(ud, p, size * nmemb) == 0 ? size * nmemb : 0;
}

struct curl_slist *etcd_http_headers(void)
{
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    struct curl_slist *more = h ? curl_slist_append(h, "Expect:") : NULL;
    if (!more)
        curl_slist_free_all(h);
    return more;
}

CURL *etcd_http_easy(struct curl_slist *headers, int connect_timeout_ms)
{
    CURL *h = curl_easy_init();
    if (!h)
        return NULL;
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    return h;
}

int etcd_http_endpoints(const char *endpoints, char (*url)[96], int max, struct lab_err *err)
{
    char list[512], host[64];
    int port, n = 0;
    snprintf(list, sizeof list, "%s", endpoints);
    for (char *save, *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (n == max || lab_parse_hostport(p, host, sizeof host, &port) != 0) {
            lab_err_set(err, EINVAL, "bad etcd endpoint list '%.100s'", endpoints);
            return -1;
        }
        snprintf(url[n++], 96, "http://%s:%d", host, port);
    }
    if (n == 0) {
        lab_err_set(err, EINVAL, "no etcd endpoint given");
        return -1;
    }
    return n;
}

void etcd_http_post(CURL *h, const char *base, const char *path, const char *body)
{
    char url[160];
    snprintf(url, sizeof url, "%s%s", base, path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
}

void etcd_answer_error(const char *body, long status, struct lab_err *err)
{
    json_t *j = json_loads(body, 0, NULL);
    const char *m = json_string_value(json_object_get(j, "message"));
    if (!m)
        m = json_string_value(json_object_get(j, "error"));
    lab_err_set(err, EIO, "etcd: %.160s (HTTP %ld)", m ? m : body, status);
    json_decref(j);
}

int etcd_answer(CURL *h, const char *path, const struct etcd_buf *in, json_t **resp,
                struct lab_err *err)
{
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    const char *text = in->data ? in->data : "";
    *resp = NULL;
    if (status != 200) {
        etcd_answer_error(text, status, err);
        return -1;
    }
    *resp = json_loads(text, 0, NULL);
    if (!*resp) {
        lab_err_set(err, EIO, "etcd %s: not JSON: %.80s", path, text);
        return -1;
    }
    return 0;
}

void etcd_lines_feed(struct etcd_lines *s, int final)
{
    while (!s->result && s->used < s->in.len) {
        char *start = s->in.data + s->used;
        char *nl = memchr(start, '\n', s->in.len - s->used);
        if (!nl && !final)
            return;
        size_t n = nl ? (size_t)(nl - start) : s->in.len - s->used;
        s->used += n + (nl != NULL);
        json_t *msg = json_loadb(start, n, 0, NULL);
        if (!msg)
            continue; /* a blank line */
        s->msgs++;
        s->result = s->fn(s->arg, msg, s->err);
        json_decref(msg);
    }
}

size_t etcd_lines_write(char *p, size_t size, size_t nmemb, void *ud)
{
    struct etcd_lines *s = ud;
    if (etcd_buf_add(&s->in, p, size * nmemb) != 0)
        return 0;
    etcd_lines_feed(s, 0);
    return s->result ? 0 : size * nmemb;
}

int etcd_lines_end(struct etcd_lines *s, CURL *h, CURLcode rc, const char *path)
{
    long status = 0;
    if (s->result)
        return s->result > 0 ? 1 : -1;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_COULDNT_CONNECT || (rc == CURLE_OPERATION_TIMEDOUT && !s->msgs))
        return 2;
    if (rc != CURLE_OK) {
        lab_err_set(s->err, EIO, "etcd %s: %s", path, curl_easy_strerror(rc));
        return -1;
    }
    if (status != 200) {
        etcd_answer_error(s->in.data ? s->in.data : "", status, s->err);
        return -1;
    }
    etcd_lines_feed(s, 1);
    if (s->result)
        return s->result > 0 ? 1 : -1;
    lab_err_set(s->err, EIO, "etcd %s: the stream ended", path);
    return -1;
}
