/*
 * bare_etcd_loop.c - the yardstick for locklab's overhead on etcd.
 *
 * The smallest honest program doing what `etcd-lease` does per
 * uncontended cycle, over etcd's v3 JSON gateway with one kept-alive
 * libcurl handle: POST /v3/lease/grant, POST /v3/kv/txn creating the key
 * with that lease if its create revision is 0, POST /v3/kv/txn deleting
 * it if it still holds our value; for a fixed time. It links nothing of
 * locklab's harness (its JSON is fixed text, the value a base64
 * constant, the key encoded once). `locklab bench overhead --backend etcd` runs it beside
 * locklab and prints the ratio of the two cycle rates. With CONNECTIONS,
 * that many handles at once, a thread and a key each (bare_threads.c):
 * the store's ceiling for `locklab bench ceiling --backend etcd`.
 *
 *   usage: locklab-bare-etcd HOST:PORT[,...] SECONDS [CONNECTIONS] (the first endpoint)
 *   prints: cycles=N elapsed_ns=E
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bare_threads.h"

#define VALUE "YmFyZS1sb29wLXRva2Vu" /* base64 "bare-loop-token" */

struct answer {
    char text[4096];
    size_t len;
};

static size_t keep(char *p, size_t size, size_t nmemb, void *ud)
{
    struct answer *a = ud;
    size_t n = size * nmemb;
    if (a->len + n >= sizeof a->text)
        n = sizeof a->text - 1 - a->len;
    memcpy(a->text + a->len, p, n);
    a->len += n;
    a->text[a->len] = '\0';
    return size * nmemb;
}

/* POST body to base + path; the answer in a. 0 on HTTP 200. */
static int post(CURL *h, const char *base, const char *path, const char *body, struct answer *a)
{
    char url[256];
    long status = 0;
    snprintf(url, sizeof url, "%s%s", base, path);
    a->len = 0;
    a->text[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    if (curl_easy_perform(h) != CURLE_OK)
        return -1;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    return status == 200 ? 0 : -1;
}

/* text in base64 into out (room for 4/3 of it and more). */
static void base64(const char *text, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(text), k = 0;
    const unsigned char *p = (const unsigned char *)text;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        out[k++] = abc[v >> 18 & 63];
        out[k++] = abc[v >> 12 & 63];
        out[k++] = i + 1 < n ? abc[v >> 6 & 63] : '=';
        out[k++] = i + 2 < n ? abc[v & 63] : '=';
    }
    out[k] = '\0';
}

/* One kept-alive handle, its endpoint and its key. */
struct etcd_bare {
    CURL *h;
    struct curl_slist *hdr;
    char base[128], key[48];
    struct answer a;
};

static void *etcd_open(const char *conn, int index)
{
    char host[64];
    int port;
    if (sscanf(conn, "%63[^:]:%d", host, &port) != 2) {
        fprintf(stderr, "bare loop: '%s' is not HOST:PORT\n", conn);
        return NULL;
    }
    static int once;
    if (!once++)
        curl_global_init(CURL_GLOBAL_DEFAULT); /* before any thread starts */
    struct etcd_bare *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    snprintf(b->base, sizeof b->base, "http://%s:%d", host, port);
    char name[32];
    snprintf(name, sizeof name, index < 0 ? "locklab/bare" : "locklab/bare-%d", index);
    base64(name, b->key);
    b->h = curl_easy_init();
    b->hdr = curl_slist_append(NULL, "Content-Type: application/json");
    if (!b->h || !b->hdr) {
        fprintf(stderr, "bare loop: no curl handle\n");
        free(b);
        return NULL;
    }
    curl_easy_setopt(b->h, CURLOPT_HTTPHEADER, b->hdr);
    curl_easy_setopt(b->h, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(b->h, CURLOPT_WRITEDATA, &b->a);
    curl_easy_setopt(b->h, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(b->h, CURLOPT_NOSIGNAL, 1L);
    return b;
}

static int etcd_cycle(void *state)
{
    struct etcd_bare *b = state;
    char body[512];
    if (post(b->h, b->base, "/v3/lease/grant", "{\"TTL\":10}", &b->a) != 0) {
        fprintf(stderr, "bare loop: no lease: %s\n", b->a.text);
        return -1;
    }
    const char *id = strstr(b->a.text, "\"ID\":\"");
    if (!id) {
        fprintf(stderr, "bare loop: no lease id: %s\n", b->a.text);
        return -1;
    }
    snprintf(body, sizeof body,
             "{\"compare\":[{\"key\":\"%s\",\"target\":\"CREATE\",\"create_revision\":0}],"
             "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"" VALUE
             "\",\"lease\":%lld}}],\"failure\":[{\"request_range\":{\"key\":\"%s\"}}]}",
             b->key, b->key, atoll(id + 6), b->key);
    if (post(b->h, b->base, "/v3/kv/txn", body, &b->a) != 0 ||
        !strstr(b->a.text, "\"succeeded\":true")) {
        fprintf(stderr, "bare loop: the key was not created: %s\n", b->a.text);
        return -1;
    }
    snprintf(body, sizeof body,
             "{\"compare\":[{\"key\":\"%s\",\"target\":\"VALUE\",\"value\":\"" VALUE
             "\"}],\"success\":[{\"request_delete_range\":{\"key\":\"%s\"}}]}",
             b->key, b->key);
    if (post(b->h, b->base, "/v3/kv/txn", body, &b->a) != 0 ||
        !strstr(b->a.text, "\"succeeded\":true")) {
        fprintf(stderr, "bare loop: release did not delete the key: %s\n", b->a.text);
        return -1;
    }
    return 0;
}

static void etcd_close(void *state)
{
    struct etcd_bare *b = state;
    curl_slist_free_all(b->hdr);
    curl_easy_cleanup(b->h);
    free(b);
}

int main(int argc, char **argv)
{
    static const struct bare_loop loop = {etcd_open, etcd_cycle, etcd_close};
    return bare_threads_main(argc, argv, &loop);
}
