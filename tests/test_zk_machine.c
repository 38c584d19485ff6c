/*
 * test_zk_machine.c - the ZooKeeper designs' state machine
 * (impls/zookeeper/zk_machine.c) fed scripted events: no server, no clock.
 *
 * Each case plays what a session would answer (a reply with its code and
 * payload, a watch event, a session that connects, expires or does not
 * come back, the deadline) and checks what the design sends and decides,
 * including the decisions the blocking and grouped forms once made apart:
 * a client holding ZK_MAX_HOLDS locks is refused before anything is sent,
 * and a failure making the parents gives up a create of unknown outcome
 * as every give-up does: it takes the node with it once the same session
 * is back (Curator's guaranteed delete), and closes the session only when
 * that session cannot come back.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "zk_machine.h"

#define MS 1000000LL
#define T0 (1000 * MS)
#define ID "0123456789abcdef0123456789abcdef"
#define SID 77 /* the session's id */

static const struct zk_sm_design SEQ = {.kind = ZK_SM_SEQUENTIAL, .name = "zk-sequential"};
static const struct zk_sm_design EPH = {.kind = ZK_SM_EPHEMERAL, .name = "zk-ephemeral"};
static const struct zk_sm_design SEM = {.kind = ZK_SM_SEMAPHORE, .name = "zk-semaphore"};

struct rig {
    struct zk_sm m;
    struct lock_env env;
    struct lock_stats stats;
    struct lock_servers sv;
    int stop;
};

static void rig_init(struct rig *r, const struct zk_sm_design *d)
{
    memset(r, 0, sizeof *r);
    r->sv.session_timeout_ns = 4000 * MS;
    r->env.servers = &r->sv;
    r->env.stop = &r->stop;
    r->env.stats = &r->stats;
    r->env.fencing = 1;
    zk_sm_init(&r->m, d, &r->env, ID);
}

static enum zk_sm_act rc_(struct rig *r, int rc, int64_t now)
{
    struct zk_sm_reply rep = {.rc = rc, .path = ""};
    return zk_sm_reply(&r->m, &rep, now);
}

static enum zk_sm_act created(struct rig *r, const char *path, int64_t now)
{
    struct zk_sm_reply rep = {.rc = ZK_OK, .path = path};
    return zk_sm_reply(&r->m, &rep, now);
}

static enum zk_sm_act kids(struct rig *r, int n, char *const *names, int64_t now)
{
    struct zk_sm_reply rep = {.rc = ZK_OK, .path = "", .n = n, .names = names};
    return zk_sm_reply(&r->m, &rep, now);
}

static enum zk_sm_act stat_(struct rig *r, int64_t owner, int64_t czxid, int64_t now)
{
    struct zk_sm_reply rep = {.rc = ZK_OK, .path = "", .owner = owner, .czxid = czxid};
    return zk_sm_reply(&r->m, &rep, now);
}

static enum zk_sm_act up(struct rig *r, int64_t now)
{
    return zk_sm_session(&r->m, ZK_SM_CONNECTED, SID, NULL, now);
}

static bool sends(struct rig *r, enum zk_sm_act a, enum zk_sm_req req, const char *path)
{
    return a == ZK_SM_SEND && r->m.req == req && strcmp(r->m.path, path) == 0;
}

/* Open, then acquire key up to its first create of the lock's node:
 * the session, ZK_ROOT and the parent made. */
static enum zk_sm_act to_create(struct rig *r, const char *key, int64_t wait)
{
    enum zk_sm_act a = zk_sm_open(&r->m, T0);
    CHECK(a == ZK_SM_SESSION, "open waits for a session: %d", a);
    CHECK(up(r, T0) == ZK_SM_DONE && r->m.open_rc == 0, "open done");
    a = zk_sm_acquire(&r->m, key, wait, T0);
    CHECK(a == ZK_SM_SESSION, "acquire wants a session: %d", a);
    a = up(r, T0);
    CHECK(sends(r, a, ZK_REQ_CREATE, "/locklab"), "creates the root: %s", r->m.path);
    a = rc_(r, ZK_NODEEXISTS, T0);
    CHECK(a == ZK_SM_SEND && r->m.req == ZK_REQ_CREATE, "creates the parent: %s", r->m.path);
    return rc_(r, ZK_OK, T0);
}

