/*
 * etcd_conn.h - talking to etcd 3.4 from C through its v3 JSON gateway
 * (POST /v3/<service>/<call> with a JSON body, keys and values base64,
 * 64-bit numbers as strings), over libcurl, with jansson for the JSON.
 *
 * One connection knows every endpoint of a cluster ("host:port,...") and
 * sends each call to the one it used last, moving on to the next when a
 * member does not answer (refused, or no answer within the call timeout:
 * a paused member), as etcd's Go client balances over its endpoints.
 * Blocking calls (a watch, the Lock service's lock) are streams: the
 * response stays open, each line of it one JSON message, read until the
 * caller's function says it has what it waited for, a deadline passes or
 * the run stops. The designs (impls/etcd/), the etcd store
 * (harness/stores/etcd/) and the bare benchmark loop all use this one.
 */
#ifndef LOCKLAB_ETCD_CONN_H
#define LOCKLAB_ETCD_CONN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "etcd_json.h"
#include "lab.h"

struct etcd_conn;

/* A connection to the comma-separated endpoints ("host:port,..."), each
 * call given up after timeout_ms on one member. NULL with err filled. */
struct etcd_conn *etcd_conn_new(const char *endpoints, int timeout_ms, struct lab_err *err);
void etcd_conn_free(struct etcd_conn *c);

/* Send the next call to the next endpoint (after a stream was cut). */
void etcd_conn_next(struct etcd_conn *c);

/* Count every request sent in *counter (NULL: none). */
void etcd_conn_count(struct etcd_conn *c, int64_t *counter);

/* POST req (a reference taken) to path ("/v3/kv/txn") and parse the
 * answer into *resp (a new reference). 0, or -1 with err filled: no member
 * answered, or etcd answered an error (its message in err). */
int etcd_call(struct etcd_conn *c, const char *path, json_t *req, json_t **resp,
              struct lab_err *err);

/* A message of a stream: 1 have what was awaited (stop reading), 0 read
 * on, -1 failed (err filled by the function). */
typedef int (*etcd_msg_fn)(void *arg, json_t *msg, struct lab_err *err);

/* POST req (taken) to path and hand each JSON message of the response to
 * fn until it returns non-zero, deadline (CLOCK_MONOTONIC ns) passes or
 * *stop is set. 1 fn had it, 0 deadline or stop (the request is
 * abandoned: etcd cancels what it was doing for it), -1 with err filled
 * (the stream ended first, or fn failed). */
int etcd_stream(struct etcd_conn *c, const char *path, json_t *req, etcd_msg_fn fn, void *arg,
                int64_t deadline, const volatile int *stop, struct lab_err *err);

/* GET path ("/metrics", "/health") of the one endpoint host:port, the
 * body into out (cut at outlen). 0, or -1 when it did not answer 200
 * within timeout_ms. */
int etcd_get(const char *host, int port, const char *path, int timeout_ms, char *out,
             size_t outlen);

#endif
