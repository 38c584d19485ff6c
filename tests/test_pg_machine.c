/*
 * test_pg_machine.c - the PostgreSQL designs' state machine
 * (impls/postgres/pg_machine.c) fed scripted events: no server, no libpq.
 *
 * Each case plays what a server and a session would do (a result, an
 * error with its SQLSTATE, a lost connection, the run's stop) and checks
 * what the design sends and decides. The decisions that the blocking and
 * the grouped forms once made differently are each a case here, with the
 * behaviour both modes now share: a statement lost under its connection
 * is not sent again on a new session (both forms resent it once), a hold
 * lost with its session is released as not-owner with nothing sent (the
 * blocking pg-for-update sent COMMIT on the dead session: an error), a
 * stop abandons only a lock wait (the group also gave up a connect and a
 * SET), and a pg-for-update key is quoted without libpq.
 */
#include <string.h>

#include "check.h"
#include "pg_machine.h"

static const struct pg_sm_design ADV = {.kind = PG_SM_ADVISORY, .name = "pg-advisory"};
static const struct pg_sm_design FU = {.kind = PG_SM_FOR_UPDATE, .name = "pg-for-update"};

#define MS 1000000LL

struct rig {
    struct pg_sm m;
    struct lock_env env;
    struct lock_stats stats;
    int stop;
};

static void rig_init(struct rig *r, const struct pg_sm_design *d)
{
    memset(r, 0, sizeof *r);
    r->env.stats = &r->stats;
    r->env.stop = &r->stop;
    pg_sm_init(&r->m, d, &r->env);
}

static struct pg_sm_result ok_rows(int rows, const char *value, enum pg_sm_txn txn)
{
    return (struct pg_sm_result){.ok = true, .rows = rows, .value = value,
                                 .tag = rows ? "SELECT 1" : "SELECT 0", .txn = txn};
}
static struct pg_sm_result ok_tag(const char *tag)
{
    return (struct pg_sm_result){.ok = true, .tag = tag, .txn = PG_TXN_IDLE};
}
static struct pg_sm_result error(const char *state, const char *msg, enum pg_sm_txn txn)
{
    return (struct pg_sm_result){.ok = false, .sqlstate = state, .message = msg, .txn = txn};
}

static enum pg_sm_act feed(struct rig *r, struct pg_sm_result res)
{
    return pg_sm_result(&r->m, &res);
}

/* The act is SEND of sql (and its one parameter, or none). */
static int sends(const struct pg_sm *m, enum pg_sm_act act, const char *sql, const char *param)
{
    return act == PG_SM_SEND && strcmp(m->sql, sql) == 0 &&
           (param ? m->nparams == 1 && strcmp(m->params[0], param) == 0 : m->nparams == 0);
}

static void open_ok(struct rig *r)
{
    enum pg_sm_act a = pg_sm_open(&r->m);
    CHECK(a == PG_SM_CONNECT, "the open connects first (act %d)", a);
    a = pg_sm_connected(&r->m, true, NULL);
    if (r->m.design->kind == PG_SM_FOR_UPDATE) {
        CHECK(sends(&r->m, a, "CREATE TABLE IF NOT EXISTS locklab_locks (name text PRIMARY KEY)",
                    NULL),
              "pg-for-update makes its table");
        a = feed(r, ok_tag("CREATE TABLE"));
    }
    CHECK(a == PG_SM_DONE && r->m.open_rc == 0, "opened");
    CHECK(r->stats.round_trips == 0, "the open counts no round trip");
}

static char id_k[24];

/* An advisory grant of "k" (SET lock_timeout first when sets). */
static void adv_grant(struct rig *r, bool sets)
{
    enum pg_sm_act a = pg_sm_acquire(&r->m, "k", 5000 * MS);
    if (sets) {
        CHECK(sends(&r->m, a, "SET lock_timeout = 5000", NULL), "lock_timeout = the wait");
        a = feed(r, ok_tag("SET"));
    }
    CHECK(sends(&r->m, a, "SELECT pg_advisory_lock($1::bigint)", id_k),
          "pg_advisory_lock of the key's bigint");
    a = feed(r, ok_rows(1, "", PG_TXN_IDLE));
    CHECK(a == PG_SM_DONE && r->m.status == LOCK_GRANTED, "a result is a grant");
}

