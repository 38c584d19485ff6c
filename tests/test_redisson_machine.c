/*
 * test_redisson_machine.c - redisson's state machine
 * (impls/redis/redisson_machine.c) fed scripted events: no server, no
 * clock, no pub/sub connection.
 *
 * Each case plays what a server, a connection and the pub/sub would do
 * and checks what the design sends and decides: the grant and its lease
 * floor, contention (subscribe, try again, sleep by the holder's PTTL), a
 * message waking a waiter (and the handoff split it records), a waiter
 * timing out, the reentrant hold count, a release that is not the owner's,
 * the watchdog's arm and disarm and its renewal, and each decision the
 * blocking and the grouped forms once took differently (issue 31): a lost
 * command connection resends once, READONLY finds the master anew and
 * resends once, NOSCRIPT reloads, a pub/sub connection lost is made again
 * and the lock tried again, even right after it was made, an error reply
 * on the pub/sub fails the waiter, a pub/sub that cannot be made fails it.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "redisson_machine.h"

#define MS 1000000LL
#define T0 (1000 * MS)

static const char SHA_ACQ[] = "1111111111111111111111111111111111111111";
static const char SHA_REL[] = "2222222222222222222222222222222222222222";

struct rig {
    struct rsn_sm m;
    struct lock_env env;
    struct lock_stats stats;
    struct lock_servers sv;
    struct rsn_options opt;
    int stop;
};

/* lease_ms 0: the watchdog's lease of 30 s. */
static void rig_init(struct rig *r, long long lease_ms, int fencing)
{
    memset(r, 0, sizeof *r);
    r->env.servers = &r->sv;
    r->env.ttl_ns = lease_ms * MS;
    r->env.retry_interval_ns = 10 * MS;
    r->env.stop = &r->stop;
    r->env.stats = &r->stats;
    r->env.fencing = fencing;
    r->opt.lease_ns = lease_ms * MS;
    r->opt.watchdog_lease_ns = 30000 * MS;
    r->env.options = &r->opt;
    rsn_sm_init(&r->m, &r->env, "uuid:1");
}

static struct redis_sm_reply R(enum redis_sm_type t, long long n, const char *s)
{
    struct redis_sm_reply r = {.type = t, .integer = n, .str = s, .len = s ? strlen(s) : 0};
    return r;
}
static struct redis_sm_reply pair(long long a, long long b)
{
    struct redis_sm_reply r = {.type = RSM_OTHER, .pair = true, .first = a, .second = b};
    return r;
}

static enum rsn_act feed(struct rig *r, struct redis_sm_reply rep, int64_t now)
{
    return rsn_sm_reply(&r->m, &rep, now);
}

static int sends(const struct rsn_sm *m, enum rsn_act act, const char *const *argv)
{
    if (act != RSN_SEND)
        return 0;
    int n = 0;
    for (; argv[n]; n++)
        if (n >= m->argc || strcmp(m->argv[n], argv[n]) != 0)
            return 0;
    return n == m->argc;
}

static void open_ok(struct rig *r)
{
    enum rsn_act a = rsn_sm_open(&r->m, T0);
    CHECK(a == RSN_RECONNECT, "the open connects first (act %d)", a);
    a = rsn_sm_reconnected(&r->m, true, NULL, T0);
    CHECK(a == RSN_SEND && strcmp(r->m.argv[1], "LOAD") == 0 &&
              strcmp(r->m.argv[2], r->env.fencing ? rsn_fenced_acquire_lua : rsn_acquire_lua) == 0,
          "the acquire script is loaded first");
    a = feed(r, R(RSM_STRING, 0, SHA_ACQ), T0);
    CHECK(a == RSN_SEND && strcmp(r->m.argv[2], rsn_release_lua) == 0, "then the release one");
    a = feed(r, R(RSM_STRING, 0, SHA_REL), T0);
    if (r->m.watchdog) {
        CHECK(a == RSN_SEND && strcmp(r->m.argv[2], rsn_renew_lua) == 0,
              "with the watchdog, the renew script too");
        a = feed(r, R(RSM_STRING, 0, SHA_REL), T0);
    }
    CHECK(a == RSN_DONE && r->m.open_rc == 0, "opened");
    CHECK(r->stats.round_trips == 0, "the open counts no round trip");
}

