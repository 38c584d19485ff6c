/*
 * etcd_lease.c - the simplest etcd lock: one key, created in a transaction
 * only if it does not exist (its create revision is 0), carrying a lease
 * of lock.ttl; the lock is whoever's value the key holds.
 *
 * Acquire grants a lease, then sends the transaction (compare
 * create_revision == 0, put our unique value with the lease; else read
 * the key). A waiter that finds the key taken watches it from the revision
 * it read and tries again when it is deleted (released, or its lease
 * expired): one watch event per waiter per release, every waiter woken.
 * A lease older than half its TTL is replaced before a try, so the key is
 * never put with a lease about to run out. Release deletes the key in a
 * transaction only if it still holds our value (RELEASE_NOT_OWNER
 * otherwise); the lease, with nothing attached any more, is left to run
 * out. With etcd_keepalive: true a keep-alive thread renews the lease
 * every ttl/3 while the lock is held (Redisson's watchdog, etcd's
 * KeepAlive).
 *
 * How it breaks: without keep-alive, a business longer than the TTL loses
 * the key under its holder; with it, a holder paused longer than the TTL
 * (GC, SIGSTOP: the thread pauses too) does. Either way a second client
 * gets in while the first still works. Not reentrant: a nested acquire
 * finds its own key taken and waits for itself until its budget runs out.
 *
 * Fencing token: the key's create revision, the transaction's revision.
 * etcd's revision grows with every write of the cluster, and a key created
 * later has a higher one, so tokens rise from holder to holder.
 */
#include "etcd_lease.h"

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

static const char *const bool_words[] = {"false", "true", NULL}; /* index = value */

static const struct opt el_rows[] = {
    { .name = "etcd_keepalive", .type = OPT_CHOICE, OPT_FIELD(struct el_options, keepalive),
      .choices = bool_words, .def = "false",
      .help = "etcd-lease: renew the lease every ttl/3 while the lock is held" },
    { .name = NULL }
};

static int el_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    const struct el_options *o = env->options;
    return etcd_lock_open(out, env, o && o->keepalive, err);
}

void etcd_lease_names(struct lock_client *c, const char *key, char ekey[ETCD_KEY_MAX + 32],
                      char value[64])
{
    snprintf(ekey, ETCD_KEY_MAX + 32, ETCD_KEY_PREFIX "%s", key);
    snprintf(value, 64, "%d.%d.%" PRIu64, c->env->client_id, (int)getpid(), ++c->grants);
}

json_t *etcd_lease_try_req(const char *ekey, const char *value, int64_t lease)
{
    return json_pack(
        "{s:[{s:o, s:s, s:s, s:i}], s:[{s:{s:o, s:o, s:I}}], s:[{s:{s:o}}]}", "compare", "key",
        etcd_b64s(ekey), "target", "CREATE", "result", "EQUAL", "create_revision", 0, "success",
        "request_put", "key", etcd_b64s(ekey), "value", etcd_b64s(value), "lease",
        (json_int_t)lease, "failure", "request_range", "key", etcd_b64s(ekey));
}

int etcd_lease_try_answer(const json_t *resp, int64_t *rev)
{
    *rev = etcd_num(resp, "header", "revision", NULL);
    return json_is_true(json_object_get(resp, "succeeded"));
}

json_t *etcd_lease_release_req(const char *ekey, const char *value)
{
    return json_pack("{s:[{s:o, s:s, s:s, s:o}], s:[{s:{s:o}}]}", "compare", "key",
                     etcd_b64s(ekey), "target", "VALUE", "result", "EQUAL", "value",
                     etcd_b64s(value), "success", "request_delete_range", "key",
                     etcd_b64s(ekey));
}

bool etcd_lease_stale(const struct lock_client *c, int64_t granted)
{
    return lab_now_ns() - granted > c->ttl_s * 500000000LL;
}

/* The transaction: 1 created (*rev its revision), 0 taken (*rev the
 * revision read), -1 with err. */
static int el_try(struct lock_client *c, const char *ekey, const char *value, int64_t lease,
                  int64_t *rev, struct lab_err *err)
{
    json_t *resp;
    if (etcd_call(c->ec, ETCD_TXN, etcd_lease_try_req(ekey, value, lease), &resp, err) != 0)
        return -1;
    int ok = etcd_lease_try_answer(resp, rev);
    json_decref(resp);
    return ok;
}

static enum lock_status el_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                   struct lab_err *err)
{
    char ekey[ETCD_KEY_MAX + 32], value[64];
    int64_t deadline = lab_now_ns() + wait_ns, lease = 0, granted = 0, rev;
    etcd_lease_names(c, key, ekey, value);
    for (;;) {
        if (lease && etcd_lease_stale(c, granted)) {
            etcd_lease_revoke(c, lease); /* half its TTL gone: a fresh one */
            lease = 0;
        }
        if (!lease && etcd_lease_grant(c, &lease, &granted, err) != 0)
            return LOCK_ERROR;
        int r = el_try(c, ekey, value, lease, &rev, err);
        if (r < 0)
            break;
        if (r == 1) {
            if (etcd_hold_push(c, key, ekey, rev, lease, err) != 0)
                break;
            snprintf(c->held[c->n_held - 1].value, sizeof value, "%s", value);
            c->env->stats->lease_floor_ns = granted + c->ttl_s * 1000000000LL;
            if (c->wd) {
                char id[32];
                snprintf(id, sizeof id, "%" PRId64, lease);
                watchdog_arm(c->wd, id);
            }
            return LOCK_GRANTED;
        }
        r = etcd_wait_delete(c, ekey, rev, deadline, err);
        if (r < 0)
            break;
        if (r == 0) {
            etcd_lease_revoke(c, lease);
            return LOCK_TIMEOUT;
        }
    }
    etcd_lease_revoke(c, lease);
    return LOCK_ERROR;
}

static enum release_status el_release(struct lock_client *c, const char *key, struct lab_err *err)
{
    struct etcd_hold h;
    json_t *resp;
    if (c->wd)
        watchdog_disarm(c->wd);
    if (!etcd_hold_pop(c, key, &h))
        return RELEASE_NOT_OWNER;
    if (etcd_call(c->ec, ETCD_TXN, etcd_lease_release_req(h.ekey, h.value), &resp, err) != 0)
        return RELEASE_ERROR;
    int ours = json_is_true(json_object_get(resp, "succeeded"));
    json_decref(resp);
    return ours ? RELEASE_OK : RELEASE_NOT_OWNER;
}

const struct lock_ops lock_etcd_lease = {
    .name = "etcd-lease",
    .backend = "etcd",
    .summary = "etcd txn: create the key if its create revision is 0, with a lease of ttl; "
               "delete only our value; keep-alive optional; a lease can run out under its holder",
    .caps = LOCK_CAP_TTL | LOCK_CAP_FENCING | LOCK_CAP_NOTIFIES,
    .open = el_open,
    .acquire = el_acquire,
    .release = el_release,
    .close = etcd_lock_close,
    .options = el_rows,
    .options_size = sizeof(struct el_options),
    .async = &etcd_lease_async,
};