static void test_open(void)
{
    struct rig r;
    rig_init(&r, &ADV);
    open_ok(&r);
    rig_init(&r, &FU);
    open_ok(&r);
    /* two clients made the table at once: the later one's error is fine */
    rig_init(&r, &FU);
    pg_sm_open(&r.m);
    pg_sm_connected(&r.m, true, NULL);
    enum pg_sm_act a = feed(&r, error("42P07", "relation exists", PG_TXN_IDLE));
    CHECK(a == PG_SM_DONE && r.m.open_rc == 0, "42P07 at CREATE TABLE: the table is there");
    rig_init(&r, &FU);
    pg_sm_open(&r.m);
    pg_sm_connected(&r.m, true, NULL);
    a = feed(&r, error("42501", "permission denied\nDETAIL: x", PG_TXN_IDLE));
    CHECK(a == PG_SM_DONE && r.m.open_rc == -1 &&
              strcmp(r.m.err.msg, "PostgreSQL: permission denied") == 0,
          "another error fails the open, its first line said (%s)", r.m.err.msg);
    rig_init(&r, &ADV);
    pg_sm_open(&r.m);
    struct lab_err e;
    lab_err_set(&e, 5, "PostgreSQL connection: refused");
    a = pg_sm_connected(&r.m, false, &e);
    CHECK(a == PG_SM_DONE && r.m.open_rc == -1 && strstr(r.m.err.msg, "refused"),
          "a connect that fails fails the open");
}

static void test_advisory(void)
{
    struct rig r;
    rig_init(&r, &ADV);
    open_ok(&r);
    adv_grant(&r, true);
    CHECK(r.stats.round_trips == 2, "SET and lock: 2 round trips (%lld)",
          (long long)r.stats.round_trips);
    enum pg_sm_act a = pg_sm_release(&r.m, "k");
    CHECK(sends(&r.m, a, "SELECT pg_advisory_unlock($1::bigint)", id_k), "pg_advisory_unlock");
    a = feed(&r, ok_rows(1, "t", PG_TXN_IDLE));
    CHECK(a == PG_SM_DONE && r.m.release == RELEASE_OK, "true: released");
    adv_grant(&r, false); /* the session keeps its lock_timeout */
    CHECK(r.stats.round_trips == 4, "no second SET (%lld)", (long long)r.stats.round_trips);
    /* reentrant: the same statement again, and as many unlocks */
    adv_grant(&r, false);
    CHECK(r.m.holds == 2, "two holds");
    pg_sm_release(&r.m, "k");
    feed(&r, ok_rows(1, "t", PG_TXN_IDLE));
    pg_sm_release(&r.m, "k");
    a = feed(&r, ok_rows(1, "f", PG_TXN_IDLE));
    CHECK(a == PG_SM_DONE && r.m.release == RELEASE_NOT_OWNER && r.m.holds == 0,
          "false: not-owner");
}

static void test_timeouts(void)
{
    struct rig r;
    rig_init(&r, &ADV);
    open_ok(&r);
    adv_grant(&r, true);
    pg_sm_release(&r.m, "k");
    feed(&r, ok_rows(1, "t", PG_TXN_IDLE));
    enum pg_sm_act a = pg_sm_acquire(&r.m, "k", 5000 * MS);
    a = feed(&r, error("55P03", "canceling statement due to lock timeout", PG_TXN_IDLE));
    CHECK(a == PG_SM_DONE && r.m.status == LOCK_TIMEOUT, "55P03 is a timeout, not an error");
    a = pg_sm_acquire(&r.m, "k", 5000 * MS);
    a = feed(&r, error("XX000", "internal", PG_TXN_IDLE));
    CHECK(a == PG_SM_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "internal"),
          "another SQLSTATE is an error");
    /* a wait under 1 ms is 1 ms: 0 would mean no bound */
    a = pg_sm_acquire(&r.m, "k", 100);
    CHECK(sends(&r.m, a, "SET lock_timeout = 1", NULL), "lock_timeout at least 1 ms");
    /* 55P03 on anything but the lock statement is no timeout */
    a = feed(&r, error("55P03", "odd", PG_TXN_IDLE));
    CHECK(a == PG_SM_DONE && r.m.status == LOCK_ERROR, "a failed SET is an error");
}

