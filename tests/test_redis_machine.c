/*
 * test_redis_machine.c - the simple Redis designs' state machine
 * (impls/redis/redis_machine.c) fed scripted events: no server, no clock.
 *
 * Each case plays what a server and a connection would do (a reply, a
 * broken connection, a demoted master, a flushed script cache, a failpoint)
 * and checks what the design sends and decides. The decisions that the
 * blocking and the grouped forms once made differently (issue 31) are each
 * a case here, with the behaviour both modes now share: a lost connection
 * resends once on a new one, READONLY finds the master anew and resends
 * once, NOSCRIPT loads the script and sends EVALSHA again, the fenced
 * grant resends like the plain one, the after-setnx failpoint is an act of
 * the machine's.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "failpoint.h"
#include "redis_common.h"
#include "redis_machine.h"

#define MS 1000000LL
#define T0 (1000 * MS) /* the scripted clock starts here */

static const char SHA_REL[] = "1111111111111111111111111111111111111111";
static const char SHA_FENCE[] = "2222222222222222222222222222222222222222";

static const struct redis_sm_design LUA = {.kind = REDIS_SM_LUA, .name = "redis-lua"};
static const struct redis_sm_design SET_DEL = {.kind = REDIS_SM_SET_DEL, .name = "redis-set-del"};
static const struct redis_sm_design SETNX = {.kind = REDIS_SM_SETNX_EXPIRE,
                                             .name = "redis-setnx-expire"};

struct rig {
    struct redis_sm m;
    struct lock_env env;
    struct lock_stats stats;
    struct lock_servers sv;
    int stop;
};

static void rig_init(struct rig *r, const struct redis_sm_design *d, int fencing)
{
    memset(r, 0, sizeof *r);
    r->env.servers = &r->sv;
    r->env.ttl_ns = 1000 * MS;
    r->env.retry_interval_ns = 10 * MS;
    r->env.stop = &r->stop;
    r->env.stats = &r->stats;
    r->env.fencing = fencing;
    redis_sm_init(&r->m, d, &r->env, "tok");
}

static struct redis_sm_reply status(void)
{
    return (struct redis_sm_reply){.type = RSM_STATUS, .str = "OK", .len = 2};
}
static struct redis_sm_reply integer(long long n)
{
    return (struct redis_sm_reply){.type = RSM_INTEGER, .integer = n};
}
static struct redis_sm_reply nil(void)
{
    return (struct redis_sm_reply){.type = RSM_NIL};
}
static struct redis_sm_reply string(const char *s)
{
    return (struct redis_sm_reply){.type = RSM_STRING, .str = s, .len = strlen(s)};
}
static struct redis_sm_reply err_reply(const char *s)
{
    return (struct redis_sm_reply){.type = RSM_ERROR, .str = s, .len = strlen(s)};
}

/* The command the machine asks to send is argv (NULL-terminated). */
static int sends(const struct redis_sm *m, enum redis_sm_act act, const char *const *argv)
{
    if (act != REDIS_SM_SEND)
        return 0;
    int n = 0;
    for (; argv[n]; n++)
        if (n >= m->argc || strcmp(m->argv[n], argv[n]) != 0)
            return 0;
    return n == m->argc;
}

static enum redis_sm_act feed(struct rig *r, struct redis_sm_reply rep, int64_t now)
{
    return redis_sm_reply(&r->m, &rep, now);
}

