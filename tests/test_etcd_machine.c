/*
 * test_etcd_machine.c - the etcd designs' state machine
 * (impls/etcd/etcd_machine.c) fed scripted events: no server, no clock.
 *
 * Each case plays what etcd and a connection would do (an answer, a member
 * that does not answer, a watch event, a cut watch, "requested lease not
 * found", a keep-alive that fails, the run's stop, an answer that comes
 * too late) and checks what the design sends and decides. The decisions
 * the blocking and grouped forms once made apart (issue 31) are each a
 * case, with the behaviour both modes now share: a lease etcd no longer
 * knows makes a new session and tries again once; a stale keep-alive
 * answer ends no session; with the run stopping no watch nor Lock call is
 * sent.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "etcd_machine.h"

#define MS 1000000LL
#define T0 (1000 * MS) /* the scripted clock starts here */

static const struct etcd_sm_design LEASE = {.kind = ETCD_SM_LEASE, .name = "etcd-lease"};
static const struct etcd_sm_design MUTEX = {.kind = ETCD_SM_MUTEX, .name = "etcd-mutex"};
static const struct etcd_sm_design LOCK_API = {.kind = ETCD_SM_LOCK_API,
                                               .name = "etcd-lock-api"};

struct rig {
    struct etcd_sm m;
    struct lock_env env;
    struct lock_stats stats;
    struct lock_servers sv;
    int stop;
};

static void rig_init(struct rig *r, const struct etcd_sm_design *d, int fencing, bool keepalive)
{
    memset(r, 0, sizeof *r);
    r->env.servers = &r->sv;
    r->env.ttl_ns = 3000 * MS; /* 3 s: renewals every 1 s */
    r->env.stop = &r->stop;
    r->env.stats = &r->stats;
    r->env.fencing = fencing;
    etcd_sm_init(&r->m, d, &r->env, "3.77", keepalive);
}

/* An answer as etcd's gateway writes it (64-bit numbers as strings). */
static json_t *J(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    if (!j)
        fprintf(stderr, "bad test JSON: %s\n", text);
    return j;
}

static enum etcd_sm_act reply(struct rig *r, const char *text, int64_t now)
{
    json_t *j = J(text);
    enum etcd_sm_act a = etcd_sm_reply(&r->m, j, NULL, now);
    json_decref(j);
    return a;
}

static enum etcd_sm_act fail(struct rig *r, const char *msg, int64_t now)
{
    struct lab_err e;
    lab_err_set(&e, 5, "%s", msg);
    return etcd_sm_reply(&r->m, NULL, &e, now);
}

static int msg(struct rig *r, const char *text)
{
    json_t *j = J(text);
    struct lab_err e = {0};
    int v = etcd_sm_msg(&r->m, j, &e);
    json_decref(j);
    return v;
}


static enum etcd_ka_act ka_reply(struct rig *r, const char *text, int64_t now)
{
    json_t *j = text ? J(text) : NULL;
    enum etcd_ka_act a = etcd_sm_ka_reply(&r->m, j, now);
    json_decref(j);
    return a;
}

/* The act is a request to path whose body has field (a dotted path of
 * object keys and array indexes) equal to want; a base64 field is decoded
 * first (b64). */