static void test_for_update(void)
{
    struct rig r;
    rig_init(&r, &FU);
    open_ok(&r);
    const char *sel = "BEGIN; SELECT 1 FROM locklab_locks WHERE name = 'k' FOR UPDATE";
    enum pg_sm_act a = pg_sm_acquire(&r.m, "k", 2000 * MS);
    a = feed(&r, ok_tag("SET"));
    CHECK(sends(&r.m, a, sel, NULL), "BEGIN and the SELECT in one round trip");
    a = feed(&r, ok_rows(0, NULL, PG_TXN_IN));
    CHECK(sends(&r.m, a, "ROLLBACK", NULL), "no row: the empty transaction given back");
    a = feed(&r, ok_tag("ROLLBACK"));
    CHECK(sends(&r.m, a, "INSERT INTO locklab_locks (name) VALUES ($1) ON CONFLICT DO NOTHING",
                "k"),
          "... the row made");
    a = feed(&r, ok_tag("INSERT 0 1"));
    CHECK(sends(&r.m, a, sel, NULL), "... and locked");
    a = feed(&r, ok_rows(1, "1", PG_TXN_IN));
    CHECK(a == PG_SM_DONE && r.m.status == LOCK_GRANTED, "granted in the transaction");
    CHECK(r.stats.round_trips == 5, "SET, SELECT, ROLLBACK, INSERT, SELECT (%lld)",
          (long long)r.stats.round_trips);
    /* nested: the bare SELECT joins the transaction */
    a = pg_sm_acquire(&r.m, "k", 2000 * MS);
    CHECK(sends(&r.m, a, "SELECT 1 FROM locklab_locks WHERE name = 'k' FOR UPDATE", NULL),
          "nested: no BEGIN");
    a = feed(&r, ok_rows(1, "1", PG_TXN_IN));
    CHECK(a == PG_SM_DONE && r.m.status == LOCK_GRANTED, "nested grant");
    a = pg_sm_release(&r.m, "k");
    CHECK(a == PG_SM_DONE && r.m.release == RELEASE_OK, "the nested release sends nothing");
    a = pg_sm_release(&r.m, "k");
    CHECK(sends(&r.m, a, "COMMIT", NULL), "the outermost release commits");
    a = feed(&r, ok_tag("COMMIT"));
    CHECK(a == PG_SM_DONE && r.m.release == RELEASE_OK, "COMMIT: released");
    /* a grant needs the transaction open after the SELECT */
    a = pg_sm_acquire(&r.m, "k", 2000 * MS);
    a = feed(&r, ok_rows(1, "1", PG_TXN_IDLE));
    CHECK(sends(&r.m, a, "ROLLBACK", NULL), "a row outside a transaction: no grant");
    feed(&r, ok_tag("ROLLBACK"));
    a = feed(&r, ok_tag("INSERT 0 0"));
    a = feed(&r, ok_rows(1, "1", PG_TXN_IDLE));
    CHECK(a == PG_SM_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "missing"),
          "... nor after the row was made: an error");
    /* a timeout fails the transaction: ROLLBACK, then the timeout */
    a = pg_sm_acquire(&r.m, "k", 2000 * MS);
    a = feed(&r, error("55P03", "lock timeout", PG_TXN_FAILED));
    CHECK(sends(&r.m, a, "ROLLBACK", NULL), "the failed transaction given back");
    a = feed(&r, ok_tag("ROLLBACK"));
    CHECK(a == PG_SM_DONE && r.m.status == LOCK_TIMEOUT, "... then the timeout");
    /* the COMMIT of a failed transaction answers ROLLBACK */
    a = pg_sm_acquire(&r.m, "k", 2000 * MS);
    feed(&r, ok_rows(1, "1", PG_TXN_IN));
    pg_sm_release(&r.m, "k");
    a = feed(&r, ok_tag("ROLLBACK"));
    CHECK(a == PG_SM_DONE && r.m.release == RELEASE_NOT_OWNER, "ROLLBACK for COMMIT: not-owner");
}