static void test_grant(void)
{
    struct rig r;
    rig_init(&r, 1000, 0);
    open_ok(&r);
    enum rsn_act a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(sends(&r.m, a, (const char *[]){"EVALSHA", SHA_ACQ, "1", "k", "1000", "uuid:1", NULL}),
          "acquire: EVALSHA key lease owner");
    a = feed(&r, R(RSM_NIL, 0, NULL), T0 + 2 * MS);
    CHECK(a == RSN_DONE && r.m.status == LOCK_GRANTED, "nil is a grant");
    CHECK(r.stats.lease_floor_ns == T0 + 1000 * MS, "lease floor: sent + lease (%lld)",
          (long long)r.stats.lease_floor_ns);
    CHECK(r.m.holds == 1 && r.m.watch == RS_WATCH_NONE, "one hold, no watchdog with a lease");
    a = rsn_sm_release(&r.m, "k", T0 + 5 * MS);
    CHECK(sends(&r.m, a, (const char *[]){"EVALSHA", SHA_REL, "2", "k", "redisson_lock__channel:{k}",
                                          "1005000000", "1000", "uuid:1", NULL}),
          "release: key, channel, the send time as message, lease, owner");
    a = feed(&r, R(RSM_INTEGER, 1, NULL), T0 + 6 * MS);
    CHECK(a == RSN_DONE && r.m.release == RELEASE_OK && r.m.holds == 0, "1: released");
    CHECK(r.stats.round_trips == 2, "two round trips (%lld)", (long long)r.stats.round_trips);
}

static void test_fenced(void)
{
    struct rig r;
    rig_init(&r, 1000, 1);
    open_ok(&r);
    enum rsn_act a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(sends(&r.m, a, (const char *[]){"EVALSHA", SHA_ACQ, "2", "k", "k:fence", "1000", "uuid:1",
                                          NULL}),
          "fenced: the counter is the second key");
    a = feed(&r, pair(0, 300), T0);
    CHECK(a == RSN_SUBSCRIBE && r.m.ttl == 300, "{0, pttl}: taken");
    a = rsn_sm_subscribed(&r.m, T0);
    a = feed(&r, pair(1, 42), T0 + 1 * MS);
    CHECK(a == RSN_DONE && r.m.status == LOCK_GRANTED && r.stats.fence_token == 42,
          "{1, 42}: granted with token 42");
    a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, R(RSM_INTEGER, 5, NULL), T0);
    CHECK(a == RSN_DONE && r.m.status == LOCK_ERROR, "fenced, a bare integer is an error");
}

static void test_contention(void)
{
    struct rig r;
    rig_init(&r, 1000, 0);
    open_ok(&r);
    enum rsn_act a = rsn_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = feed(&r, R(RSM_INTEGER, 400, NULL), T0);
    CHECK(a == RSN_SUBSCRIBE && strcmp(r.m.channel, "redisson_lock__channel:{k}") == 0 &&
              r.m.wake_at == T0 + 1000 * MS,
          "taken: subscribe to the lock's channel, for at most the budget");
    a = rsn_sm_subscribed(&r.m, T0 + 1 * MS);
    CHECK(sends(&r.m, a, (const char *[]){"EVALSHA", SHA_ACQ, "1", "k", "1000", "uuid:1", NULL}),
          "subscribed: try again (the release may have come before)");
    a = feed(&r, R(RSM_INTEGER, 300, NULL), T0 + 2 * MS);
    CHECK(a == RSN_WAIT && r.m.wake_at == T0 + 302 * MS,
          "taken again: wait for a message or the holder's PTTL (%lld)",
          (long long)(r.m.wake_at - T0));
    /* the holder's lease runs out: try again, no message */
    a = rsn_sm_timer(&r.m, T0 + 302 * MS);
    CHECK(a == RSN_SEND && strcmp(r.m.argv[0], "EVALSHA") == 0, "PTTL out: try again");
    a = feed(&r, R(RSM_INTEGER, 5000, NULL), T0 + 303 * MS);
    CHECK(a == RSN_WAIT && r.m.wake_at == T0 + 1000 * MS,
          "a PTTL beyond the budget: wait until the budget's end");
    /* the waiter times out by the budget, with no try after it */
    a = rsn_sm_timer(&r.m, T0 + 1000 * MS);
    CHECK(a == RSN_DONE && r.m.status == LOCK_TIMEOUT, "budget spent: timeout");
    CHECK(r.m.asked && r.m.holds == 0, "the driver leaves the channel; no hold");
    CHECK(r.stats.round_trips == 3 && r.stats.split_handoffs == 0 && r.stats.split_lost == 0,
          "3 tries, no handoff (%lld)", (long long)r.stats.round_trips);
    /* a subscription never confirmed: timeout at the budget */
    a = rsn_sm_acquire(&r.m, "k", 100 * MS, T0);
    a = feed(&r, R(RSM_INTEGER, 400, NULL), T0);
    a = rsn_sm_timer(&r.m, T0 + 100 * MS);
    CHECK(a == RSN_DONE && r.m.status == LOCK_TIMEOUT, "never subscribed: timeout");
    /* the run stops while waiting */
    a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, R(RSM_INTEGER, 400, NULL), T0);
    a = rsn_sm_subscribed(&r.m, T0);
    a = feed(&r, R(RSM_INTEGER, 400, NULL), T0);
    r.stop = 1;
    a = rsn_sm_timer(&r.m, T0 + 1 * MS);
    CHECK(a == RSN_DONE && r.m.status == LOCK_TIMEOUT, "stopping: timeout");
    /* an exhausted budget at the first refusal: no subscription at all */
    r.stop = 0;
    a = rsn_sm_acquire(&r.m, "k", 0, T0);
    a = feed(&r, R(RSM_INTEGER, 400, NULL), T0);
    CHECK(a == RSN_DONE && r.m.status == LOCK_TIMEOUT && !r.m.asked, "no budget: no subscribe");
}

