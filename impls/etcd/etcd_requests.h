/*
 * etcd_requests.h - what the etcd designs send and how they read the
 * answers (etcd_requests.c): the gateway's paths, the request bodies as
 * jansson values, and the readers of the answers. Pure data, no I/O: the
 * state machine (etcd_machine.c) builds every request with these, and
 * tests/test_etcd_machine.c reads them back.
 */
#ifndef LOCKLAB_ETCD_REQUESTS_H
#define LOCKLAB_ETCD_REQUESTS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "etcd_json.h"
#include "lab.h"

#define ETCD_KEY_MAX 256
#define ETCD_EKEY_MAX (ETCD_KEY_MAX + 32) /* an etcd key: the prefix, the key, a lease */

/* The gateway's calls the designs send. */
#define ETCD_TXN "/v3/kv/txn"
#define ETCD_RANGE "/v3/kv/range"
#define ETCD_DELETE "/v3/kv/deleterange"
#define ETCD_GRANT "/v3/lease/grant"
#define ETCD_REVOKE "/v3/lease/revoke"
#define ETCD_KEEPALIVE "/v3/lease/keepalive"
#define ETCD_WATCH "/v3/watch"
#define ETCD_LOCK "/v3/lock/lock"
#define ETCD_UNLOCK "/v3/lock/unlock"

/* Leases: a grant of ttl_s seconds; {ID} for a revoke or a keep-alive. */
json_t *etcd_req_grant(int64_t ttl_s);
json_t *etcd_req_lease_id(int64_t id);
/* {key}: a range of one key, its deletion, an Unlock. */
json_t *etcd_req_key(const char *key);
/* A watch of key's deletions from rev + 1. */
json_t *etcd_req_watch_delete(const char *key, int64_t rev);

/* etcd-lease: put value with lease if ekey's create revision is 0, else
 * read it; the release: delete ekey only if it still holds value. */
json_t *etcd_req_lease_try(const char *ekey, const char *value, int64_t lease);
json_t *etcd_req_lease_release(const char *ekey, const char *value);

/* etcd-mutex: put mine with lease if it does not exist, else read it;
 * either way read the first key under pfx by create revision (the
 * holder). The range of the last key under pfx created before my_rev. */
json_t *etcd_req_mutex_enter(const char *pfx, const char *mine, int64_t lease);
json_t *etcd_req_mutex_lower(const char *pfx, int64_t my_rev);

/* etcd-lock-api: the Lock call {name: "locklab/<key>", lease}. */
json_t *etcd_req_lock(const char *key, int64_t lease);

/* The first kv of a range answer (a txn's response_range or a range's
 * own), NULL when there is none. */
const json_t *etcd_first_kv(const json_t *range);
/* The enter answer: 1 ours holds, 0 another does; *my_rev our key's
 * create revision. */
int etcd_ans_mutex_enter(const json_t *resp, int64_t *my_rev);
/* The lower range: 1 a key is left (its name in last, *rev the revision
 * read), 0 none. */
int etcd_ans_mutex_lower(const json_t *resp, char last[ETCD_EKEY_MAX], int64_t *rev);
/* A watch message: 1 a deletion, 0 read on, -1 with err when etcd
 * canceled the watch (*canceled set). */
int etcd_ans_watch(const json_t *msg, bool *canceled, struct lab_err *err);
/* The Lock answer: the owner key into owner; 1, or -1 with err. */
int etcd_ans_lock(const json_t *msg, char owner[ETCD_EKEY_MAX], struct lab_err *err);

#endif