/* Divergence: both forms sent a statement lost under its connection once
 * more on a new session. Now the operation fails, and the next one starts
 * on a new session. */
static void test_lost_under(void)
{
    struct rig r;
    rig_init(&r, &ADV);
    open_ok(&r);
    enum pg_sm_act a = pg_sm_acquire(&r.m, "k", 5000 * MS);
    feed(&r, ok_tag("SET"));
    a = pg_sm_lost(&r.m, "server closed the connection unexpectedly\n\tThis probably");
    CHECK(a == PG_SM_DONE && r.m.status == LOCK_ERROR &&
              strcmp(r.m.err.msg, "PostgreSQL request: server closed the connection unexpectedly") ==
                  0,
          "lost under the lock: an error, not a resend (%s)", r.m.err.msg);
    long long trips = r.stats.round_trips;
    a = pg_sm_acquire(&r.m, "k", 5000 * MS);
    CHECK(a == PG_SM_CONNECT, "the next acquire opens a new session first");
    a = pg_sm_connected(&r.m, true, NULL);
    CHECK(sends(&r.m, a, "SET lock_timeout = 5000", NULL), "... and sets its lock_timeout");
    CHECK(r.stats.round_trips == trips + 1, "counted once");
    /* the server's goodbye under a release is a loss too */
    rig_init(&r, &ADV);
    open_ok(&r);
    adv_grant(&r, true);
    pg_sm_release(&r.m, "k");
    a = feed(&r, error("57P01", "terminating connection due to administrator command",
                       PG_TXN_IDLE));
    CHECK(a == PG_SM_DONE && r.m.release == RELEASE_ERROR && r.m.holds == 0 && r.m.orphans == 0,
          "57P01 under the unlock: an error, not resent (%d %d)", r.m.holds, r.m.orphans);
    a = pg_sm_acquire(&r.m, "k", 5000 * MS);
    CHECK(a == PG_SM_CONNECT, "a new session next");
    /* a lost ROLLBACK after a timeout: the session's end rolled it back */
    rig_init(&r, &FU);
    open_ok(&r);
    pg_sm_acquire(&r.m, "k", 2000 * MS);
    feed(&r, ok_tag("SET"));
    feed(&r, error("55P03", "lock timeout", PG_TXN_FAILED));
    a = pg_sm_lost(&r.m, "gone");
    CHECK(a == PG_SM_DONE && r.m.status == LOCK_TIMEOUT, "the timeout stands");
}

/* Divergence: a hold lost with its session between operations. Blocking
 * pg-for-update sent COMMIT on the dead session (an error), the group
 * found no transaction (not-owner); a nested acquire was sent again on a
 * new session. Now: not-owner with nothing sent, the nested acquire
 * fails with nothing sent, in both designs. */
