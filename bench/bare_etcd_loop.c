/*
 * bare_etcd_loop.c - the yardstick for locklab's overhead on etcd.
 *
 * The smallest honest program doing what `etcd-lease` does per
 * uncontended cycle, over etcd's v3 JSON gateway with one kept-alive
 * libcurl handle: POST /v3/lease/grant, POST /v3/kv/txn creating the key
 * with that lease if its create revision is 0, POST /v3/kv/txn deleting
 * it if it still holds our value; for a fixed time. It links nothing of
 * locklab's harness (its JSON is fixed text, the key and value base64
 * constants). `locklab bench overhead --backend etcd` runs it beside
 * locklab and prints the ratio of the two cycle rates.
 *
 *   usage: locklab-bare-etcd HOST:PORT[,...] SECONDS (the first endpoint)
 *   prints: cycles=N elapsed_ns=E
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEY "bG9ja2xhYi9iYXJl"       /* base64 "locklab/bare" */
#define VALUE "YmFyZS1sb29wLXRva2Vu" /* base64 "bare-loop-token" */

struct answer {
    char text[4096];
    size_t len;
};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

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

int main(int argc, char **argv)
{
    char host[64], base[128], body[512];
    int port;
    if (argc != 3 || sscanf(argv[1], "%63[^:]:%d", host, &port) != 2) {
        fprintf(stderr, "usage: %s HOST:PORT SECONDS\n", argv[0]);
        return 2;
    }
    double seconds = atof(argv[2]);
    snprintf(base, sizeof base, "http://%s:%d", host, port);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    struct answer a;
    if (!h || !hdr)
        return 3;
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);

    long long cycles = 0, start = now_ns(), end = start + (long long)(seconds * 1e9), t = start;
    while (t < end) {
        if (post(h, base, "/v3/lease/grant", "{\"TTL\":10}", &a) != 0) {
            fprintf(stderr, "bare loop: no lease: %s\n", a.text);
            return 3;
        }
        const char *id = strstr(a.text, "\"ID\":\"");
        if (!id) {
            fprintf(stderr, "bare loop: no lease id: %s\n", a.text);
            return 1;
        }
        long long lease = atoll(id + 6);
        snprintf(body, sizeof body,
                 "{\"compare\":[{\"key\":\"" KEY "\",\"target\":\"CREATE\",\"create_revision\":0}],"
                 "\"success\":[{\"request_put\":{\"key\":\"" KEY "\",\"value\":\"" VALUE
                 "\",\"lease\":%lld}}],\"failure\":[{\"request_range\":{\"key\":\"" KEY "\"}}]}",
                 lease);
        if (post(h, base, "/v3/kv/txn", body, &a) != 0 || !strstr(a.text, "\"succeeded\":true")) {
            fprintf(stderr, "bare loop: the key was not created: %s\n", a.text);
            return 1;
        }
        if (post(h, base, "/v3/kv/txn",
                 "{\"compare\":[{\"key\":\"" KEY "\",\"target\":\"VALUE\",\"value\":\"" VALUE
                 "\"}],\"success\":[{\"request_delete_range\":{\"key\":\"" KEY "\"}}]}",
                 &a) != 0 || !strstr(a.text, "\"succeeded\":true")) {
            fprintf(stderr, "bare loop: release did not delete the key: %s\n", a.text);
            return 1;
        }
        cycles++;
        t = now_ns();
    }
    printf("cycles=%lld elapsed_ns=%lld\n", cycles, t - start);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return 0;
}
