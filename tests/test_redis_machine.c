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
 * the machine's. The designs that ran one process per client only
 * (check-then-set, get-del, wait, watchdog, reentrant, script) each have
 * their cases: their race kept, the before-del failpoint, WAIT's give-back,
 * the renewal's meaning and the hold count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "failpoint.h"
#include "redis_common.h"
#include "redis_machine.h"
#include "watchdog.h"

#define MS 1000000LL
#define T0 (1000 * MS) /* the scripted clock starts here */

static const char SHA_REL[] = "1111111111111111111111111111111111111111";
static const char SHA_FENCE[] = "2222222222222222222222222222222222222222";
static const char SHA_RENEW[] = "4444444444444444444444444444444444444444";

static const struct redis_sm_design LUA = {.kind = REDIS_SM_LUA, .name = "redis-lua"};
static const struct redis_sm_design SET_DEL = {.kind = REDIS_SM_SET_DEL, .name = "redis-set-del"};
static const struct redis_sm_design SETNX = {.kind = REDIS_SM_SETNX_EXPIRE,
                                             .name = "redis-setnx-expire"};

static void wait_setup(struct redis_sm *m)
{
    m->wait_replicas = 1;
    snprintf(m->wait_n, sizeof m->wait_n, "1");
    snprintf(m->wait_ms, sizeof m->wait_ms, "100");
}
static void script_setup(struct redis_sm *m)
{
    m->script[RSM_SC_ACQUIRE].src = "return 1";
    m->script[RSM_SC_RELEASE].src = "return 2";
    m->script[RSM_SC_RENEW].src = "return 3";
}
static const struct redis_sm_design CTS = {.kind = REDIS_SM_CHECK_THEN_SET,
                                           .name = "redis-check-then-set"};
static const struct redis_sm_design GET_DEL = {.kind = REDIS_SM_GET_DEL, .name = "redis-get-del"};
static const struct redis_sm_design WAIT = {.kind = REDIS_SM_WAIT, .name = "redis-wait",
                                            .setup = wait_setup};
static const struct redis_sm_design WATCHDOG = {.kind = REDIS_SM_WATCHDOG,
                                                .name = "redis-watchdog"};
static const struct redis_sm_design REENTRANT = {.kind = REDIS_SM_WATCHDOG,
                                                 .name = "redis-reentrant", .reentrant = true};
static const struct redis_sm_design SCRIPT = {.kind = REDIS_SM_SCRIPT, .name = "redis-script",
                                              .setup = script_setup};

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

/* Open to a connected, loaded machine: the scripts its design calls
 * (release, acquire, renew, in that order), else a PING. */