static void test_message_wakes(void)
{
    struct rig r;
    rig_init(&r, 1000, 0);
    open_ok(&r);
    enum rsn_act a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, R(RSM_INTEGER, 900, NULL), T0);
    a = rsn_sm_subscribed(&r.m, T0 + 1 * MS);
    a = feed(&r, R(RSM_INTEGER, 900, NULL), T0 + 2 * MS);
    CHECK(a == RSN_WAIT, "waiting");
    /* released at T0+10 ms, message at T0+11, attempt sent at T0+12 */
    a = rsn_sm_message(&r.m, T0 + 10 * MS, T0 + 11 * MS, T0 + 12 * MS);
    CHECK(a == RSN_SEND && strcmp(r.m.argv[0], "EVALSHA") == 0, "a message wakes the waiter");
    a = feed(&r, R(RSM_INTEGER, 900, NULL), T0 + 13 * MS);
    CHECK(a == RSN_WAIT && r.stats.split_lost == 1, "beaten to it: a lost handoff, wait again");
    a = rsn_sm_message(&r.m, T0 + 20 * MS, T0 + 21 * MS, T0 + 23 * MS);
    a = feed(&r, R(RSM_NIL, 0, NULL), T0 + 24 * MS);
    CHECK(a == RSN_DONE && r.m.status == LOCK_GRANTED, "the next message's try wins");
    CHECK(r.stats.split_handoffs == 1 && r.stats.split_delivery_ns == 1 * MS &&
              r.stats.split_scheduling_ns == 2 * MS && r.stats.split_acquire_ns == 1 * MS,
          "the handoff split: 1 ms delivery, 2 ms scheduling, 1 ms acquire (%lld %lld %lld)",
          (long long)r.stats.split_delivery_ns, (long long)r.stats.split_scheduling_ns,
          (long long)r.stats.split_acquire_ns);
    CHECK(r.stats.lease_floor_ns == T0 + 1023 * MS, "lease floor from the woken try's send");
    /* a message while no wait is under way changes nothing */
    CHECK(rsn_sm_message(&r.m, 0, 0, T0) == RSN_DONE && r.m.status == LOCK_GRANTED,
          "a stray message is ignored");
}