static bool sends(struct rig *r, enum etcd_sm_act a, enum etcd_sm_act want_act, const char *path,
                  const char *field, const char *want, bool b64)
{
    if (a != want_act || !r->m.path || strcmp(r->m.path, path) != 0 || !r->m.body)
        return false;
    if (!field)
        return true;
    const json_t *v = r->m.body;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", field);
    for (char *save, *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
        v = json_is_array(v) ? json_array_get(v, (size_t)atoi(k)) : json_object_get(v, k);
    char got[300];
    if (b64) {
        if (etcd_unb64(v, got, sizeof got) < 0)
            return false;
    } else if (json_is_integer(v)) {
        snprintf(got, sizeof got, "%lld", (long long)json_integer_value(v));
    } else if (json_is_string(v)) {
        snprintf(got, sizeof got, "%s", json_string_value(v));
    } else {
        return false;
    }
    if (strcmp(got, want) != 0)
        fprintf(stderr, "  %s: got '%s', want '%s'\n", field, got, want);
    return strcmp(got, want) == 0;
}

/* A session granted for a session design: lease id (hex in keys). */
static enum etcd_sm_act session_up(struct rig *r, const char *id, int64_t now)
{
    char ans[64];
    snprintf(ans, sizeof ans, "{\"ID\":\"%s\",\"TTL\":\"3\"}", id);
    return reply(r, ans, now);
}

/* ------------------------------------------------------------ etcd-lease */

static void test_lease_grant(void)
{
    struct rig r;
    rig_init(&r, &LEASE, 1, false);
    enum etcd_sm_act a = etcd_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_GRANT, "TTL", "3", false), "a lease of ttl first");
    a = reply(&r, "{\"ID\":\"7\",\"TTL\":\"3\"}", T0 + 1 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_TXN, "success.0.request_put.lease", "7", false),
          "then the transaction, its put with that lease");
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_TXN, "success.0.request_put.value", "3.77.1", true),
          "... and this grant's unique value");
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_TXN, "compare.0.key", "locklab/k", true),
          "... on the key locklab/<key>");
    a = reply(&r, "{\"header\":{\"revision\":\"42\"},\"succeeded\":true}", T0 + 2 * MS);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_GRANTED, "succeeded: granted");
    CHECK(r.stats.fence_token == 42, "the token is the txn's revision (%lld)",
          (long long)r.stats.fence_token);
    CHECK(r.stats.lease_floor_ns == T0 + 3000 * MS, "lease floor: the grant's sending + ttl");
    CHECK(etcd_sm_ka_state(&r.m) == ETCD_KA_IDLE, "no keep-alive without etcd_keepalive");
    a = etcd_sm_release(&r.m, "k", T0 + 3 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_TXN, "compare.0.value", "3.77.1", true),
          "release: delete only if it still holds our value");
    a = reply(&r, "{\"succeeded\":true}", T0 + 4 * MS);
    CHECK(a == ETCD_SM_DONE && r.m.release == RELEASE_OK, "released");
    a = etcd_sm_release(&r.m, "k", T0 + 5 * MS);
    CHECK(a == ETCD_SM_DONE && r.m.release == RELEASE_NOT_OWNER, "nothing held: not owner, no call");
    /* a value that is no longer ours */
    a = etcd_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = reply(&r, "{\"ID\":\"8\"}", T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_TXN, "success.0.request_put.value", "3.77.2", true),
          "a second grant, a second value");
    a = reply(&r, "{\"header\":{\"revision\":\"50\"},\"succeeded\":true}", T0);
    a = etcd_sm_release(&r.m, "k", T0);
    a = reply(&r, "{\"succeeded\":false}", T0);
    CHECK(a == ETCD_SM_DONE && r.m.release == RELEASE_NOT_OWNER, "compare failed: not owner");
    etcd_sm_free(&r.m);
}

static void test_lease_contention_timeout(void)
{
    struct rig r;
    rig_init(&r, &LEASE, 0, false);
    enum etcd_sm_act a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = reply(&r, "{\"ID\":\"7\"}", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"50\"},\"succeeded\":false}", T0);
    CHECK(sends(&r, a, ETCD_SM_STREAM, ETCD_WATCH, "create_request.start_revision", "51", false),
          "taken: a watch from the revision read + 1");
    CHECK(sends(&r, a, ETCD_SM_STREAM, ETCD_WATCH, "create_request.key", "locklab/k", true),
          "... of the lock's key");
    CHECK(r.m.deadline == T0 + 1000 * MS, "the stream's deadline is the budget's end");
    CHECK(msg(&r, "{\"result\":{\"created\":true}}") == 0, "the watch created: read on");
    CHECK(msg(&r, "{\"result\":{\"events\":[{\"type\":\"DELETE\"}]}}") == 1, "a deletion: have it");
    CHECK(r.stats.notifications == 1, "one notification counted");
    a = etcd_sm_stream_end(&r.m, 1, NULL, T0 + 100 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_TXN, "success.0.request_put.lease", "7", false),
          "woken: the transaction again, the same lease (not half gone)");
    a = reply(&r, "{\"header\":{\"revision\":\"60\"},\"succeeded\":false}", T0 + 101 * MS);
    CHECK(a == ETCD_SM_STREAM, "taken again: watch again");
    a = etcd_sm_stream_end(&r.m, 0, NULL, T0 + 1000 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_REVOKE, "ID", "7", false),
          "the budget ran out: the acquire's lease revoked");
    a = reply(&r, "{}", T0 + 1001 * MS);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_TIMEOUT, "then a timeout, not an error");

    /* a lease half gone is replaced before the next try */
    a = etcd_sm_acquire(&r.m, "k", 9000 * MS, T0);
    a = reply(&r, "{\"ID\":\"9\"}", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"70\"},\"succeeded\":false}", T0);
    a = etcd_sm_stream_end(&r.m, 1, NULL, T0 + 1600 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_REVOKE, "ID", "9", false),
          "woken after half the TTL: the old lease revoked");
    a = reply(&r, "{}", T0 + 1601 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_GRANT, NULL, NULL, false), "... and a fresh one");
    a = reply(&r, "{\"ID\":\"10\"}", T0 + 1602 * MS);
    a = reply(&r, "{\"header\":{\"revision\":\"80\"},\"succeeded\":true}", T0 + 1603 * MS);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_GRANTED &&
              r.stats.lease_floor_ns == T0 + 1601 * MS + 3000 * MS,
          "granted; the floor from the fresh lease's grant");
    etcd_sm_free(&r.m);
}