static const char *const NODE0 = "/locklab/k/lock-" ID "-1-0000000000";

/* zk-sequential, alone in the queue: granted NODE0 (wait 1 s). */
static void to_held(struct rig *r)
{
    rig_init(r, &SEQ);
    to_create(r, "k", 1000 * MS);
    created(r, NODE0, T0);
    char *names[] = {"lock-" ID "-1-0000000000"};
    kids(r, 1, names, T0);
}

/* zk-sequential: alone in the queue, granted; the token is the sequence + 1. */
static void test_seq_grant(void)
{
    struct rig r;
    rig_init(&r, &SEQ);
    enum zk_sm_act a = to_create(&r, "k", 1000 * MS);
    CHECK(sends(&r, a, ZK_REQ_CREATE_SEQ, "/locklab/k/lock-" ID "-1-"), "our node: %s",
          r.m.path);
    a = created(&r, NODE0, T0);
    CHECK(sends(&r, a, ZK_REQ_CHILDREN, "/locklab/k"), "lists the queue");
    char *names[] = {"lock-" ID "-1-0000000000"};
    a = kids(&r, 1, names, T0);
    CHECK(a == ZK_SM_DONE && r.m.status == LOCK_GRANTED, "granted: %d %d", a, r.m.status);
    CHECK(r.stats.fence_token == 1, "token %lld", (long long)r.stats.fence_token);
    /* reentrant: no round trip; the inner release keeps the node */
    CHECK(zk_sm_acquire(&r.m, "k", MS, T0) == ZK_SM_DONE && r.m.status == LOCK_GRANTED,
          "nested grant");
    CHECK(zk_sm_release(&r.m, "k", T0) == ZK_SM_DONE && r.m.release == RELEASE_OK, "inner");
    a = zk_sm_release(&r.m, "k", T0);
    CHECK(sends(&r, a, ZK_REQ_DELETE, NODE0), "the outer release deletes");
    CHECK(rc_(&r, ZK_OK, T0) == ZK_SM_DONE && r.m.release == RELEASE_OK, "released");
    CHECK(zk_sm_release(&r.m, "k", T0) == ZK_SM_DONE && r.m.release == RELEASE_NOT_OWNER,
          "a second release is not the owner's");
}

static const char *const NODE5 = "/locklab/k/lock-" ID "-1-0000000005";

/* zk-sequential with a 500 ms wait, its node NODE5 among names: up to the
 * act after the queue's listing. */
static enum zk_sm_act to_queue(struct rig *r, int n, char *const *names)
{
    rig_init(r, &SEQ);
    to_create(r, "k", 500 * MS);
    created(r, NODE5, T0);
    return kids(r, n, names, T0);
}

/* zk-sequential: contention: watch the predecessor with getData, list
 * again when it fires; a late reply after the deadline is ignored. */
static void test_seq_contention(void)
{
    struct rig r;
    const char *mine = NODE5;
    char *names[] = {"lock-x-1-0000000004", "lock-" ID "-1-0000000005", "lock-y-1-0000000002"};
    enum zk_sm_act a = to_queue(&r, 3, names);
    CHECK(sends(&r, a, ZK_REQ_GET_WATCH, "/locklab/k/lock-x-1-0000000004"),
          "watches the next lower node only: %s", r.m.path);
    CHECK(rc_(&r, ZK_OK, T0) == ZK_SM_WAIT, "waits for its watch");
    a = zk_sm_event(&r.m, T0 + 10 * MS);
    CHECK(sends(&r, a, ZK_REQ_CHILDREN, "/locklab/k"), "lists again after the event");
    a = kids(&r, 3, names, T0 + 10 * MS);
    /* the predecessor is gone before the watch: no watch set, list again */
    CHECK(rc_(&r, ZK_NONODE, T0 + 10 * MS) == ZK_SM_SEND && r.m.req == ZK_REQ_CHILDREN,
          "a predecessor already gone: list again");
    kids(&r, 3, names, T0 + 10 * MS);
    CHECK(rc_(&r, ZK_OK, T0 + 10 * MS) == ZK_SM_WAIT, "waits again");
    a = zk_sm_timer(&r.m, T0 + 500 * MS);
    CHECK(sends(&r, a, ZK_REQ_DELETE, mine), "the deadline deletes our node");
    CHECK(rc_(&r, ZK_OK, T0 + 500 * MS) == ZK_SM_DONE && r.m.status == LOCK_TIMEOUT,
          "timeout");
    CHECK(rc_(&r, ZK_OK, T0 + 600 * MS) == ZK_SM_IGNORED, "a late reply changes nothing");
    CHECK(zk_sm_event(&r.m, T0 + 600 * MS) == ZK_SM_IGNORED, "a late event neither");
    CHECK(r.m.n_held == 0, "nothing held");
}