static void open_ok(struct rig *r)
{
    static const char *const sha[RSM_SCRIPTS] = {SHA_REL, SHA_FENCE, SHA_RENEW};
    enum redis_sm_act a = redis_sm_open(&r->m, T0);
    CHECK(a == REDIS_SM_RECONNECT, "the open connects first (act %d)", a);
    a = redis_sm_reconnected(&r->m, true, NULL, T0);
    int loads = 0;
    for (int i = 0; i < RSM_SCRIPTS; i++) {
        if (!r->m.script[i].src)
            continue;
        CHECK(a == REDIS_SM_SEND && strcmp(r->m.argv[1], "LOAD") == 0 &&
                  strcmp(r->m.argv[2], r->m.script[i].src) == 0,
              "the open loads script %d", i);
        a = feed(r, string(sha[i]), T0);
        loads++;
    }
    if (r->m.design->kind == REDIS_SM_LUA)
        CHECK(loads == 1 + r->env.fencing && r->m.script[RSM_SC_RELEASE].src ==
                  redis_compare_and_delete_lua && (!r->env.fencing ||
                  r->m.script[RSM_SC_ACQUIRE].src == redis_fenced_set_nx_px_lua),
              "redis-lua loads its release script, fenced its granting script too");
    if (loads == 0) {
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

/* redis-check-then-set keeps its race: EXISTS, SET, PEXPIRE as three
 * commands, the SET unconditional. */
static void test_check_then_set(void)
{
    struct rig r;
    rig_init(&r, &CTS, 0);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 15 * MS, T0);
    CHECK(sends(&r.m, a, (const char *[]){"EXISTS", "k", NULL}), "EXISTS first");
    a = feed(&r, integer(1), T0);
    CHECK(a == REDIS_SM_SLEEP && r.stats.polls == 1, "the key is there: taken, a poll");
    a = redis_sm_timer(&r.m, T0 + 10 * MS);
    a = feed(&r, integer(0), T0 + 10 * MS);
    CHECK(sends(&r.m, a, (const char *[]){"SET", "k", "tok", NULL}),
          "none: a plain SET, no NX (the race)");
    a = feed(&r, status(), T0 + 11 * MS);
    CHECK(sends(&r.m, a, (const char *[]){"PEXPIRE", "k", "1000", NULL}), "then PEXPIRE");
    a = feed(&r, integer(1), T0 + 12 * MS);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED && r.stats.round_trips == 4 &&
              r.stats.lease_floor_ns == T0 + 1010 * MS,
          "granted: 4 round trips, the floor from the attempt's EXISTS (%lld)",
          (long long)r.stats.round_trips);
    a = redis_sm_release(&r.m, "k", T0);
    CHECK(sends(&r.m, a, (const char *[]){"DEL", "k", NULL}), "released by DEL");
    a = feed(&r, integer(1), T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_OK, "deleted");
}

/* redis-get-del: GET, compare, DEL, the before-del failpoint between. */
static void test_get_del(void)
{
    struct rig r;
    rig_init(&r, &GET_DEL, 0);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 0, T0);
    CHECK(sends(&r.m, a, (const char *[]){"SET", "k", "tok", "NX", "PX", "1000", NULL}),
          "SET key token NX PX");
    a = feed(&r, status(), T0);
    a = redis_sm_release(&r.m, "k", T0);
    CHECK(sends(&r.m, a, (const char *[]){"GET", "k", NULL}), "release: GET first");
    a = feed(&r, string("other"), T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_NOT_OWNER, "another's: not owner, no DEL");
    a = redis_sm_release(&r.m, "k", T0);
    a = feed(&r, string("tok"), T0);
    CHECK(sends(&r.m, a, (const char *[]){"DEL", "k", NULL}), "ours, unarmed: DEL at once");
    a = feed(&r, integer(0), T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_NOT_OWNER, "gone meanwhile: not owner");

    CHECK(failpoint_arm("redis-get-del/before-del", 1) == 0, "armed");
    rig_init(&r, &GET_DEL, 0);
    open_ok(&r);
    a = redis_sm_release(&r.m, "k", T0);
    a = feed(&r, string("tok"), T0);
    CHECK(a == REDIS_SM_FAILPOINT && strcmp(r.m.fp->name, "redis-get-del/before-del") == 0,
          "armed: the failpoint between the GET and the DEL");
    a = redis_sm_resume(&r.m, T0);
    CHECK(sends(&r.m, a, (const char *[]){"DEL", "k", NULL}), "then the DEL");
    a = feed(&r, integer(1), T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_OK, "released");
    failpoint_disarm_all();
}