static void test_lease_lost_connection(void)
{
    struct rig r;
    rig_init(&r, &LEASE, 0, false);
    enum etcd_sm_act a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = fail(&r, "etcd /v3/lease/grant: Couldn't connect to server", T0);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "connect"),
          "no member grants: an error, nothing to revoke (%s)", r.m.err.msg);
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = reply(&r, "{\"ID\":\"7\"}", T0);
    a = fail(&r, "etcd /v3/kv/txn: Timeout was reached", T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_REVOKE, "ID", "7", false),
          "the txn unanswered: the lease revoked first");
    a = fail(&r, "etcd /v3/lease/revoke: Timeout was reached", T0);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "txn"),
          "then the error, the txn's (%s)", r.m.err.msg);

    /* a watch its member cut: the next member after 20 ms, same revision */
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = reply(&r, "{\"ID\":\"7\"}", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"50\"},\"succeeded\":false}", T0);
    struct lab_err cut;
    lab_err_set(&cut, 5, "etcd /v3/watch: the stream ended");
    a = etcd_sm_stream_end(&r.m, -1, &cut, T0 + 10 * MS);
    CHECK(a == ETCD_SM_SLEEP && r.m.next_member && r.m.wake_at == T0 + 30 * MS,
          "cut: a pause on the way to the next member");
    CHECK(etcd_sm_reply(&r.m, NULL, &cut, T0) == ETCD_SM_IGNORED, "no answer awaited meanwhile");
    a = etcd_sm_timer(&r.m, T0 + 30 * MS);
    CHECK(sends(&r, a, ETCD_SM_STREAM, ETCD_WATCH, "create_request.start_revision", "51", false),
          "the watch again, from the same revision");
    /* etcd cancels it (compacted): an error */
    CHECK(msg(&r, "{\"result\":{\"canceled\":true,\"cancel_reason\":\"compacted\"}}") == -1,
          "canceled: the message fails the stream");
    lab_err_set(&cut, 5, "etcd watch canceled: compacted");
    a = etcd_sm_stream_end(&r.m, -1, &cut, T0 + 40 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_REVOKE, "ID", "7", false), "canceled: revoke");
    a = reply(&r, "{}", T0 + 41 * MS);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "compacted"),
          "... and an error, not a pause (%s)", r.m.err.msg);
    etcd_sm_free(&r.m);
}