/* A create whose reply a connection loss ate: the same session back, the
 * node is found by its unique name (protected mode). */
static void test_seq_lost_create(void)
{
    struct rig r;
    rig_init(&r, &SEQ);
    to_create(&r, "k", 1000 * MS);
    enum zk_sm_act a = rc_(&r, ZK_CONNECTIONLOSS, T0);
    CHECK(a == ZK_SM_SESSION && !r.m.drop, "waits for the session, keeping it");
    a = up(&r, T0 + 50 * MS);
    CHECK(a == ZK_SM_SESSION, "then the next turn's session check: %d", a);
    a = up(&r, T0 + 50 * MS);
    CHECK(sends(&r, a, ZK_REQ_CHILDREN, "/locklab/k"), "looks for its node: %d %s", a,
          r.m.path);
    char *names[] = {"lock-" ID "-1-0000000003"};
    a = kids(&r, 1, names, T0 + 50 * MS);
    CHECK(sends(&r, a, ZK_REQ_CHILDREN, "/locklab/k"), "found: lists the queue");
    CHECK(strcmp(r.m.mine, "/locklab/k/lock-" ID "-1-0000000003") == 0, "mine: %s", r.m.mine);
    CHECK(kids(&r, 1, names, T0) == ZK_SM_DONE && r.m.status == LOCK_GRANTED, "granted");
}

/* The session expires while queued: the node went with it; the attempt
 * ends in an error and the session is replaced. */
static void test_seq_expiry(void)
{
    struct rig r;
    rig_init(&r, &SEQ);
    to_create(&r, "k", 1000 * MS);
    created(&r, "/locklab/k/lock-" ID "-1-0000000005", T0);
    enum zk_sm_act a = rc_(&r, ZK_CONNECTIONLOSS, T0);
    CHECK(a == ZK_SM_SESSION, "a lost listing waits for the same session");
    a = zk_sm_session(&r.m, ZK_SM_EXPIRED, 0, NULL, T0 + 100 * MS);
    CHECK(a == ZK_SM_DONE && r.m.status == LOCK_ERROR && r.m.drop,
          "expired: error, session closed: %d %d %d", a, r.m.status, r.m.drop);
    CHECK(r.m.err.code == ZK_SESSIONEXPIRED, "err %d %s", r.m.err.code, r.m.err.msg);
    /* the next acquire makes the parents again, in a new session */
    r.m.drop = false;
    a = zk_sm_acquire(&r.m, "k", 100 * MS, T0);
    CHECK(up(&r, T0) == ZK_SM_SEND && r.m.req == ZK_REQ_CREATE &&
              strcmp(r.m.path, "/locklab") == 0,
          "parents again after the drop: %s", r.m.path);
}

/* A held lock whose session expired: the release is not the owner's and
 * sends nothing; a lost delete reply is checked with exists. */
static void test_release_paths(void)
{
    struct rig r;
    to_held(&r);
    enum zk_sm_act a = zk_sm_release(&r.m, "k", T0);
    a = rc_(&r, ZK_CONNECTIONLOSS, T0);
    CHECK(a == ZK_SM_SESSION, "a lost delete waits for the same session");
    a = up(&r, T0 + 10 * MS);
    CHECK(sends(&r, a, ZK_REQ_EXISTS, NODE0), "then asks whether it is still ours");
    a = stat_(&r, SID, 1, T0 + 10 * MS);
    CHECK(sends(&r, a, ZK_REQ_DELETE, NODE0), "still ours: deletes again");
    CHECK(rc_(&r, ZK_NONODE, T0) == ZK_SM_DONE && r.m.release == RELEASE_OK,
          "gone after a retry: our delete went through");

    /* held in a session that expired since */
    to_held(&r);
    zk_sm_acquire(&r.m, "other", 10 * MS, T0);
    zk_sm_session(&r.m, ZK_SM_EXPIRED, 0, NULL, T0); /* the second acquire finds it expired */
    CHECK(r.m.drop, "an expired session is closed");
    a = zk_sm_release(&r.m, "k", T0);
    CHECK(a == ZK_SM_DONE && r.m.release == RELEASE_NOT_OWNER, "not the owner: %d", a);
}

