/*
 * test_redlock_machine.c - redlock's state machine
 * (impls/redis/redlock_machine.c) fed scripted rounds: no server, no
 * clock, tokens from a counter.
 *
 * Each case plays what N masters answer (or fail to) in each fan-out and
 * checks what the algorithm sends and decides: the open's quorum of
 * loaded scripts, a grant by majority within validity and its lease floor,
 * a split vote unlocked and paused, validity spent, a budget spent as a
 * timeout or (no quorum ever answered) an error, a master restarted under
 * a command resent once in a second round, an error reply counted as a
 * failed master to drop, a reconnected master's script load, the
 * best-effort release, and the sentinel topology refused.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "redlock_machine.h"

#define MS 1000000LL
#define T0 (1000 * MS)

static const char SHA[] = "4444444444444444444444444444444444444444";
static int tokens;

static int counter_token(char out[33], struct lab_err *err)
{
    (void)err;
    snprintf(out, 33, "token%027d", ++tokens);
    return 0;
}

struct rig {
    struct rl_sm m;
    struct lock_env env;
    struct lock_stats stats;
    struct lock_servers sv;
    int stop;
};

static int rig_init(struct rig *r, int n, struct lab_err *err)
{
    memset(r, 0, sizeof *r);
    r->sv.n = n;
    for (int i = 0; i < n; i++) {
        snprintf(r->sv.node[i].host, sizeof r->sv.node[i].host, "127.0.0.1");
        r->sv.node[i].port = 7000 + i;
    }
    r->env.servers = &r->sv;
    r->env.ttl_ns = 1000 * MS;
    r->env.retry_interval_ns = 10 * MS;
    r->env.stop = &r->stop;
    r->env.stats = &r->stats;
    tokens = 0;
    return rl_sm_init(&r->m, &r->env, counter_token, err);
}

static struct redis_sm_reply status(void)
{
    return (struct redis_sm_reply){.type = RSM_STATUS, .str = "OK", .len = 2};
}
static struct redis_sm_reply nil(void)
{
    return (struct redis_sm_reply){.type = RSM_NIL};
}
static struct redis_sm_reply integer(long long v)
{
    return (struct redis_sm_reply){.type = RSM_INTEGER, .integer = v};
}
static struct redis_sm_reply string(const char *s)
{
    return (struct redis_sm_reply){.type = RSM_STRING, .str = s, .len = strlen(s)};
}
static struct redis_sm_reply err_reply(const char *s)
{
    return (struct redis_sm_reply){.type = RSM_ERROR, .str = s, .len = strlen(s)};
}

/* Every master in the round answers rep; returns the next act at now. */
static enum rl_act all_answer(struct rig *r, struct redis_sm_reply rep, int64_t now)
{
    for (int i = 0; i < r->m.p.n; i++)
        if (r->m.mask & (1u << i))
            rl_sm_master(&r->m, i, RL_ANSWERED, &rep, NULL);
    return rl_sm_round_done(&r->m, now);
}

static void open_ok(struct rig *r)
{
    enum rl_act a = rl_sm_open(&r->m, T0);
    CHECK(a == RL_FANOUT && strcmp(r->m.argv[0], "SCRIPT") == 0 &&
              r->m.mask == (1u << r->m.p.n) - 1,
          "the open loads the script on every master");
    a = all_answer(r, string(SHA), T0);
    CHECK(a == RL_DONE && r->m.open_rc == 0 && strcmp(r->m.sha, SHA) == 0, "opened");
}

static void test_open(void)
{
    struct rig r;
    struct lab_err err = {0};
    CHECK(rig_init(&r, 5, &err) == 0, "five masters");
    CHECK(r.m.p.quorum == 3, "quorum 3 of 5");
    enum rl_act a = rl_sm_open(&r.m, T0);
    struct redis_sm_reply sha = string(SHA);
    rl_sm_master(&r.m, 0, RL_ANSWERED, &sha, NULL);
    rl_sm_master(&r.m, 1, RL_ANSWERED, &sha, NULL);
    CHECK(rl_sm_master(&r.m, 2, RL_FAILED, NULL, "Connection refused"),
          "a failed master: drop it");
    rl_sm_master(&r.m, 3, RL_FAILED, NULL, "Connection refused");
    struct redis_sm_reply bad = status();
    CHECK(rl_sm_master(&r.m, 4, RL_ANSWERED, &bad, NULL), "no SHA1: a failed master");
    a = rl_sm_round_done(&r.m, T0);
    CHECK(a == RL_DONE && r.m.open_rc == -1 && strstr(r.m.err.msg, "only 2 of 5"),
          "2 of 5 loaded: the open fails (%s)", r.m.err.msg);
    struct lock_servers sv = {.n = 3};
    snprintf(sv.sentinel_master, sizeof sv.sentinel_master, "mymaster");
    r.env.servers = &sv;
    struct rl_sm m2;
    CHECK(rl_sm_init(&m2, &r.env, counter_token, &err) != 0 && strstr(err.msg, "sentinels"),
          "sentinels are refused in either mode (%s)", err.msg);
}

