/*
 * etcd_common.c - the client, leases, sessions, watches and holds the etcd
 * designs share (see etcd_common.h).
 */
#include "etcd_common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The keep-alive thread's renewal (watchdog.h): key is the lease id in
 * decimal. As Go's keep-alive loop, a renewal that finds no member able to
 * answer (one down, an election under way) is sent again every 50 ms, over
 * the next member, for as long as the lease may still run; only then is
 * the session given up. 1 alive, 0 gone (TTL 0: it expired, or no answer
 * for a whole TTL), -1 never (the watchdog's own retries would stop
 * renewing a session that still runs). */
static int keep_alive(void *arg, const char *key)
{
    struct lock_client *c = arg;
    struct lab_err err;
    json_t *resp;
    int64_t id = strtoll(key, NULL, 10), ttl = 0;
    int64_t give_up = lab_now_ns() + c->ttl_s * 1000000000LL;
    for (;;) {
        if (etcd_call(c->wd_conn, ETCD_KEEPALIVE, etcd_lease_id_req(id), &resp, &err) == 0) {
            ttl = etcd_num(resp, "result", "TTL", NULL);
            json_decref(resp);
            break;
        }
        if (lab_now_ns() >= give_up || (c->env->stop && *c->env->stop))
            break;
        lab_sleep_ns(50 * 1000000, c->env->stop);
    }
    if (ttl <= 0 && id == c->lease)
        atomic_store(&c->lease_lost, 1);
    return ttl > 0 ? 1 : 0;
}

struct lock_client *etcd_client_new(const struct lock_env *env, struct lab_err *err)
{
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    c->env = env;
    c->ttl_s = (env->ttl_ns + 999999999) / 1000000000;
    if (c->ttl_s < 1)
        c->ttl_s = 1;
    return c;
}

int etcd_lock_open(struct lock_client **out, const struct lock_env *env, bool keepalive,
                   struct lab_err *err)
{
    struct lock_client *c = etcd_client_new(env, err);
    *out = NULL;
    if (!c)
        return -1;
    c->ec = etcd_conn_new(env->servers->conn, ETCD_CALL_TIMEOUT_MS, err);
    if (!c->ec)
        goto fail;
    etcd_conn_count(c->ec, &env->stats->round_trips);
    if (keepalive) {
        c->wd_conn = etcd_conn_new(env->servers->conn, ETCD_CALL_TIMEOUT_MS, err);
        if (!c->wd_conn)
            goto fail;
        c->wd = watchdog_start(c->ttl_s * 1000000000LL, keep_alive, c, env->stats, err);
        if (!c->wd)
            goto fail;
    }
    *out = c;
    return 0;
fail:
    etcd_lock_close(c);
    return -1;
}

void etcd_lock_close(struct lock_client *c)
{
    if (!c)
        return;
    watchdog_stop(c->wd); /* NULL is fine */
    if (c->lease && c->ec)
        etcd_lease_revoke(c, c->lease); /* Session.Close: its keys go with it */
    etcd_conn_free(c->wd_conn);
    etcd_conn_free(c->ec);
    free(c);
}

int etcd_lease_grant(struct lock_client *c, int64_t *id, int64_t *sent, struct lab_err *err)
{
    json_t *resp;
    int64_t t = lab_now_ns();
    if (etcd_call(c->ec, ETCD_GRANT, etcd_grant_req(c), &resp, err) != 0)
        return -1;
    *id = etcd_num(resp, "ID", NULL);
    json_decref(resp);
    if (sent)
        *sent = t;
    if (*id == 0) {
        lab_err_set(err, EIO, "etcd granted no lease");
        return -1;
    }
    return 0;
}

void etcd_lease_revoke(struct lock_client *c, int64_t id)
{
    json_t *resp;
    struct lab_err err;
    if (etcd_call(c->ec, ETCD_REVOKE, etcd_lease_id_req(id), &resp, &err) == 0)
        json_decref(resp);
}

int64_t etcd_session(struct lock_client *c, struct lab_err *err)
{
    if (c->lease && !atomic_load(&c->lease_lost))
        return c->lease;
    if (c->wd)
        watchdog_disarm(c->wd);
    int64_t id;
    if (etcd_lease_grant(c, &id, NULL, err) != 0)
        return 0;
    c->lease = id;
    atomic_store(&c->lease_lost, 0);
    char key[32];
    snprintf(key, sizeof key, "%" PRId64, id);
    if (c->wd)
        watchdog_arm(c->wd, key);
    return id;
}