/* A release whose delete waits for its session through a lost
 * connection: ended by the run's stop, it says so (ECANCELED: cut short,
 * not failed); ended by its own budget, the connection loss is the error.
 * The session is closed either way: the node must not outlive us. */
static void test_release_cut_by_stop(void)
{
    for (int stop = 0; stop < 2; stop++) {
        struct rig r;
        to_held(&r);
        zk_sm_release(&r.m, "k", T0);
        CHECK(rc_(&r, ZK_CONNECTIONLOSS, T0) == ZK_SM_SESSION, "waits for the same session");
        r.stop = stop;
        enum zk_sm_act a = zk_sm_session(&r.m, ZK_SM_NOT_YET, 0, NULL,
                                         stop ? T0 + 500 * MS : T0 + 8000 * MS);
        CHECK(a == ZK_SM_DONE && r.m.release == RELEASE_ERROR && r.m.drop,
              "an error, the session closed: %d %d %d", a, r.m.release, r.m.drop);
        CHECK(r.m.err.code == (stop ? ECANCELED : ZK_CONNECTIONLOSS),
              "%s: code %d (%s)", stop ? "the stop" : "its budget", r.m.err.code, r.m.err.msg);
    }
}

/* zk-ephemeral: taken: exists-watch; the herd wakes; our own lost create
 * found by its owner; fencing token is the czxid. */
static void test_ephemeral(void)
{
    struct rig r;
    rig_init(&r, &EPH);
    enum zk_sm_act a = to_create(&r, "k", 1000 * MS);
    CHECK(sends(&r, a, ZK_REQ_CREATE_EPH, "/locklab/k/lock") && r.m.want_stat,
          "creates the node (create2 with fencing)");
    a = rc_(&r, ZK_NODEEXISTS, T0);
    CHECK(sends(&r, a, ZK_REQ_EXISTS_WATCH, "/locklab/k/lock"), "exists-watch");
    CHECK(stat_(&r, 999, 5, T0) == ZK_SM_WAIT, "someone else's: wait");
    a = zk_sm_event(&r.m, T0 + 20 * MS);
    CHECK(a == ZK_SM_SESSION, "woken: a new turn (session, then create): %d", a);
    a = up(&r, T0 + 20 * MS);
    CHECK(sends(&r, a, ZK_REQ_CREATE_EPH, "/locklab/k/lock"), "parent cached: creates again");
    a = rc_(&r, ZK_CONNECTIONLOSS, T0 + 20 * MS);
    a = up(&r, T0 + 30 * MS);
    a = up(&r, T0 + 30 * MS);
    a = rc_(&r, ZK_NODEEXISTS, T0 + 30 * MS);
    a = stat_(&r, SID, 42, T0 + 30 * MS);
    CHECK(a == ZK_SM_DONE && r.m.status == LOCK_GRANTED, "our own lost create: granted");
    CHECK(r.stats.fence_token == 42, "token = czxid: %lld", (long long)r.stats.fence_token);
    /* not reentrant: the nested acquire waits on its own node, then times out */
    a = zk_sm_acquire(&r.m, "k", 100 * MS, T0);
    a = up(&r, T0);
    CHECK(rc_(&r, ZK_NODEEXISTS, T0) == ZK_SM_SEND, "exists-watch its own node");
    CHECK(stat_(&r, SID, 42, T0) == ZK_SM_WAIT, "nested: waits on its own node");
    CHECK(zk_sm_timer(&r.m, T0 + 100 * MS) == ZK_SM_DONE && r.m.status == LOCK_TIMEOUT,
          "nested times out");
}

/* zk-ephemeral: giving up right after a create of unknown outcome, the
 * connection lost: once the same session is back, the node is deleted if
 * our session owns it; the session is kept. Somebody else's node is left
 * alone; a session that does not come back is closed. */