static void test_grant(void)
{
    struct rig r;
    struct lab_err err = {0};
    rig_init(&r, 5, &err);
    open_ok(&r);
    enum rl_act a = rl_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(a == RL_FANOUT && r.m.argc == 6 && strcmp(r.m.argv[0], "SET") == 0 &&
              strcmp(r.m.argv[1], "k") == 0 && strcmp(r.m.argv[2], "token000000000000000000000000001") == 0 &&
              strcmp(r.m.argv[5], "1000") == 0 && r.m.mask == 31,
          "an attempt: SET key fresh-token NX PX ttl to all five");
    struct redis_sm_reply ok = status(), no = nil();
    rl_sm_master(&r.m, 0, RL_ANSWERED, &ok, NULL);
    rl_sm_master(&r.m, 1, RL_ANSWERED, &ok, NULL);
    rl_sm_master(&r.m, 2, RL_ANSWERED, &ok, NULL);
    rl_sm_master(&r.m, 3, RL_ANSWERED, &no, NULL);
    rl_sm_master(&r.m, 4, RL_FAILED, NULL, "no reply in time");
    a = rl_sm_round_done(&r.m, T0 + 5 * MS);
    CHECK(a == RL_DONE && r.m.status == LOCK_GRANTED, "3 of 5 within validity: granted");
    CHECK(r.stats.lease_floor_ns == T0 + 1000 * MS, "lease floor t0 + ttl");
    a = rl_sm_release(&r.m, "k", T0 + 10 * MS);
    CHECK(a == RL_FANOUT && strcmp(r.m.argv[0], "EVALSHA") == 0 && strcmp(r.m.argv[1], SHA) == 0 &&
              strcmp(r.m.argv[4], "token000000000000000000000000001") == 0,
          "release: the compare-and-delete of the granted token");
    struct redis_sm_reply one = integer(1), zero = integer(0);
    rl_sm_master(&r.m, 0, RL_ANSWERED, &one, NULL);
    rl_sm_master(&r.m, 1, RL_ANSWERED, &one, NULL);
    rl_sm_master(&r.m, 2, RL_FAILED, NULL, "no reply in time");
    rl_sm_master(&r.m, 3, RL_ANSWERED, &zero, NULL);
    rl_sm_master(&r.m, 4, RL_FAILED, NULL, "no reply in time");
    a = rl_sm_round_done(&r.m, T0 + 11 * MS);
    CHECK(a == RL_DONE && r.m.release == RELEASE_OK,
          "2 deleted, 2 silent: a quorum may still hold it, OK (best effort)");
    a = rl_sm_release(&r.m, "k", T0 + 12 * MS);
    a = all_answer(&r, zero, T0 + 13 * MS);
    CHECK(a == RL_DONE && r.m.release == RELEASE_NOT_OWNER, "nobody held it: not owner");
    a = rl_sm_release(&r.m, "k", T0 + 12 * MS);
    for (int i = 0; i < 5; i++)
        rl_sm_master(&r.m, i, RL_FAILED, NULL, "down");
    a = rl_sm_round_done(&r.m, T0 + 13 * MS);
    CHECK(a == RL_DONE && r.m.release == RELEASE_OK, "nobody answered: never an error");
}

static void test_split_vote(void)
{
    struct rig r;
    struct lab_err err = {0};
    rig_init(&r, 3, &err);
    open_ok(&r);
    enum rl_act a = rl_sm_acquire(&r.m, "k", 100 * MS, T0);
    struct redis_sm_reply ok = status(), no = nil();
    rl_sm_master(&r.m, 0, RL_ANSWERED, &ok, NULL);
    rl_sm_master(&r.m, 1, RL_ANSWERED, &no, NULL);
    rl_sm_master(&r.m, 2, RL_ANSWERED, &no, NULL);
    a = rl_sm_round_done(&r.m, T0 + 1 * MS);
    CHECK(a == RL_FANOUT && strcmp(r.m.argv[0], "EVALSHA") == 0 &&
              strcmp(r.m.argv[4], "token000000000000000000000000001") == 0 && r.m.mask == 7,
          "1 of 3: unlock the attempt's token on every master");
    a = all_answer(&r, integer(0), T0 + 2 * MS);
    CHECK(a == RL_SLEEP && r.m.wake_at >= T0 + 7 * MS && r.m.wake_at <= T0 + 12 * MS,
          "then a jittered pause of 5..10 ms (%lld)", (long long)(r.m.wake_at - T0));
    CHECK(r.stats.polls == 1, "a poll");
    a = rl_sm_timer(&r.m, r.m.wake_at);
    CHECK(a == RL_FANOUT && strcmp(r.m.argv[2], "token000000000000000000000000002") == 0,
          "the next attempt draws a fresh token");
    /* validity spent: a majority that came too late is no grant */
    a = all_answer(&r, ok, r.m.t0 + 990 * MS);
    CHECK(a == RL_FANOUT && strcmp(r.m.argv[0], "EVALSHA") == 0,
          "3 of 3 after 990 ms of a 1 s ttl (drift 12 ms): unlocked, not granted");
    CHECK(strcmp(r.m.token, "token000000000000000000000000002") != 0,
          "a failed attempt leaves the held token alone");
    a = all_answer(&r, integer(1), T0 + 995 * MS);
    CHECK(a == RL_DONE && r.m.status == LOCK_TIMEOUT, "budget spent: timeout");
    /* the run stops during a pause */
    a = rl_sm_acquire(&r.m, "k", 5000 * MS, T0);
    a = all_answer(&r, no, T0);
    a = all_answer(&r, integer(0), T0);
    r.stop = 1;
    a = rl_sm_timer(&r.m, T0 + 10 * MS);
    CHECK(a == RL_DONE && r.m.status == LOCK_TIMEOUT, "stopping: timeout");
}