static void test_lease_keepalive(void)
{
    struct rig r;
    rig_init(&r, &LEASE, 0, true);
    enum etcd_sm_act a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = reply(&r, "{\"ID\":\"7\"}", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"50\"},\"succeeded\":true}", T0 + 5 * MS);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_GRANTED, "granted");
    CHECK(etcd_sm_ka_state(&r.m) == ETCD_KA_WAIT && r.m.ka.wake_at == T0 + 1005 * MS,
          "etcd_keepalive: renewals every ttl/3 from the grant");
    CHECK(etcd_sm_ka_timer(&r.m, T0 + 1005 * MS) == ETCD_KA_SEND, "due: a renewal");
    json_t *b = etcd_sm_ka_take(&r.m);
    CHECK(b && json_integer_value(json_object_get(b, "ID")) == 7, "of the hold's lease");
    json_decref(b);
    CHECK(ka_reply(&r, "{\"result\":{\"ID\":\"7\",\"TTL\":\"3\"}}", T0 + 1006 * MS) ==
              ETCD_KA_WAIT && r.stats.renewals == 1,
          "renewed, counted, the next in a period");
    a = etcd_sm_release(&r.m, "k", T0 + 1100 * MS);
    CHECK(a == ETCD_SM_CALL && etcd_sm_ka_state(&r.m) == ETCD_KA_IDLE,
          "the release stops the renewals first");
    etcd_sm_free(&r.m);
}

/* ------------------------------------------------------------ etcd-mutex */

static void test_mutex_grant(void)
{
    struct rig r;
    rig_init(&r, &MUTEX, 1, false);
    enum etcd_sm_act a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_GRANT, "TTL", "3", false), "the session first");
    a = session_up(&r, "31", T0);
    CHECK(etcd_sm_ka_state(&r.m) == ETCD_KA_WAIT && r.m.ka.wake_at == T0 + 1000 * MS,
          "the session kept alive every ttl/3");
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_TXN, "compare.0.key", "locklab/k/1f", true),
          "our key: the prefix and the lease in hex");
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_TXN, "success.0.request_put.lease", "31", false),
          "put with the session's lease");
    a = reply(&r, "{\"header\":{\"revision\":\"90\"},\"succeeded\":true,\"responses\":[{},"
                  "{\"response_range\":{\"kvs\":[{\"create_revision\":\"90\"}]}}]}", T0);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_GRANTED && r.stats.fence_token == 90,
          "ours is the lowest: granted, token our create revision");
    CHECK(r.stats.lease_floor_ns == 0, "a session's lock has no lease floor");
    a = etcd_sm_release(&r.m, "k", T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_DELETE, "key", "locklab/k/1f", true), "Unlock: delete");
    a = reply(&r, "{\"deleted\":\"1\"}", T0);
    CHECK(a == ETCD_SM_DONE && r.m.release == RELEASE_OK, "deleted: released");
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_TXN, NULL, NULL, false),
          "the next acquire keeps the session: no grant");
    a = reply(&r, "{\"header\":{\"revision\":\"95\"},\"succeeded\":true,\"responses\":[{},"
                  "{\"response_range\":{\"kvs\":[{\"create_revision\":\"95\"}]}}]}", T0);
    a = etcd_sm_release(&r.m, "k", T0);
    a = reply(&r, "{\"deleted\":\"0\"}", T0);
    CHECK(a == ETCD_SM_DONE && r.m.release == RELEASE_NOT_OWNER, "gone already: not owner");
    a = etcd_sm_close(&r.m, T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_REVOKE, "ID", "31", false), "close revokes the session");
    CHECK(etcd_sm_ka_state(&r.m) == ETCD_KA_IDLE, "... and keeps it alive no more");
    a = reply(&r, "{}", T0);
    CHECK(a == ETCD_SM_DONE, "closed");
    etcd_sm_free(&r.m);
}