static void test_ephemeral_unknown(void)
{
    const char *node = "/locklab/k/lock";
    for (int owner = 0; owner < 2; owner++) {
        struct rig r;
        rig_init(&r, &EPH);
        to_create(&r, "k", 100 * MS);
        enum zk_sm_act a = rc_(&r, ZK_CONNECTIONLOSS, T0);
        CHECK(a == ZK_SM_SESSION, "waits for a session");
        a = zk_sm_session(&r.m, ZK_SM_NOT_YET, 0, NULL, T0 + 100 * MS);
        CHECK(sends(&r, a, ZK_REQ_EXISTS, node) && !r.m.drop,
              "the deadline: is the node ours? %d %s %d", a, r.m.path, r.m.drop);
        CHECK(r.m.deadline == T0 + 4100 * MS, "for up to a session timeout: %lld",
              (long long)r.m.deadline);
        CHECK(rc_(&r, ZK_CONNECTIONLOSS, T0 + 100 * MS) == ZK_SM_SESSION,
              "still disconnected: waits for the same session");
        a = up(&r, T0 + 1500 * MS);
        CHECK(sends(&r, a, ZK_REQ_EXISTS, node), "back: asks again");
        a = stat_(&r, owner ? SID : SID + 1, 5, T0 + 1500 * MS);
        if (owner) {
            CHECK(sends(&r, a, ZK_REQ_DELETE, node), "ours: deletes it: %d", a);
            a = rc_(&r, ZK_OK, T0 + 1500 * MS);
        }
        CHECK(a == ZK_SM_DONE && r.m.status == LOCK_TIMEOUT && !r.m.drop,
              "timeout, the session kept: %d %d %d", a, r.m.status, r.m.drop);
    }
    /* the delete's reply lost: whose the node is now is asked again (another
     * client may have made it since our delete went through), never deleted blindly */
    struct rig r;
    rig_init(&r, &EPH);
    to_create(&r, "k", 100 * MS);
    rc_(&r, ZK_CONNECTIONLOSS, T0);
    enum zk_sm_act a = zk_sm_session(&r.m, ZK_SM_NOT_YET, 0, NULL, T0 + 100 * MS);
    a = stat_(&r, SID, 5, T0 + 100 * MS);
    CHECK(sends(&r, a, ZK_REQ_DELETE, node), "ours: deletes it");
    a = rc_(&r, ZK_CONNECTIONLOSS, T0 + 100 * MS);
    CHECK(a == ZK_SM_SESSION, "its reply lost: waits for the same session");
    a = up(&r, T0 + 200 * MS);
    CHECK(sends(&r, a, ZK_REQ_EXISTS, node), "back: asks whose the node is, again: %s",
          r.m.path);
    a = stat_(&r, SID + 1, 6, T0 + 200 * MS);
    CHECK(a == ZK_SM_DONE && r.m.status == LOCK_TIMEOUT && !r.m.drop,
          "another client's now: left alone: %d %d", a, r.m.status);

    rig_init(&r, &EPH);
    to_create(&r, "k", 100 * MS);
    rc_(&r, ZK_CONNECTIONLOSS, T0);
    zk_sm_session(&r.m, ZK_SM_NOT_YET, 0, NULL, T0 + 100 * MS);
    rc_(&r, ZK_CONNECTIONLOSS, T0 + 100 * MS);
    a = zk_sm_session(&r.m, ZK_SM_NOT_YET, 0, NULL, T0 + 4100 * MS);
    CHECK(a == ZK_SM_DONE && r.m.status == LOCK_TIMEOUT && r.m.drop,
          "not back within its timeout: closed: %d %d %d", a, r.m.status, r.m.drop);
}

/* zk-sequential: a waiter whose wait runs out while ZooKeeper is
 * unreachable keeps its session and deletes its node once the same
 * session is back. Closing the session instead left the node heading the
 * queue until the session expired: every client waited a session timeout
 * for a lock nobody held (fence-restart's stall). */