static void test_reentrant(void)
{
    struct rig r;
    rig_init(&r, 0, 0); /* the watchdog */
    open_ok(&r);
    CHECK(r.m.watchdog && strcmp(r.m.lease, "30000") == 0, "no lease: the watchdog's 30 s");
    enum rsn_act a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, R(RSM_NIL, 0, NULL), T0);
    CHECK(a == RSN_DONE && r.m.holds == 1 && r.m.watch == RS_WATCH_ARM,
          "first hold: the watchdog is armed");
    r.m.watch = RS_WATCH_NONE;
    a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, R(RSM_NIL, 0, NULL), T0);
    CHECK(a == RSN_DONE && r.m.holds == 2 && r.m.watch == RS_WATCH_NONE,
          "nested hold: count 2, no second arming");
    a = rsn_sm_acquire(&r.m, "other", 5000 * MS, T0);
    CHECK(a == RSN_DONE && r.m.status == LOCK_ERROR && r.m.holds == 2,
          "another key while holding: an error (%s)", r.m.err.msg);
    a = rsn_sm_release(&r.m, "k", T0);
    CHECK(r.m.watch == RS_WATCH_NONE, "an inner release leaves the watchdog");
    a = feed(&r, R(RSM_INTEGER, 0, NULL), T0);
    CHECK(a == RSN_DONE && r.m.release == RELEASE_OK && r.m.holds == 1, "0: still held, count 1");
    a = rsn_sm_release(&r.m, "k", T0);
    CHECK(r.m.watch == RS_WATCH_DISARM, "the last release disarms before it is sent");
    r.m.watch = RS_WATCH_NONE;
    a = feed(&r, R(RSM_INTEGER, 1, NULL), T0);
    CHECK(a == RSN_DONE && r.m.release == RELEASE_OK && r.m.holds == 0, "1: released, count 0");
    /* the renewal comes from the machine: a second one, on its own connection */
    struct rsn_sm w;
    rsn_sm_init_renewal(&w, &r.m);
    long long trips = r.stats.round_trips;
    a = rsn_sm_renew(&w, "k", T0);
    CHECK(a == RSN_RECONNECT, "the renewal's own connection first");
    a = rsn_sm_reconnected(&w, true, NULL, T0);
    CHECK(a == RSN_SEND && w.argc == 6 && strcmp(w.argv[0], "EVALSHA") == 0 &&
              strcmp(w.argv[3], "k") == 0 && strcmp(w.argv[4], "30000") == 0 &&
              strcmp(w.argv[5], "uuid:1") == 0,
          "renewal: key, lease, owner");
    struct redis_sm_reply one = R(RSM_INTEGER, 1, NULL), zero = R(RSM_INTEGER, 0, NULL),
                     nil = R(RSM_NIL, 0, NULL);
    a = rsn_sm_reply(&w, &one, T0);
    CHECK(a == RSN_DONE && w.renewed == 1, "1: extended");
    a = rsn_sm_renew(&w, "k", T0);
    a = rsn_sm_reply(&w, &zero, T0);
    CHECK(a == RSN_DONE && w.renewed == 0, "0: no longer ours");
    a = rsn_sm_renew(&w, "k", T0);
    a = rsn_sm_reply(&w, &nil, T0);
    CHECK(a == RSN_DONE && w.renewed == -1, "anything else: an error");
    struct redis_sm_reply noscript = R(RSM_ERROR, 0, "NOSCRIPT No matching script.");
    a = rsn_sm_renew(&w, "k", T0);
    a = rsn_sm_reply(&w, &noscript, T0);
    CHECK(a == RSN_SEND && strcmp(w.argv[2], rsn_renew_lua) == 0, "NOSCRIPT: its reload");
    CHECK(r.stats.round_trips == trips, "renewals count no round trip");
}

static void test_not_owner(void)
{
    struct rig r;
    rig_init(&r, 0, 0);
    open_ok(&r);
    enum rsn_act a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, R(RSM_NIL, 0, NULL), T0);
    a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, R(RSM_NIL, 0, NULL), T0);
    r.m.watch = RS_WATCH_NONE;
    /* the lease ran out: the nested release finds it gone */
    a = rsn_sm_release(&r.m, "k", T0);
    a = feed(&r, R(RSM_NIL, 0, NULL), T0);
    CHECK(a == RSN_DONE && r.m.release == RELEASE_NOT_OWNER, "nil: not the owner");
    CHECK(r.m.holds == 0 && r.m.watch == RS_WATCH_DISARM,
          "gone from Redis: every hold is dropped, the watchdog disarmed");
    a = rsn_sm_release(&r.m, "k", T0);
    a = feed(&r, R(RSM_STATUS, 0, "OK"), T0);
    CHECK(a == RSN_DONE && r.m.release == RELEASE_ERROR, "an unexpected answer is an error");
}

/* Divergence: the command connection lost under a command. The blocking
 * form resent once, the group failed: both resend once now. */