static void test_no_quorum(void)
{
    struct rig r;
    struct lab_err err = {0};
    rig_init(&r, 3, &err);
    open_ok(&r);
    int64_t now = T0;
    enum rl_act a = rl_sm_acquire(&r.m, "k", 15 * MS, now);
    for (int round = 0; a != RL_DONE && round < 40; round++) {
        if (a == RL_SLEEP) {
            now = r.m.wake_at;
            a = rl_sm_timer(&r.m, now);
            continue;
        }
        struct redis_sm_reply ok = status();
        rl_sm_master(&r.m, 0, RL_ANSWERED, &ok, NULL);
        rl_sm_master(&r.m, 1, RL_FAILED, NULL, "Connection refused");
        rl_sm_master(&r.m, 2, RL_FAILED, NULL, "Connection refused");
        now += 1 * MS;
        a = rl_sm_round_done(&r.m, now);
    }
    CHECK(a == RL_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "quorum") &&
              strstr(r.m.err.msg, "refused"),
          "no attempt reached a quorum: an error naming the last failure (%s)", r.m.err.msg);
}

/* A master restarted since the last round: its old connection is found
 * closed under the command, which goes once more on a new connection. */
static void test_restarted_master(void)
{
    struct rig r;
    struct lab_err err = {0};
    rig_init(&r, 3, &err);
    open_ok(&r);
    enum rl_act a = rl_sm_acquire(&r.m, "k", 5000 * MS, T0);
    struct redis_sm_reply ok = status();
    rl_sm_master(&r.m, 0, RL_ANSWERED, &ok, NULL);
    CHECK(rl_sm_master(&r.m, 1, RL_BROKEN, NULL, "Server closed the connection"),
          "broken: drop the connection");
    rl_sm_master(&r.m, 2, RL_BROKEN, NULL, "Connection reset by peer");
    a = rl_sm_round_done(&r.m, T0 + 1 * MS);
    CHECK(a == RL_FANOUT && r.m.round == 1 && r.m.mask == 6 && strcmp(r.m.argv[0], "SET") == 0,
          "the SET once more, to the two restarted masters only");
    struct redis_sm_reply sha = string(SHA);
    CHECK(rl_sm_loaded(&r.m, 1, &sha, NULL), "a reconnected master loads the script first");
    rl_sm_master(&r.m, 1, RL_ANSWERED, &ok, NULL);
    rl_sm_master(&r.m, 2, RL_BROKEN, NULL, "reset again");
    a = rl_sm_round_done(&r.m, T0 + 2 * MS);
    CHECK(a == RL_DONE && r.m.status == LOCK_GRANTED, "2 of 3 over both rounds: granted");
    /* a master that fails its script load is out for the round */
    a = rl_sm_release(&r.m, "k", T0);
    struct redis_sm_reply e = err_reply("LOADING Redis is loading the dataset in memory");
    CHECK(!rl_sm_loaded(&r.m, 2, &e, NULL) && strstr(r.m.last.msg, "LOADING"),
          "a failed reload: that master fails (%s)", r.m.last.msg);
    /* an error reply is a failed master whose connection goes */
    struct redis_sm_reply ns = err_reply("NOSCRIPT No matching script.");
    CHECK(rl_sm_master(&r.m, 0, RL_ANSWERED, &ns, NULL) && strstr(r.m.last.msg, "NOSCRIPT"),
          "NOSCRIPT: drop the connection (the reconnect reloads)");
}

int main(void)
{
    test_open();
    test_grant();
    test_split_vote();
    test_no_quorum();
    test_restarted_master();
    return check_done();
}