void etcd_session_drop(struct lock_client *c)
{
    if (c->wd)
        watchdog_disarm(c->wd);
    if (c->lease)
        etcd_lease_revoke(c, c->lease);
    atomic_store(&c->lease_lost, 1);
}

void etcd_session_failed(struct lock_client *c, const struct lab_err *err)
{
    if (strstr(err->msg, "lease not found"))
        atomic_store(&c->lease_lost, 1);
}

json_t *etcd_grant_req(const struct lock_client *c)
{
    return json_pack("{s:I}", "TTL", (json_int_t)c->ttl_s);
}

json_t *etcd_lease_id_req(int64_t id)
{
    return json_pack("{s:I}", "ID", (json_int_t)id);
}

json_t *etcd_key_req(const char *key)
{
    return json_pack("{s:o}", "key", etcd_b64s(key));
}

json_t *etcd_watch_delete_req(const char *key, int64_t rev)
{
    return json_pack("{s:{s:o, s:I, s:[s]}}", "create_request", "key", etcd_b64s(key),
                     "start_revision", (json_int_t)(rev + 1), "filters", "NOPUT");
}

/* Created (read on), canceled (fail), or events, which with the NOPUT
 * filter are deletions. */
int etcd_watch_msg(struct lock_client *c, json_t *msg, bool *canceled, struct lab_err *err)
{
    const json_t *result = json_object_get(msg, "result");
    if (json_is_true(json_object_get(result, "canceled"))) {
        const char *why = json_string_value(json_object_get(result, "cancel_reason"));
        lab_err_set(err, EIO, "etcd watch canceled: %.100s", why ? why : "no reason given");
        *canceled = true;
        return -1;
    }
    if (json_array_size(json_object_get(result, "events")) == 0)
        return 0;
    c->env->stats->notifications++;
    return 1;
}

struct delete_wait {
    struct lock_client *c;
    bool canceled; /* etcd canceled the watch (compacted past its revision) */
};

static int on_watch(void *arg, json_t *msg, struct lab_err *err)
{
    struct delete_wait *w = arg;
    return etcd_watch_msg(w->c, msg, &w->canceled, err);
}

int etcd_wait_delete(struct lock_client *c, const char *key, int64_t rev, int64_t deadline,
                     struct lab_err *err)
{
    struct delete_wait w = {c, false};
    for (;;) {
        int r = etcd_stream(c->ec, ETCD_WATCH, etcd_watch_delete_req(key, rev), on_watch, &w,
                            deadline, c->env->stop, err);
        if (r >= 0 || w.canceled || lab_now_ns() >= deadline)
            return r < 0 ? -1 : r;
        /* the member went away under the watch: as Go's client, watch
         * again from the same revision on the next member */
        etcd_conn_next(c->ec);
        lab_sleep_ns(20 * 1000000, c->env->stop);
    }
}

int etcd_delete(struct lock_client *c, const char *key, struct lab_err *err)
{
    json_t *resp;
    if (etcd_call(c->ec, ETCD_DELETE, etcd_key_req(key), &resp, err) != 0)
        return -1;
    int deleted = etcd_num(resp, "deleted", NULL) > 0;
    json_decref(resp);
    return deleted;
}

const json_t *etcd_first_kv(const json_t *range)
{
    return json_array_get(json_object_get(range, "kvs"), 0);
}

int etcd_hold_push(struct lock_client *c, const char *key, const char *ekey, int64_t rev,
                   int64_t lease, struct lab_err *err)
{
    if (c->n_held == ETCD_MAX_HOLDS || strlen(key) >= ETCD_KEY_MAX) {
        lab_err_set(err, ENOSPC, "too many locks held at once (or key too long)");
        return -1;
    }
    struct etcd_hold *h = &c->held[c->n_held++];
    snprintf(h->key, sizeof h->key, "%s", key);
    snprintf(h->ekey, sizeof h->ekey, "%s", ekey);
    h->rev = rev;
    h->lease = lease;
    if (c->env->fencing)
        c->env->stats->fence_token = rev;
    return 0;
}

int etcd_hold_pop(struct lock_client *c, const char *key, struct etcd_hold *out)
{
    for (int i = c->n_held - 1; i >= 0; i--)
        if (strcmp(c->held[i].key, key) == 0) {
            *out = c->held[i];
            memmove(&c->held[i], &c->held[i + 1], (size_t)(c->n_held - i - 1) * sizeof *out);
            c->n_held--;
            return 1;
        }
    return 0;
}