static void test_lost_connection(void)
{
    struct rig r;
    rig_init(&r, 1000, 0);
    open_ok(&r);
    enum rsn_act a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = rsn_sm_lost(&r.m, "Connection reset by peer", T0);
    CHECK(a == RSN_RECONNECT, "lost: a new connection");
    a = rsn_sm_reconnected(&r.m, true, NULL, T0);
    CHECK(sends(&r.m, a, (const char *[]){"EVALSHA", SHA_ACQ, "1", "k", "1000", "uuid:1", NULL}),
          "... and the same try once more");
    a = feed(&r, R(RSM_NIL, 0, NULL), T0);
    CHECK(a == RSN_DONE && r.m.status == LOCK_GRANTED, "granted on the new connection");
    a = rsn_sm_release(&r.m, "k", T0);
    a = rsn_sm_lost(&r.m, "Connection reset by peer", T0);
    a = rsn_sm_reconnected(&r.m, true, NULL, T0);
    a = rsn_sm_lost(&r.m, "Connection reset by peer", T0);
    CHECK(a == RSN_DONE && r.m.release == RELEASE_ERROR && strstr(r.m.err.msg, "reset"),
          "lost twice: an error (%s)", r.m.err.msg);
    CHECK(r.m.holds == 0, "a failed release gives the hold up");
    a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(a == RSN_RECONNECT, "the next operation starts on a new connection");
    struct lab_err e;
    lab_err_set(&e, 111, "cannot connect");
    a = rsn_sm_reconnected(&r.m, false, &e, T0);
    CHECK(a == RSN_DONE && r.m.status == LOCK_ERROR && strcmp(r.m.err.msg, "cannot connect") == 0,
          "no connection: an error with its reason");
}

/* Divergence: READONLY / NOREPLICAS. The blocking form found the master
 * anew and resent, the group failed: both do the former now. */
static void test_readonly(void)
{
    struct rig r;
    rig_init(&r, 1000, 0);
    open_ok(&r);
    enum rsn_act a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, R(RSM_ERROR, 0, "READONLY You can't write against a read only replica."), T0);
    CHECK(a == RSN_RECONNECT, "READONLY: find the master anew");
    a = rsn_sm_reconnected(&r.m, true, NULL, T0);
    CHECK(a == RSN_SEND && strcmp(r.m.argv[0], "EVALSHA") == 0, "... and send once more");
    a = feed(&r, R(RSM_ERROR, 0, "NOREPLICAS Not enough good replicas to write."), T0);
    CHECK(a == RSN_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "NOREPLICAS"),
          "the wrong server twice: an error (%s)", r.m.err.msg);
    a = rsn_sm_release(&r.m, "k", T0);
    CHECK(a == RSN_RECONNECT, "and the next operation looks for the master again");
    a = rsn_sm_reconnected(&r.m, true, NULL, T0);
    a = feed(&r, R(RSM_ERROR, 0, "ERR something else"), T0);
    CHECK(a == RSN_DONE && r.m.release == RELEASE_ERROR, "another error reply fails at once");
}

/* NOSCRIPT: SCRIPT LOAD, then EVALSHA again, once an operation. */
static void test_noscript(void)
{
    struct rig r;
    rig_init(&r, 1000, 0);
    open_ok(&r);
    enum rsn_act a = rsn_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, R(RSM_ERROR, 0, "NOSCRIPT No matching script."), T0);
    CHECK(a == RSN_SEND && strcmp(r.m.argv[0], "SCRIPT") == 0 &&
              strcmp(r.m.argv[2], rsn_acquire_lua) == 0,
          "NOSCRIPT: load the acquire script");
    a = feed(&r, R(RSM_STRING, 0, "3333333333333333333333333333333333333333"), T0 + 1 * MS);
    CHECK(sends(&r.m, a, (const char *[]){"EVALSHA", "3333333333333333333333333333333333333333",
                                          "1", "k", "1000", "uuid:1", NULL}),
          "then EVALSHA with the new SHA1");
    a = feed(&r, R(RSM_NIL, 0, NULL), T0 + 2 * MS);
    CHECK(a == RSN_DONE && r.m.status == LOCK_GRANTED &&
              r.stats.lease_floor_ns == T0 + 1001 * MS,
          "granted; the floor from the resend (%lld)", (long long)r.stats.lease_floor_ns);
    a = rsn_sm_release(&r.m, "k", T0);
    a = feed(&r, R(RSM_ERROR, 0, "NOSCRIPT No matching script."), T0);
    CHECK(a == RSN_SEND && strcmp(r.m.argv[2], rsn_release_lua) == 0, "release: its script");
    a = feed(&r, R(RSM_STRING, 0, SHA_REL), T0);
    CHECK(a == RSN_SEND && strcmp(r.m.argv[1], SHA_REL) == 0, "then the release again");
    a = feed(&r, R(RSM_ERROR, 0, "NOSCRIPT No matching script."), T0);
    CHECK(a == RSN_DONE && r.m.release == RELEASE_ERROR, "lost again at once: an error");
}