/* Open to a connected, loaded machine (redis-lua loads its scripts). */
static void open_ok(struct rig *r)
{
    enum redis_sm_act a = redis_sm_open(&r->m, T0);
    CHECK(a == REDIS_SM_RECONNECT, "the open connects first (act %d)", a);
    a = redis_sm_reconnected(&r->m, true, NULL, T0);
    if (r->m.design->kind == REDIS_SM_LUA) {
        CHECK(a == REDIS_SM_SEND && strcmp(r->m.argv[1], "LOAD") == 0 &&
                  strcmp(r->m.argv[2], redis_compare_and_delete_lua) == 0,
              "redis-lua loads its release script");
        a = feed(r, string(SHA_REL), T0);
        if (r->env.fencing) {
            CHECK(a == REDIS_SM_SEND && strcmp(r->m.argv[2], redis_fenced_set_nx_px_lua) == 0,
                  "fenced, it loads the granting script too");
            a = feed(r, string(SHA_FENCE), T0);
        }
    } else {
        CHECK(sends(&r->m, a, (const char *[]){"PING", NULL}), "no script: a PING");
        a = feed(r, status(), T0);
    }
    CHECK(a == REDIS_SM_DONE && r->m.open_rc == 0, "opened");
    CHECK(r->stats.round_trips == 0, "the open counts no round trip");
}

static void test_grant(void)
{
    struct rig r;
    rig_init(&r, &LUA, 0);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(sends(&r.m, a, (const char *[]){"SET", "k", "tok", "NX", "PX", "1000", NULL}),
          "redis-lua: SET key token NX PX ttl");
    a = feed(&r, status(), T0 + 1 * MS);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED, "OK is a grant");
    CHECK(r.stats.lease_floor_ns == T0 + 1000 * MS, "the lease floor is sent + ttl (%lld)",
          (long long)r.stats.lease_floor_ns);
    CHECK(r.stats.round_trips == 1 && r.stats.polls == 0, "one round trip, no poll");
    a = redis_sm_release(&r.m, "k", T0 + 2 * MS);
    CHECK(sends(&r.m, a, (const char *[]){"EVALSHA", SHA_REL, "1", "k", "tok", "1000", NULL}),
          "release: the compare-and-delete by SHA1");
    a = feed(&r, integer(1), T0 + 3 * MS);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_OK, "1: released");
    a = redis_sm_release(&r.m, "k", T0 + 4 * MS);
    a = feed(&r, integer(0), T0 + 5 * MS);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_NOT_OWNER, "0: not ours");
}

static void test_contention(void)
{
    struct rig r;
    rig_init(&r, &SET_DEL, 0);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 25 * MS, T0);
    CHECK(sends(&r.m, a, (const char *[]){"SET", "k", "locked", "NX", "PX", "1000", NULL}),
          "redis-set-del: SET key constant NX PX ttl");
    a = feed(&r, nil(), T0);
    CHECK(a == REDIS_SM_SLEEP && r.m.wake_at == T0 + 10 * MS, "taken: pause retry_interval");
    a = redis_sm_timer(&r.m, T0 + 10 * MS);
    CHECK(a == REDIS_SM_SEND && strcmp(r.m.argv[0], "SET") == 0, "then try again");
    a = feed(&r, nil(), T0 + 10 * MS);
    a = redis_sm_timer(&r.m, T0 + 20 * MS);
    a = feed(&r, nil(), T0 + 20 * MS);
    CHECK(a == REDIS_SM_SLEEP && r.m.wake_at == T0 + 25 * MS, "the last pause ends with the budget");
    a = redis_sm_timer(&r.m, T0 + 25 * MS);
    a = feed(&r, nil(), T0 + 25 * MS);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_TIMEOUT, "budget spent: timeout, not error");
    CHECK(r.stats.polls == 4 && r.stats.round_trips == 4, "4 polls, 4 round trips (%lld, %lld)",
          (long long)r.stats.polls, (long long)r.stats.round_trips);
    /* the run stops during a pause: timeout at once */
    a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, nil(), T0);
    r.stop = 1;
    a = redis_sm_timer(&r.m, T0 + 1 * MS);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_TIMEOUT, "stopping: timeout");
    r.stop = 0;
    a = redis_sm_release(&r.m, "k", T0);
    CHECK(sends(&r.m, a, (const char *[]){"DEL", "k", NULL}), "redis-set-del releases by DEL");
    a = feed(&r, integer(0), T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_NOT_OWNER, "no key deleted: not owner");
}

/* Divergence: a connection lost under a command. Blocking resent once on
 * a new connection, the group failed. Now both resend once. */