/* redis-wait: WAIT after the SET; too few replicas give the grant back. */
static void test_wait(void)
{
    struct rig r;
    rig_init(&r, &WAIT, 0);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, status(), T0);
    CHECK(sends(&r.m, a, (const char *[]){"WAIT", "1", "100", NULL}), "then WAIT 1 100");
    a = feed(&r, integer(1), T0 + 5 * MS);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED && r.stats.round_trips == 2 &&
              r.stats.lease_floor_ns == T0 + 1000 * MS,
          "acknowledged: granted, the floor from the SET");

    a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, status(), T0);
    a = feed(&r, integer(0), T0 + 100 * MS);
    CHECK(sends(&r.m, a, (const char *[]){"EVALSHA", SHA_REL, "1", "k", "tok", "1000", NULL}),
          "too few: the grant given back by the compare-and-delete");
    a = feed(&r, integer(1), T0 + 101 * MS);
    CHECK(a == REDIS_SM_SLEEP && r.stats.unreplicated == 1 && r.stats.polls == 1,
          "then a pause, as if taken; counted unreplicated");

    /* WAIT's connection lost: not resent, the grant given back anew */
    a = redis_sm_timer(&r.m, T0 + 200 * MS);
    a = feed(&r, status(), T0 + 200 * MS);
    a = redis_sm_lost(&r.m, "Connection reset by peer", T0 + 201 * MS);
    CHECK(a == REDIS_SM_RECONNECT, "lost: a new connection");
    a = redis_sm_reconnected(&r.m, true, NULL, T0 + 202 * MS);
    CHECK(a == REDIS_SM_SEND && strcmp(r.m.argv[0], "EVALSHA") == 0,
          "... for the give-back, not for WAIT again");
    a = feed(&r, err_reply("ERR whatever"), T0 + 203 * MS);
    CHECK(a == REDIS_SM_SLEEP && r.stats.unreplicated == 2,
          "a failed give-back leaves the attempt taken");

    /* an error from WAIT: give back, then the error */
    a = redis_sm_timer(&r.m, T0 + 300 * MS);
    a = feed(&r, status(), T0 + 300 * MS);
    a = feed(&r, err_reply("ERR WAIT cannot be used with replica instances"), T0 + 301 * MS);
    CHECK(a == REDIS_SM_SEND && strcmp(r.m.argv[0], "EVALSHA") == 0, "error: give back first");
    a = feed(&r, integer(1), T0 + 302 * MS);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "WAIT cannot"),
          "then WAIT's error (%s)", r.m.err.msg);
}

/* redis-watchdog: the machine arms the renewal at a grant, disarms it
 * before the release; a renewal is a second machine's, read here once. */
static void test_watchdog(void)
{
    struct rig r;
    rig_init(&r, &WATCHDOG, 0);
    open_ok(&r);
    CHECK(redis_sm_renews(&r.m) && r.m.script[RSM_SC_RENEW].src == redis_compare_and_pexpire_lua,
          "it renews with the compare-and-pexpire");
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(r.m.watch == RSM_WATCH_NONE, "nothing to watch before the grant");
    a = feed(&r, status(), T0);
    CHECK(a == REDIS_SM_DONE && r.m.watch == RSM_WATCH_ARM, "granted: arm the renewal");
    r.m.watch = RSM_WATCH_NONE;

    struct redis_sm w;
    redis_sm_init_renewal(&w, &r.m);
    long long trips = r.stats.round_trips;
    a = redis_sm_renew(&w, "k", T0);
    CHECK(a == REDIS_SM_RECONNECT, "the renewal's own connection first");
    a = redis_sm_reconnected(&w, true, NULL, T0);
    CHECK(sends(&w, a, (const char *[]){"EVALSHA", SHA_RENEW, "1", "k", "tok", "1000", NULL}),
          "the renew script by SHA1");
    struct redis_sm_reply one = integer(1), zero = integer(0);
    a = redis_sm_reply(&w, &one, T0);
    CHECK(a == REDIS_SM_DONE && w.renewed == 1, "1: extended");
    a = redis_sm_renew(&w, "k", T0);
    a = redis_sm_reply(&w, &zero, T0);
    CHECK(a == REDIS_SM_DONE && w.renewed == 0, "0: no longer ours");
    a = redis_sm_renew(&w, "k", T0);
    a = redis_sm_lost(&w, "reset", T0);
    a = redis_sm_reconnected(&w, true, NULL, T0);
    a = redis_sm_lost(&w, "reset", T0);
    CHECK(a == REDIS_SM_DONE && w.renewed == -1, "lost twice: failed");
    CHECK(r.stats.round_trips == trips, "renewals count no round trip");

    struct watch_plan p;
    watch_plan_init(&p, 1000 * MS);
    watch_plan_arm(&p, T0);
    CHECK(watch_plan_next(&p, T0) == T0 + 333 * MS + 333333, "renew every lease/3");
    CHECK(watch_plan_renewed(&p, 1, T0, T0, &r.stats) && r.stats.renewals == 1, "extended: on");
    CHECK(watch_plan_renewed(&p, -1, T0, T0, &r.stats) &&
              watch_plan_next(&p, T0) == T0 + 50 * MS,
          "failed: retried lease/20 later");
    CHECK(!watch_plan_renewed(&p, 0, T0, T0, &r.stats) && r.stats.renewal_failures == 2,
          "renewal lost (0): renewed no more");

    a = redis_sm_release(&r.m, "k", T0);
    CHECK(a == REDIS_SM_SEND && r.m.watch == RSM_WATCH_DISARM, "release: disarm before sending");
}