/* Divergence: the pub/sub connection lost while waiting (and cut right
 * after a new one was made). The blocking form retried until its
 * deadline, the group failed every waiter: both subscribe again on a new
 * connection, then try the lock at once. */
static void test_ps_lost(void)
{
    struct rig r;
    rig_init(&r, 1000, 0);
    open_ok(&r);
    enum rsn_act a = rsn_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = feed(&r, R(RSM_INTEGER, 900, NULL), T0);
    a = rsn_sm_subscribed(&r.m, T0);
    a = feed(&r, R(RSM_INTEGER, 900, NULL), T0);
    CHECK(a == RSN_WAIT, "waiting");
    a = rsn_sm_ps_lost(&r.m, "Connection reset by peer", T0 + 5 * MS);
    CHECK(a == RSN_SUBSCRIBE && r.m.wake_at == T0 + 1000 * MS, "lost: subscribe again");
    a = rsn_sm_ps_lost(&r.m, "Connection reset by peer", T0 + 6 * MS);
    CHECK(a == RSN_SUBSCRIBE, "cut right after the new connection: again, while the wait lasts");
    long long before = r.stats.round_trips;
    a = rsn_sm_subscribed(&r.m, T0 + 7 * MS);
    CHECK(a == RSN_SEND && r.stats.round_trips == before + 1,
          "subscribed again: the lock is tried at once (the unlock may be lost)");
    a = feed(&r, R(RSM_NIL, 0, NULL), T0 + 8 * MS);
    CHECK(a == RSN_DONE && r.m.status == LOCK_GRANTED, "and granted");
    CHECK(r.stats.split_handoffs == 0, "a re-subscription is no woken handoff");
    /* lost at the end of the budget: a timeout, not an error */
    a = rsn_sm_release(&r.m, "k", T0);
    a = feed(&r, R(RSM_INTEGER, 1, NULL), T0);
    a = rsn_sm_acquire(&r.m, "k", 100 * MS, T0);
    a = feed(&r, R(RSM_INTEGER, 900, NULL), T0);
    a = rsn_sm_ps_lost(&r.m, "reset", T0 + 100 * MS);
    CHECK(a == RSN_DONE && r.m.status == LOCK_TIMEOUT, "lost with no budget left: timeout");
    /* no pub/sub connection can be made: an error */
    a = rsn_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = feed(&r, R(RSM_INTEGER, 900, NULL), T0);
    struct lab_err e;
    lab_err_set(&e, 111, "cannot connect to Redis (pub/sub)");
    a = rsn_sm_ps_failed(&r.m, &e, T0);
    CHECK(a == RSN_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "pub/sub"),
          "no pub/sub connection: an error (%s)", r.m.err.msg);
}

/* Divergence: an error reply on the pub/sub connection. The blocking
 * form failed the waiter, the group resubscribed: both fail it now, as
 * Redisson's subscribe fails on a server's error. */
static void test_ps_error(void)
{
    struct rig r;
    rig_init(&r, 1000, 0);
    open_ok(&r);
    enum rsn_act a = rsn_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = feed(&r, R(RSM_INTEGER, 900, NULL), T0);
    a = rsn_sm_ps_error(&r.m, "NOPERM this user has no permissions", T0);
    CHECK(a == RSN_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "NOPERM"),
          "an error reply while subscribing fails the acquire (%s)", r.m.err.msg);
    a = rsn_sm_acquire(&r.m, "k", 1000 * MS, T0);
    a = feed(&r, R(RSM_INTEGER, 900, NULL), T0);
    a = rsn_sm_subscribed(&r.m, T0);
    a = feed(&r, R(RSM_INTEGER, 900, NULL), T0);
    a = rsn_sm_ps_error(&r.m, "ERR boom", T0);
    CHECK(a == RSN_DONE && r.m.status == LOCK_ERROR, "... and while waiting");
    /* pub/sub events when no wait is under way change nothing */
    a = rsn_sm_acquire(&r.m, "k", 1000 * MS, T0);
    CHECK(rsn_sm_ps_error(&r.m, "ERR late", T0) == RSN_DONE && r.m.step == RS_TRY,
          "an event while trying is left to the next wait");
}

int main(void)
{
    test_grant();
    test_fenced();
    test_contention();
    test_message_wakes();
    test_reentrant();
    test_not_owner();
    test_lost_connection();
    test_readonly();
    test_noscript();
    test_ps_lost();
    test_ps_error();
    return check_done();
}