static void test_lost_connection(void)
{
    struct rig r;
    rig_init(&r, &LUA, 0);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = redis_sm_lost(&r.m, "Connection reset by peer", T0);
    CHECK(a == REDIS_SM_RECONNECT, "lost: a new connection");
    a = redis_sm_reconnected(&r.m, true, NULL, T0);
    CHECK(sends(&r.m, a, (const char *[]){"SET", "k", "tok", "NX", "PX", "1000", NULL}),
          "... and the same command once more");
    a = feed(&r, status(), T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED, "granted on the new connection");
    CHECK(r.stats.round_trips == 2, "both sends count (%lld)", (long long)r.stats.round_trips);

    a = redis_sm_release(&r.m, "k", T0);
    a = redis_sm_lost(&r.m, "Connection reset by peer", T0);
    a = redis_sm_reconnected(&r.m, true, NULL, T0);
    a = redis_sm_lost(&r.m, "Connection reset by peer", T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_ERROR &&
              strstr(r.m.err.msg, "Connection reset"),
          "lost twice: an error, with the reason (%s)", r.m.err.msg);
    a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(a == REDIS_SM_RECONNECT, "the next operation starts on a new connection");
    struct lab_err e;
    lab_err_set(&e, 111, "cannot connect to Redis at 127.0.0.1:1: refused");
    a = redis_sm_reconnected(&r.m, false, &e, T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "cannot connect"),
          "no connection to be had: an error saying so");
}

/* Divergence: a master demoted by a failover (READONLY, NOREPLICAS).
 * Blocking dropped the connection and asked the sentinels, the group
 * failed. Now both find the master anew and resend once. */
static void test_demoted_master(void)
{
    struct rig r;
    rig_init(&r, &LUA, 0);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, err_reply("READONLY You can't write against a read only replica."), T0);
    CHECK(a == REDIS_SM_RECONNECT, "READONLY: the wrong server, find the master");
    a = redis_sm_reconnected(&r.m, true, NULL, T0);
    CHECK(a == REDIS_SM_SEND && strcmp(r.m.argv[0], "SET") == 0, "resent to the new master");
    a = feed(&r, status(), T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED, "granted by the new master");

    a = redis_sm_release(&r.m, "k", T0);
    a = feed(&r, err_reply("NOREPLICAS Not enough good replicas to write."), T0);
    CHECK(a == REDIS_SM_RECONNECT, "NOREPLICAS: likewise");
    a = redis_sm_reconnected(&r.m, true, NULL, T0);
    a = feed(&r, err_reply("NOREPLICAS Not enough good replicas to write."), T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_ERROR && strstr(r.m.err.msg, "NOREPLICAS"),
          "twice: an error (%s)", r.m.err.msg);
    a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(a == REDIS_SM_RECONNECT, "the next operation looks for the master again");
}

/* Divergence: NOSCRIPT (a server restarted empty). Blocking loaded the
 * script and sent EVALSHA again, the group sent EVAL with the source.
 * Now both load and resend EVALSHA, as redis-py's Script does. */
static void test_noscript(void)
{
    struct rig r;
    rig_init(&r, &LUA, 0);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_release(&r.m, "k", T0);
    a = feed(&r, err_reply("NOSCRIPT No matching script. Please use EVAL."), T0);
    CHECK(a == REDIS_SM_SEND && strcmp(r.m.argv[0], "SCRIPT") == 0 &&
              strcmp(r.m.argv[2], redis_compare_and_delete_lua) == 0,
          "NOSCRIPT: SCRIPT LOAD of the script that was lost");
    static const char sha2[] = "3333333333333333333333333333333333333333";
    a = feed(&r, string(sha2), T0);
    CHECK(sends(&r.m, a, (const char *[]){"EVALSHA", sha2, "1", "k", "tok", "1000", NULL}),
          "then EVALSHA again, by the new SHA1, never EVAL");
    a = feed(&r, integer(1), T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_OK, "released");
    a = redis_sm_release(&r.m, "k", T0);
    a = feed(&r, err_reply("NOSCRIPT No matching script. Please use EVAL."), T0);
    a = feed(&r, string(sha2), T0);
    a = feed(&r, err_reply("NOSCRIPT No matching script. Please use EVAL."), T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_ERROR, "lost again at once: an error");
    a = redis_sm_release(&r.m, "k", T0);
    a = feed(&r, err_reply("ERR wrong number of arguments"), T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_ERROR &&
              strcmp(r.m.err.msg, "redis: ERR wrong number of arguments") == 0,
          "any other error: the operation fails with the server's text (%s)", r.m.err.msg);
}