static void test_seq_give_up_disconnected(void)
{
    struct rig r;
    const char *mine = NODE5;
    char *names[] = {"lock-x-1-0000000004", "lock-" ID "-1-0000000005"};
    to_queue(&r, 2, names);
    CHECK(rc_(&r, ZK_OK, T0) == ZK_SM_WAIT, "waits behind its predecessor");
    enum zk_sm_act a = zk_sm_event(&r.m, T0 + 100 * MS); /* the disconnect */
    CHECK(sends(&r, a, ZK_REQ_CHILDREN, "/locklab/k"), "lists again");
    CHECK(rc_(&r, ZK_CONNECTIONLOSS, T0 + 100 * MS) == ZK_SM_SESSION, "waits for the session");
    a = zk_sm_session(&r.m, ZK_SM_NOT_YET, 0, NULL, T0 + 500 * MS);
    CHECK(sends(&r, a, ZK_REQ_DELETE, mine) && !r.m.drop,
          "its wait ran out: deletes its node, the session kept: %d %d", a, r.m.drop);
    a = rc_(&r, ZK_CONNECTIONLOSS, T0 + 500 * MS);
    CHECK(a == ZK_SM_SESSION && !r.m.drop, "not yet reachable: waits for the same session");
    a = up(&r, T0 + 2500 * MS);
    CHECK(sends(&r, a, ZK_REQ_DELETE, mine), "back: deletes its node");
    a = rc_(&r, ZK_OK, T0 + 2500 * MS);
    CHECK(a == ZK_SM_DONE && r.m.status == LOCK_TIMEOUT && !r.m.drop,
          "timeout, the node gone, the session kept: %d %d %d", a, r.m.status, r.m.drop);

    /* the session expired meanwhile: its node went with it */
    to_queue(&r, 2, names);
    rc_(&r, ZK_OK, T0);
    a = zk_sm_timer(&r.m, T0 + 500 * MS);
    CHECK(sends(&r, a, ZK_REQ_DELETE, mine), "the deadline deletes its node");
    rc_(&r, ZK_CONNECTIONLOSS, T0 + 500 * MS);
    a = zk_sm_session(&r.m, ZK_SM_EXPIRED, 0, NULL, T0 + 3000 * MS);
    CHECK(a == ZK_SM_DONE && r.m.status == LOCK_TIMEOUT && r.m.drop,
          "expired: nothing to delete, the session closed: %d %d %d", a, r.m.status, r.m.drop);
}

/* Decision: ZK_MAX_HOLDS locks held: refused before anything is sent, in
 * zk-ephemeral as in zk-sequential. */
static void test_holds_full(void)
{
    const struct zk_sm_design *ds[] = {&EPH, &SEQ};
    for (int d = 0; d < 2; d++) {
        struct rig r;
        rig_init(&r, ds[d]);
        r.m.n_held = ZK_MAX_HOLDS;
        for (int i = 0; i < ZK_MAX_HOLDS; i++)
            snprintf(r.m.held[i].key, sizeof r.m.held[i].key, "k%d", i);
        enum zk_sm_act a = zk_sm_acquire(&r.m, "new", 100 * MS, T0);
        CHECK(a == ZK_SM_DONE && r.m.status == LOCK_ERROR && !r.m.drop,
              "%s: refused at once: %d %d", ds[d]->name, a, r.m.status);
    }
}

/* Decision: a failure making the parents after a create of unknown
 * outcome finds that create by its unique name and deletes it (the node
 * must not outlive the attempt); the error is the parents'. */
static void test_parent_failure_cleans(void)
{
    struct rig r;
    rig_init(&r, &SEQ);
    to_create(&r, "k", 1000 * MS);
    rc_(&r, ZK_CONNECTIONLOSS, T0); /* the create's outcome is unknown */
    r.m.parent_key[0] = '\0';       /* as if the parent had to be made again */
    enum zk_sm_act a = up(&r, T0);
    CHECK(a == ZK_SM_SESSION, "the next turn: %d", a);
    a = up(&r, T0);
    CHECK(a == ZK_SM_SEND && r.m.req == ZK_REQ_CREATE, "makes the root: %s", r.m.path);
    a = rc_(&r, -102 /* no auth */, T0);
    CHECK(sends(&r, a, ZK_REQ_CHILDREN, "/locklab/k") && !r.m.drop,
          "looks for the lost create: %d %s", a, r.m.path);
    char *names[] = {"lock-x-1-0000000002", "lock-" ID "-1-0000000003"};
    a = kids(&r, 2, names, T0);
    CHECK(sends(&r, a, ZK_REQ_DELETE, "/locklab/k/lock-" ID "-1-0000000003"),
          "found: deletes it: %s", r.m.path);
    a = rc_(&r, ZK_OK, T0);
    CHECK(a == ZK_SM_DONE && r.m.status == LOCK_ERROR && !r.m.drop && r.m.err.code == -102,
          "error, the parents' (%d), the session kept: %d %d %d", r.m.err.code, a, r.m.status,
          r.m.drop);
}