/* Contention: the waiter watches the next lower key; its deletion wakes it. */
static void test_mutex_watch_wakes(void)
{
    struct rig r;
    rig_init(&r, &MUTEX, 0, false);
    enum etcd_sm_act a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = session_up(&r, "2", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"91\"},\"succeeded\":true,\"responses\":[{},"
                  "{\"response_range\":{\"kvs\":[{\"create_revision\":\"80\"}]}}]}", T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_RANGE, "max_create_revision", "90", false),
          "another holds: the last key created before ours");
    a = reply(&r, "{\"header\":{\"revision\":\"91\"},\"kvs\":[{\"key\":\"bG9ja2xhYi9rLzE=\"}]}", T0);
    CHECK(sends(&r, a, ETCD_SM_STREAM, ETCD_WATCH, "create_request.key", "locklab/k/1", true),
          "watch that key's deletion");
    CHECK(sends(&r, a, ETCD_SM_STREAM, ETCD_WATCH, "create_request.start_revision", "92", false),
          "... from the revision read");
    CHECK(msg(&r, "{\"result\":{\"events\":[{}]}}") == 1 && r.stats.notifications == 1,
          "its deletion wakes us");
    a = etcd_sm_stream_end(&r.m, 1, NULL, T0 + 50 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_RANGE, "max_create_revision", "90", false),
          "woken: look for a lower key again");
    a = reply(&r, "{\"header\":{\"revision\":\"93\"}}", T0 + 51 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_RANGE, "key", "locklab/k/2", true),
          "none left: our own key read again");
    a = reply(&r, "{\"kvs\":[{\"create_revision\":\"91\"}]}", T0 + 52 * MS);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_GRANTED && r.m.held[0].rev == 91,
          "still there: granted at our create revision");
    a = etcd_sm_release(&r.m, "k", T0);
    a = reply(&r, "{\"deleted\":\"1\"}", T0);

    /* our key gone while we waited (the session expired): an error, a new session next */
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = reply(&r, "{\"header\":{\"revision\":\"99\"},\"succeeded\":true,\"responses\":[{},"
                  "{\"response_range\":{\"kvs\":[{\"create_revision\":\"98\"}]}}]}", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"99\"}}", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"99\"}}", T0);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "expired"),
          "own key gone: session expired (%s)", r.m.err.msg);
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_GRANT, NULL, NULL, false), "then a new session");
    etcd_sm_free(&r.m);
}

/* Divergence: "requested lease not found" (HTTP 404). Both forms ended
 * the acquire in an error; now a new session, and the step again, once. */
static void test_lease_not_found(void)
{
    struct rig r;
    rig_init(&r, &MUTEX, 0, false);
    enum etcd_sm_act a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = session_up(&r, "1", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"5\"},\"succeeded\":true,\"responses\":[{},"
                  "{\"response_range\":{\"kvs\":[{\"create_revision\":\"5\"}]}}]}", T0);
    a = etcd_sm_release(&r.m, "k", T0);
    a = reply(&r, "{\"deleted\":\"1\"}", T0);
    /* a partition: the lease expired; healed before the keep-alive said so */
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0 + 5000 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_TXN, "success.0.request_put.lease", "1", false),
          "the session looks alive: entered with it");
    a = fail(&r, "etcd: etcdserver: requested lease not found (HTTP 404)", T0 + 5001 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_GRANT, "TTL", "3", false),
          "lease not found: a new session, not an error");
    CHECK(etcd_sm_ka_state(&r.m) == ETCD_KA_IDLE, "the dead lease renewed no more");
    a = session_up(&r, "2", T0 + 5002 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_TXN, "compare.0.key", "locklab/k/2", true),
          "entered again with the new session's key");
    CHECK(etcd_sm_ka_state(&r.m) == ETCD_KA_WAIT && r.m.ka.id == 2, "the new one kept alive");
    a = reply(&r, "{\"header\":{\"revision\":\"9\"},\"succeeded\":true,\"responses\":[{},"
                  "{\"response_range\":{\"kvs\":[{\"create_revision\":\"9\"}]}}]}", T0);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_GRANTED, "granted within the same acquire");
    a = etcd_sm_release(&r.m, "k", T0);
    a = reply(&r, "{\"deleted\":\"1\"}", T0);
    /* twice in one acquire: an error (etcd forgets every lease we make) */
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = fail(&r, "etcd: etcdserver: requested lease not found (HTTP 404)", T0);
    a = session_up(&r, "3", T0);
    a = fail(&r, "etcd: etcdserver: requested lease not found (HTTP 404)", T0);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_ERROR && r.m.lease_lost,
          "a second time: an error, the session over");
    /* any other error is an error, the session kept */
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = session_up(&r, "4", T0);
    a = fail(&r, "etcd /v3/kv/txn: Timeout was reached", T0);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_ERROR && !r.m.lease_lost,
          "no answer: an error, the session kept");
    etcd_sm_free(&r.m);

    /* the same for the Lock call */
    rig_init(&r, &LOCK_API, 0, false);
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = session_up(&r, "1", T0);
    struct lab_err e;
    lab_err_set(&e, 5, "etcd: etcdserver: requested lease not found (HTTP 404)");
    a = etcd_sm_stream_end(&r.m, -1, &e, T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_GRANT, NULL, NULL, false),
          "etcd-lock-api: lease not found, a new session");
    a = session_up(&r, "2", T0);
    CHECK(sends(&r, a, ETCD_SM_STREAM, ETCD_LOCK, "lease", "2", false),
          "... and the Lock call again with it");
    etcd_sm_free(&r.m);
}