/* Divergence: blocking fenced redis-lua skipped the resend its unfenced
 * SET got. Now the granting script resends as the SET does. */
static void test_fenced(void)
{
    struct rig r;
    rig_init(&r, &LUA, 1);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(sends(&r.m, a,
                (const char *[]){"EVALSHA", SHA_FENCE, "2", "k", "k:fence", "tok", "1000", NULL}),
          "fenced: the granting script over the lock and its counter");
    a = redis_sm_lost(&r.m, "Connection reset by peer", T0);
    a = redis_sm_reconnected(&r.m, true, NULL, T0);
    CHECK(a == REDIS_SM_SEND && strcmp(r.m.argv[1], SHA_FENCE) == 0, "resent after a loss");
    a = feed(&r, integer(7), T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED && r.stats.fence_token == 7,
          "the counter is the token (%lld)", (long long)r.stats.fence_token);
    a = redis_sm_acquire(&r.m, "k", 0, T0);
    a = feed(&r, integer(0), T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_TIMEOUT && r.stats.fence_token == 7,
          "0: taken; the token stays the last grant's");
}

/* The after-setnx failpoint is the machine's act: each driver hits it in
 * its own way, both between the SETNX that won and the PEXPIRE. */
static void test_setnx_failpoint(void)
{
    struct rig r;
    rig_init(&r, &SETNX, 0);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(sends(&r.m, a, (const char *[]){"SETNX", "k", "tok", NULL}), "SETNX key token");
    a = feed(&r, integer(1), T0);
    CHECK(sends(&r.m, a, (const char *[]){"PEXPIRE", "k", "1000", NULL}),
          "won, unarmed: PEXPIRE at once");
    a = feed(&r, integer(1), T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED, "granted after the PEXPIRE");

    CHECK(failpoint_arm("redis-setnx-expire/after-setnx", 1) == 0, "armed");
    rig_init(&r, &SETNX, 0);
    open_ok(&r);
    a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, integer(1), T0);
    CHECK(a == REDIS_SM_FAILPOINT && r.m.fp && strcmp(r.m.fp->name,
                                                      "redis-setnx-expire/after-setnx") == 0,
          "armed: the failpoint between the two commands");
    a = redis_sm_resume(&r.m, T0);
    CHECK(sends(&r.m, a, (const char *[]){"PEXPIRE", "k", "1000", NULL}), "then the PEXPIRE");
    a = feed(&r, integer(0), T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED,
          "a PEXPIRE on a key gone meanwhile still ends the grant the SETNX won");
    a = redis_sm_acquire(&r.m, "k", 0, T0);
    a = feed(&r, integer(0), T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_TIMEOUT, "SETNX 0: taken");
    failpoint_disarm_all();
}

/* A reply with nothing in flight (one a driver should never feed: a
 * command that timed out dropped its connection) changes nothing. */
static void test_stray_reply(void)
{
    struct rig r;
    rig_init(&r, &LUA, 0);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, status(), T0);
    CHECK(r.m.status == LOCK_GRANTED, "granted");
    a = feed(&r, err_reply("ERR late"), T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED && r.m.release == RELEASE_OK &&
              r.m.op == RSM_OP_NONE,
          "a stray reply is ignored");
}

int main(void)
{
    test_grant();
    test_contention();
    test_lost_connection();
    test_demoted_master();
    test_noscript();
    test_fenced();
    test_setnx_failpoint();
    test_stray_reply();
    return check_done();
}