/* zk-semaphore: the internal mutex, then the lease; the mutex deleted. */
static void test_semaphore(void)
{
    struct rig r;
    rig_init(&r, &SEM);
    enum zk_sm_act a = to_create(&r, "s", 1000 * MS);
    CHECK(sends(&r, a, ZK_REQ_CREATE, "/locklab/s/locks"), "subdir locks: %s", r.m.path);
    a = rc_(&r, ZK_OK, T0);
    CHECK(sends(&r, a, ZK_REQ_CREATE, "/locklab/s/leases"), "subdir leases");
    a = rc_(&r, ZK_OK, T0);
    CHECK(sends(&r, a, ZK_REQ_CREATE_SEQ, "/locklab/s/locks/lock-" ID "-1-"), "mutex node");
    a = created(&r, "/locklab/s/locks/lock-" ID "-1-0000000000", T0);
    char *locks[] = {"lock-" ID "-1-0000000000"};
    a = kids(&r, 1, locks, T0);
    CHECK(a == ZK_SM_SESSION, "mutex held: the lease's turn: %d", a);
    a = up(&r, T0);
    CHECK(sends(&r, a, ZK_REQ_CREATE_SEQ, "/locklab/s/leases/lease-" ID "-2-"), "lease: %s",
          r.m.path);
    a = created(&r, "/locklab/s/leases/lease-" ID "-2-0000000007", T0);
    CHECK(sends(&r, a, ZK_REQ_CHILDREN_WATCH, "/locklab/s/leases"), "lists leases, watching");
    char *two[] = {"lease-a-1-0000000006", "lease-" ID "-2-0000000007"};
    CHECK(kids(&r, 2, two, T0) == ZK_SM_WAIT, "two leases: waits");
    a = zk_sm_event(&r.m, T0 + 5 * MS);
    CHECK(a == ZK_SM_SEND && r.m.req == ZK_REQ_CHILDREN_WATCH, "lists again");
    a = kids(&r, 1, two + 1, T0 + 5 * MS);
    CHECK(sends(&r, a, ZK_REQ_UNWATCH_CHILDREN, "/locklab/s/leases"), "takes its watch back");
    a = rc_(&r, ZK_OK, T0 + 5 * MS);
    CHECK(sends(&r, a, ZK_REQ_DELETE, "/locklab/s/locks/lock-" ID "-1-0000000000"),
          "deletes the internal mutex");
    a = rc_(&r, ZK_OK, T0 + 5 * MS);
    CHECK(a == ZK_SM_DONE && r.m.status == LOCK_GRANTED, "granted: %d", r.m.status);
    CHECK(strcmp(r.m.held[0].path, "/locklab/s/leases/lease-" ID "-2-0000000007") == 0 &&
              r.stats.fence_token == 8,
          "the lease is the hold: %s", r.m.held[0].path);
}

/* lock.on_disconnect: abort: a lock given up at a disconnect is released
 * by closing the session. */
static void test_abort_release(void)
{
    struct rig r;
    rig_init(&r, &SEQ);
    struct zk_options o = {.on_disconnect = ZK_DISCONNECT_ABORT};
    int lost = 0;
    r.env.options = &o;
    r.env.lost = &lost;
    zk_sm_init(&r.m, &SEQ, &r.env, ID);
    to_create(&r, "k", 1000 * MS);
    created(&r, NODE0, T0);
    char *names[] = {"lock-" ID "-1-0000000000"};
    kids(&r, 1, names, T0);
    lost = 1;
    enum zk_sm_act a = zk_sm_release(&r.m, "k", T0);
    CHECK(a == ZK_SM_DONE && r.m.release == RELEASE_NOT_OWNER && r.m.drop,
          "closes the session instead of deleting: %d %d", a, r.m.release);
}

int main(void)
{
    test_seq_grant();
    test_seq_contention();
    test_seq_lost_create();
    test_seq_expiry();
    test_release_paths();
    test_release_cut_by_stop();
    test_ephemeral();
    test_ephemeral_unknown();
    test_seq_give_up_disconnected();
    test_holds_full();
    test_parent_failure_cleans();
    test_semaphore();
    test_abort_release();
    return check_done();
}