/* The keep-alive lane: renewals, retries, a failure that ends the session,
 * and a late answer that must end nothing. */
static void test_keepalive(void)
{
    struct rig r;
    rig_init(&r, &MUTEX, 0, false);
    enum etcd_sm_act a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = session_up(&r, "1", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"5\"},\"succeeded\":true,\"responses\":[{},"
                  "{\"response_range\":{\"kvs\":[{\"create_revision\":\"5\"}]}}]}", T0);
    CHECK(etcd_sm_ka_timer(&r.m, T0 + 500 * MS) == ETCD_KA_WAIT, "not due yet: wait");
    CHECK(etcd_sm_ka_timer(&r.m, T0 + 1000 * MS) == ETCD_KA_SEND, "due: renew");
    CHECK(etcd_sm_ka_timer(&r.m, T0 + 1000 * MS) == ETCD_KA_IDLE, "one renewal at a time");
    CHECK(ka_reply(&r, "{\"result\":{\"TTL\":\"3\"}}", T0 + 1001 * MS) == ETCD_KA_WAIT &&
              r.m.ka.wake_at == T0 + 2001 * MS && r.stats.renewals == 1,
          "renewed: the next a period after");
    /* no member answers: again every 50 ms while the lease may run (3 s) */
    CHECK(etcd_sm_ka_timer(&r.m, T0 + 2001 * MS) == ETCD_KA_SEND, "the next renewal");
    CHECK(ka_reply(&r, NULL, T0 + 3000 * MS) == ETCD_KA_WAIT && r.m.ka.wake_at == T0 + 3050 * MS,
          "unanswered: again in 50 ms");
    CHECK(r.stats.renewal_failures == 0 && !r.m.lease_lost, "not a failure yet");
    CHECK(etcd_sm_ka_timer(&r.m, T0 + 3050 * MS) == ETCD_KA_SEND, "sent again");
    CHECK(ka_reply(&r, NULL, T0 + 5002 * MS) == ETCD_KA_IDLE, "a whole TTL unanswered: given up");
    CHECK(r.stats.renewal_failures == 1 && r.m.lease_lost, "a failure; the session is over");
    a = etcd_sm_release(&r.m, "k", T0 + 5003 * MS);
    a = reply(&r, "{\"deleted\":\"0\"}", T0 + 5004 * MS);
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0 + 5005 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_GRANT, NULL, NULL, false),
          "the next acquire makes a new session");
    a = session_up(&r, "2", T0 + 5006 * MS);
    a = reply(&r, "{\"header\":{\"revision\":\"9\"},\"succeeded\":true,\"responses\":[{},"
                  "{\"response_range\":{\"kvs\":[{\"create_revision\":\"9\"}]}}]}", T0);
    /* TTL 0: etcd says the lease expired */
    CHECK(etcd_sm_ka_timer(&r.m, T0 + 6006 * MS) == ETCD_KA_SEND, "renew session 2");
    CHECK(ka_reply(&r, "{\"result\":{\"TTL\":\"0\"}}", T0 + 6007 * MS) == ETCD_KA_IDLE &&
              r.m.lease_lost && r.stats.renewal_failures == 2,
          "TTL 0: the session is over at once");
    /* a late answer: a renewal of session 3 in flight when session 4 replaced it */
    a = etcd_sm_release(&r.m, "k", T0);
    a = reply(&r, "{\"deleted\":\"1\"}", T0);
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0 + 7000 * MS);
    a = session_up(&r, "3", T0 + 7000 * MS);
    CHECK(etcd_sm_ka_timer(&r.m, T0 + 8000 * MS) == ETCD_KA_SEND, "renew session 3");
    a = fail(&r, "etcd: etcdserver: requested lease not found (HTTP 404)", T0 + 8001 * MS);
    a = session_up(&r, "4", T0 + 8002 * MS);
    CHECK(ka_reply(&r, "{\"result\":{\"TTL\":\"0\"}}", T0 + 8003 * MS) == ETCD_KA_WAIT,
          "session 3's late TTL 0: session 4 still renewed");
    CHECK(!r.m.lease_lost && r.m.lease == 4, "... and not over");
    etcd_sm_free(&r.m);
}