/* redis-reentrant: nested holds are local, only the last release goes. */
static void test_reentrant(void)
{
    struct rig r;
    rig_init(&r, &REENTRANT, 1);
    open_ok(&r);
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = feed(&r, integer(3), T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED && r.m.watch == RSM_WATCH_ARM &&
              r.stats.fence_token == 3,
          "the outer grant, fenced, armed");
    r.m.watch = RSM_WATCH_NONE;
    long long trips = r.stats.round_trips;
    a = redis_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED && r.m.holds == 2 &&
              r.stats.round_trips == trips && r.m.watch == RSM_WATCH_NONE,
          "nested: granted at once, no round trip");
    a = redis_sm_release(&r.m, "k", T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_OK && r.m.holds == 1 &&
              r.m.watch == RSM_WATCH_NONE && r.stats.round_trips == trips,
          "the nested release: local, the renewal kept");
    a = redis_sm_release(&r.m, "k", T0);
    CHECK(sends(&r.m, a, (const char *[]){"EVALSHA", SHA_REL, "1", "k", "tok", "1000", NULL}) &&
              r.m.watch == RSM_WATCH_DISARM && r.m.holds == 0,
          "the last: disarm, compare-and-delete");
}

/* redis-script: the scenario's scripts, their answers read as documented. */
static void test_script(void)
{
    struct rig r;
    rig_init(&r, &SCRIPT, 0);
    open_ok(&r);
    CHECK(redis_sm_renews(&r.m), "a renew script: a watchdog");
    enum redis_sm_act a = redis_sm_acquire(&r.m, "k", 0, T0);
    CHECK(sends(&r.m, a, (const char *[]){"EVALSHA", SHA_FENCE, "1", "k", "tok", "1000", NULL}),
          "the user's acquire: KEYS[1] key, ARGV token, ttl");
    a = feed(&r, integer(2), T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_TIMEOUT, "only 1 is a grant");
    a = redis_sm_acquire(&r.m, "k", 0, T0);
    a = feed(&r, err_reply("NOSCRIPT No matching script. Please use EVAL."), T0);
    CHECK(a == REDIS_SM_SEND && strcmp(r.m.argv[2], "return 1") == 0, "NOSCRIPT: its reload");
    a = feed(&r, string(SHA_FENCE), T0);
    a = feed(&r, err_reply("READONLY You can't write against a read only replica."), T0);
    CHECK(a == REDIS_SM_RECONNECT, "READONLY: the master anew");
    a = redis_sm_reconnected(&r.m, true, NULL, T0);
    a = feed(&r, integer(1), T0);
    CHECK(a == REDIS_SM_DONE && r.m.status == LOCK_GRANTED && r.stats.lease_floor_ns == 0 &&
              r.m.watch == RSM_WATCH_ARM,
          "1: granted, no lease floor claimed, renewal armed");
    a = feed(&r, integer(1), T0);
    a = redis_sm_release(&r.m, "k", T0);
    a = feed(&r, err_reply("ERR user_script:1: boom"), T0);
    CHECK(a == REDIS_SM_DONE && r.m.release == RELEASE_ERROR && strstr(r.m.err.msg, "boom"),
          "a script failing at run time: an error of the operation");
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
    test_check_then_set();
    test_get_del();
    test_wait();
    test_watchdog();
    test_reentrant();
    test_script();
    return check_done();
}