static void test_lost_holds(void)
{
    const struct pg_sm_design *designs[] = {&ADV, &FU};
    for (int i = 0; i < 2; i++) {
        struct rig r;
        rig_init(&r, designs[i]);
        open_ok(&r);
        enum pg_sm_act a = pg_sm_acquire(&r.m, "k", 5000 * MS);
        a = feed(&r, ok_tag("SET"));
        a = feed(&r, ok_rows(1, "1", PG_TXN_IN));
        CHECK(a == PG_SM_DONE && r.m.status == LOCK_GRANTED, "%s: held", designs[i]->name);
        a = pg_sm_lost(&r.m, NULL);
        CHECK(a == PG_SM_IGNORED && !r.m.session && r.m.orphans == 1,
              "%s: lost between operations: nothing to do now", designs[i]->name);
        long long trips = r.stats.round_trips;
        a = pg_sm_acquire(&r.m, "k", 5000 * MS);
        CHECK(a == PG_SM_DONE && r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "was lost"),
              "%s: a nested acquire on the lost hold fails", designs[i]->name);
        a = pg_sm_release(&r.m, "k");
        CHECK(a == PG_SM_DONE && r.m.release == RELEASE_NOT_OWNER,
              "%s: its release is not-owner", designs[i]->name);
        CHECK(r.stats.round_trips == trips, "%s: with nothing sent", designs[i]->name);
        a = pg_sm_acquire(&r.m, "k", 5000 * MS);
        CHECK(a == PG_SM_CONNECT, "%s: then a new session", designs[i]->name);
    }
    /* lost under a nested acquire: the outer hold is gone too */
    struct rig r;
    rig_init(&r, &FU);
    open_ok(&r);
    pg_sm_acquire(&r.m, "k", 5000 * MS);
    feed(&r, ok_tag("SET"));
    feed(&r, ok_rows(1, "1", PG_TXN_IN));
    pg_sm_acquire(&r.m, "k", 5000 * MS);
    enum pg_sm_act a = pg_sm_lost(&r.m, "reset");
    CHECK(a == PG_SM_DONE && r.m.status == LOCK_ERROR, "the nested acquire fails");
    a = pg_sm_release(&r.m, "k");
    CHECK(a == PG_SM_DONE && r.m.release == RELEASE_NOT_OWNER, "the outer release: not-owner");
}

/* Divergence: at the stop the group gave up any step of a lock wait (a
 * connect, the SET) and a connect of any operation; blocking gave up the
 * lock statement only. Now only the lock statement, by closing. */
static void test_stop(void)
{
    struct rig r;
    rig_init(&r, &ADV);
    open_ok(&r);
    adv_grant(&r, true);
    pg_sm_release(&r.m, "k");
    CHECK(pg_sm_stop(&r.m) == PG_SM_IGNORED, "the unlock runs to its end");
    feed(&r, ok_rows(1, "t", PG_TXN_IDLE));
    enum pg_sm_act a = pg_sm_acquire(&r.m, "k", 9000 * MS);
    CHECK(a == PG_SM_SEND && pg_sm_stop(&r.m) == PG_SM_IGNORED, "the SET runs to its end");
    a = feed(&r, ok_tag("SET"));
    a = pg_sm_stop(&r.m);
    CHECK(a == PG_SM_CLOSE && r.m.status == LOCK_TIMEOUT && !r.m.session,
          "a lock wait at the stop: the session closed, a timeout");
    /* a result after the close, with nothing in flight */
    struct pg_sm_result late = ok_rows(1, "", PG_TXN_IDLE);
    CHECK(pg_sm_result(&r.m, &late) == PG_SM_IGNORED && r.m.holds == 0,
          "a late result changes nothing");
    a = pg_sm_acquire(&r.m, "k", 9000 * MS);
    CHECK(a == PG_SM_CONNECT && pg_sm_stop(&r.m) == PG_SM_IGNORED,
          "a connect runs to its end");
}

static void test_quoting(void)
{
    struct rig r;
    rig_init(&r, &FU);
    open_ok(&r);
    pg_sm_acquire(&r.m, "a'b\\c", 2000 * MS);
    enum pg_sm_act a = feed(&r, ok_tag("SET"));
    CHECK(sends(&r.m, a, "BEGIN; SELECT 1 FROM locklab_locks WHERE name = E'a''b\\\\c' FOR UPDATE",
                NULL),
          "quotes and backslashes doubled, E'' (%s)", r.m.sql);
    feed(&r, ok_rows(1, "1", PG_TXN_IN));
    char key[700];
    memset(key, 'x', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    key[0] = '\'';
    a = pg_sm_acquire(&r.m, key, 2000 * MS);
    CHECK(a == PG_SM_DONE && r.m.status == LOCK_ERROR, "a key too long: an error, not cut");
    char id[24];
    pg_key_id("k", id, sizeof id);
    CHECK(strcmp(id, "-5808545878037627510") == 0, "the bigint: FNV-1a of the key (%s)", id);
}

int main(void)
{
    pg_key_id("k", id_k, sizeof id_k);
    test_open();
    test_advisory();
    test_timeouts();
    test_for_update();
    test_lost_under();
    test_lost_holds();
    test_stop();
    test_quoting();
    return check_done();
}