/* The run stops: waits end in a timeout; nothing new is sent. */
static void test_stop(void)
{
    struct rig r;
    rig_init(&r, &MUTEX, 0, false);
    enum etcd_sm_act a = etcd_sm_acquire(&r.m, "k", 9000 * MS, T0);
    a = session_up(&r, "2", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"91\"},\"succeeded\":true,\"responses\":[{},"
                  "{\"response_range\":{\"kvs\":[{\"create_revision\":\"80\"}]}}]}", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"91\"},\"kvs\":[{\"key\":\"bG9ja2xhYi9rLzE=\"}]}", T0);
    CHECK(a == ETCD_SM_STREAM, "waiting on a watch");
    r.stop = 1;
    a = etcd_sm_stream_end(&r.m, 0, NULL, T0 + 10 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_DELETE, "key", "locklab/k/2", true),
          "stopped: our key deleted (Lock's clean-up)");
    a = reply(&r, "{\"deleted\":\"1\"}", T0 + 11 * MS);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_TIMEOUT, "a timeout, not an error");
    /* a cut watch's pause ends in the stop: no watch sent */
    r.stop = 0;
    a = etcd_sm_acquire(&r.m, "k", 9000 * MS, T0);
    a = reply(&r, "{\"header\":{\"revision\":\"91\"},\"succeeded\":false,\"responses\":["
                  "{\"response_range\":{\"kvs\":[{\"create_revision\":\"91\"}]}},"
                  "{\"response_range\":{\"kvs\":[{\"create_revision\":\"80\"}]}}]}", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"91\"},\"kvs\":[{\"key\":\"bG9ja2xhYi9rLzE=\"}]}", T0);
    a = etcd_sm_stream_end(&r.m, -1, NULL, T0 + 5 * MS);
    CHECK(a == ETCD_SM_SLEEP, "cut: pause");
    r.stop = 1;
    a = etcd_sm_timer(&r.m, T0 + 6 * MS);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_DELETE, NULL, NULL, false),
          "the stop during the pause: no watch, our key deleted");
    a = reply(&r, "{\"deleted\":\"1\"}", T0);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_TIMEOUT, "timeout");
    /* the keep-alive does not retry while stopping */
    CHECK(etcd_sm_ka_timer(&r.m, T0 + 2000 * MS) == ETCD_KA_SEND, "a renewal");
    CHECK(ka_reply(&r, NULL, T0 + 2001 * MS) == ETCD_KA_IDLE && r.m.lease_lost,
          "unanswered while stopping: given up at once");
    etcd_sm_free(&r.m);

    rig_init(&r, &LOCK_API, 0, false);
    a = etcd_sm_acquire(&r.m, "k", 9000 * MS, T0);
    r.stop = 1;
    a = session_up(&r, "1", T0);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_TIMEOUT,
          "etcd-lock-api, stopping: a timeout, no Lock call sent");
    etcd_sm_free(&r.m);
}

