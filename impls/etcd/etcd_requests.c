/*
 * etcd_requests.c - the etcd designs' requests and the readers of their
 * answers (see etcd_requests.h).
 */
#include "etcd_requests.h"

#include <errno.h>
#include <stdio.h>

json_t *etcd_req_grant(int64_t ttl_s)
{
    return json_pack("{s:I}", "TTL", (json_int_t)ttl_s);
}

json_t *etcd_req_lease_id(int64_t id)
{
    return json_pack("{s:I}", "ID", (json_int_t)id);
}

json_t *etcd_req_key(const char *key)
{
    return json_pack("{s:o}", "key", etcd_b64s(key));
}

json_t *etcd_req_watch_delete(const char *key, int64_t rev)
{
    return json_pack("{s:{s:o, s:I, s:[s]}}", "create_request", "key", etcd_b64s(key),
                     "start_revision", (json_int_t)(rev + 1), "filters", "NOPUT");
}

json_t *etcd_req_lease_try(const char *ekey, const char *value, int64_t lease)
{
    return json_pack(
        "{s:[{s:o, s:s, s:s, s:i}], s:[{s:{s:o, s:o, s:I}}], s:[{s:{s:o}}]}", "compare", "key",
        etcd_b64s(ekey), "target", "CREATE", "result", "EQUAL", "create_revision", 0, "success",
        "request_put", "key", etcd_b64s(ekey), "value", etcd_b64s(value), "lease",
        (json_int_t)lease, "failure", "request_range", "key", etcd_b64s(ekey));
}

json_t *etcd_req_lease_release(const char *ekey, const char *value)
{
    return json_pack("{s:[{s:o, s:s, s:s, s:o}], s:[{s:{s:o}}]}", "compare", "key",
                     etcd_b64s(ekey), "target", "VALUE", "result", "EQUAL", "value",
                     etcd_b64s(value), "success", "request_delete_range", "key",
                     etcd_b64s(ekey));
}

/* A range under the prefix pfx ("locklab/<key>/"): the first by create
 * revision, or (max_rev > 0) the last one created at or before max_rev. */
static json_t *range_under(const char *pfx, int64_t max_rev)
{
    json_t *r = json_pack("{s:o, s:o, s:i, s:s, s:s}", "key", etcd_b64s(pfx), "range_end",
                          etcd_prefix_end(pfx), "limit", 1, "sort_target", "CREATE",
                          "sort_order", max_rev > 0 ? "DESCEND" : "ASCEND");
    if (max_rev > 0)
        json_object_set_new(r, "max_create_revision", json_integer((json_int_t)max_rev));
    return r;
}

json_t *etcd_req_mutex_enter(const char *pfx, const char *mine, int64_t lease)
{
    return json_pack(
        "{s:[{s:o, s:s, s:s, s:i}], s:[{s:{s:o, s:s, s:I}}, {s:o}], s:[{s:{s:o}}, {s:o}]}",
        "compare", "key", etcd_b64s(mine), "target", "CREATE", "result", "EQUAL",
        "create_revision", 0, "success", "request_put", "key", etcd_b64s(mine), "value", "",
        "lease", (json_int_t)lease, "request_range", range_under(pfx, 0), "failure",
        "request_range", "key", etcd_b64s(mine), "request_range", range_under(pfx, 0));
}

json_t *etcd_req_mutex_lower(const char *pfx, int64_t my_rev)
{
    return range_under(pfx, my_rev - 1);
}

json_t *etcd_req_lock(const char *key, int64_t lease)
{
    char name[ETCD_KEY_MAX + 16];
    snprintf(name, sizeof name, ETCD_KEY_PREFIX "%s", key);
    return json_pack("{s:o, s:I}", "name", etcd_b64s(name), "lease", (json_int_t)lease);
}

const json_t *etcd_first_kv(const json_t *range)
{
    return json_array_get(json_object_get(range, "kvs"), 0);
}

int etcd_ans_mutex_enter(const json_t *resp, int64_t *my_rev)
{
    const json_t *rs = json_object_get(resp, "responses");
    if (json_is_true(json_object_get(resp, "succeeded")))
        *my_rev = etcd_num(resp, "header", "revision", NULL);
    else
        *my_rev = etcd_num(etcd_first_kv(json_object_get(json_array_get(rs, 0), "response_range")),
                           "create_revision", NULL);
    int64_t owner = etcd_num(etcd_first_kv(json_object_get(json_array_get(rs, 1),
                                                           "response_range")),
                             "create_revision", NULL);
    return owner == *my_rev;
}

int etcd_ans_mutex_lower(const json_t *resp, char last[ETCD_EKEY_MAX], int64_t *rev)
{
    const json_t *kv = etcd_first_kv(resp);
    *rev = etcd_num(resp, "header", "revision", NULL);
    return kv && etcd_unb64(json_object_get(kv, "key"), last, ETCD_EKEY_MAX) >= 0;
}

/* Created (read on), canceled (fail), or events, which with the NOPUT
 * filter are deletions. */
int etcd_ans_watch(const json_t *msg, bool *canceled, struct lab_err *err)
{
    const json_t *result = json_object_get(msg, "result");
    if (json_is_true(json_object_get(result, "canceled"))) {
        const char *why = json_string_value(json_object_get(result, "cancel_reason"));
        lab_err_set(err, EIO, "etcd watch canceled: %.100s", why ? why : "no reason given");
        *canceled = true;
        return -1;
    }
    return json_array_size(json_object_get(result, "events")) > 0;
}

int etcd_ans_lock(const json_t *msg, char owner[ETCD_EKEY_MAX], struct lab_err *err)
{
    if (etcd_unb64(json_object_get(msg, "key"), owner, ETCD_EKEY_MAX) <= 0) {
        lab_err_set(err, EIO, "etcd Lock answered no key");
        return -1;
    }
    return 1;
}