/* The Lock service: the call, the token, Unlock, a release that fails. */
static void test_lock_api(void)
{
    struct rig r;
    rig_init(&r, &LOCK_API, 1, false);
    enum etcd_sm_act a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = session_up(&r, "42", T0);
    CHECK(sends(&r, a, ETCD_SM_STREAM, ETCD_LOCK, "name", "locklab/k", true),
          "the Lock call on locklab/<key>");
    CHECK(sends(&r, a, ETCD_SM_STREAM, ETCD_LOCK, "lease", "42", false), "... with the session");
    CHECK(msg(&r, "{\"header\":{\"revision\":\"120\"},\"key\":\"bG9ja2xhYi9rLzJh\"}") == 1,
          "answered with the owner key");
    a = etcd_sm_stream_end(&r.m, 1, NULL, T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_RANGE, "key", "locklab/k/2a", true),
          "fencing: the owner key's range for its token");
    a = reply(&r, "{\"kvs\":[{\"create_revision\":\"110\"}]}", T0);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_GRANTED && r.stats.fence_token == 110,
          "granted, token its create revision (not the answer's revision)");
    a = etcd_sm_release(&r.m, "k", T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_UNLOCK, "key", "locklab/k/2a", true), "Unlock");
    a = reply(&r, "{}", T0);
    CHECK(a == ETCD_SM_DONE && r.m.release == RELEASE_UNCHECKED, "Unlock says nothing: unchecked");
    /* the Lock call timed out */
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    CHECK(a == ETCD_SM_STREAM, "the session kept: the Lock call at once");
    a = etcd_sm_stream_end(&r.m, 0, NULL, T0 + 1000 * MS);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_TIMEOUT, "budget spent: timeout");
    /* the owner key gone before its token was read */
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    msg(&r, "{\"key\":\"bG9ja2xhYi9rLzJh\"}");
    a = etcd_sm_stream_end(&r.m, 1, NULL, T0);
    a = reply(&r, "{}", T0);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_ERROR && r.m.n_held == 0,
          "no key to read a token from: an error, nothing held");
    /* a release that could not be sent ends the session */
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    msg(&r, "{\"key\":\"bG9ja2xhYi9rLzJh\"}");
    a = etcd_sm_stream_end(&r.m, 1, NULL, T0);
    a = reply(&r, "{\"kvs\":[{\"create_revision\":\"130\"}]}", T0);
    a = etcd_sm_release(&r.m, "k", T0);
    a = fail(&r, "etcd /v3/lock/unlock: Couldn't connect to server", T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_REVOKE, "ID", "42", false),
          "Unlock unanswered: the session revoked (its keys with it)");
    a = fail(&r, "etcd /v3/lease/revoke: Couldn't connect to server", T0);
    CHECK(a == ETCD_SM_DONE && r.m.release == RELEASE_ERROR && strstr(r.m.err.msg, "unlock"),
          "then a release error, the Unlock's (%s)", r.m.err.msg);
    a = etcd_sm_acquire(&r.m, "k", 1000 * MS, T0);
    CHECK(sends(&r, a, ETCD_SM_CALL, ETCD_GRANT, NULL, NULL, false), "a new session next");
    etcd_sm_free(&r.m);
}

/* An answer that comes after its operation ended changes nothing. */
static void test_late_reply(void)
{
    struct rig r;
    rig_init(&r, &LEASE, 1, false);
    enum etcd_sm_act a = etcd_sm_acquire(&r.m, "k", 100 * MS, T0);
    a = reply(&r, "{\"ID\":\"7\"}", T0);
    a = reply(&r, "{\"header\":{\"revision\":\"50\"},\"succeeded\":false}", T0);
    a = etcd_sm_stream_end(&r.m, 0, NULL, T0 + 100 * MS);
    a = reply(&r, "{}", T0 + 101 * MS);
    CHECK(a == ETCD_SM_DONE && r.m.status == LOCK_TIMEOUT, "timed out");
    a = reply(&r, "{\"header\":{\"revision\":\"51\"},\"succeeded\":true}", T0 + 200 * MS);
    CHECK(a == ETCD_SM_IGNORED && r.m.status == LOCK_TIMEOUT && r.m.n_held == 0 &&
              r.stats.fence_token == 0,
          "a late grant answer: ignored, nothing held, no token");
    CHECK(etcd_sm_stream_end(&r.m, 1, NULL, T0 + 201 * MS) == ETCD_SM_IGNORED,
          "a late watch end: ignored");
    CHECK(etcd_sm_timer(&r.m, T0 + 202 * MS) == ETCD_SM_IGNORED, "a late timer: ignored");
    etcd_sm_free(&r.m);
}

int main(void)
{
    test_lease_grant();
    test_lease_contention_timeout();
    test_lease_lost_connection();
    test_lease_keepalive();
    test_mutex_grant();
    test_mutex_watch_wakes();
    test_lease_not_found();
    test_keepalive();
    test_stop();
    test_lock_api();
    test_late_reply();
    return check_done();
}
