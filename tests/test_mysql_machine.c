/*
 * test_mysql_machine.c - the MariaDB designs' state machine
 * (impls/mariadb/mysql_machine.c) fed scripted events: no server, no clock.
 *
 * Each case plays what a server and a connection would do (an answer, an
 * error number, a connection lost under a statement, a failed connect, the
 * run's stop) and checks what the design sends and decides: GET_LOCK's
 * 1/0/NULL and its slices, FOR UPDATE's lock wait timeout and ROLLBACK,
 * the unique row's duplicate key, takeover and pause, the optimistic
 * version's affected rows. The decisions of mysql_machine.h are each a
 * case: a lost statement is never sent again and the next one connects
 * anew, a lost transaction's release sends nothing, a pause cut by the
 * stop ends without another attempt, a wait given up at the stop is a
 * timeout and what comes after it changes nothing.
 */
#include <string.h>

#include "check.h"
#include "mysql_machine.h"

#define MS 1000000LL
#define T0 (1000 * MS) /* the scripted clock starts here */

struct rig {
    struct mysql_sm m;
    struct lock_env env;
    struct lock_stats stats;
    struct lock_servers sv;
    int stop;
};

static void rig_init(struct rig *r, enum mysql_sm_kind kind)
{
    memset(r, 0, sizeof *r);
    r->env.servers = &r->sv;
    r->env.ttl_ns = 1000 * MS;
    r->env.retry_interval_ns = 10 * MS;
    r->env.stop = &r->stop;
    r->env.stats = &r->stats;
    mysql_sm_init(&r->m, kind, &r->env, "tok");
}

static struct mysql_sm_result rows(int64_t affected)
{
    return (struct mysql_sm_result){.affected = affected};
}
static struct mysql_sm_result row(int64_t v0, int64_t v1)
{
    return (struct mysql_sm_result){.row = true, .v = {v0, v1}};
}
static struct mysql_sm_result null_row(void)
{
    return (struct mysql_sm_result){.row = true, .null0 = true};
}
static struct mysql_sm_result no_row(void)
{
    return (struct mysql_sm_result){.null0 = true};
}
static struct mysql_sm_result error(int code)
{
    struct mysql_sm_result r = {0};
    lab_err_set(&r.err, code, "MariaDB query: error %d", code);
    return r;
}

static enum mysql_sm_act feed(struct rig *r, struct mysql_sm_result res, int64_t now)
{
    return mysql_sm_result(&r->m, &res, now);
}

/* The act is SEND and the statement starts with (or is) sql. */
static int sends(const struct rig *r, enum mysql_sm_act act, const char *sql)
{
    return act == MYSQL_SM_SEND && strncmp(r->m.sql, sql, strlen(sql)) == 0;
}

static void open_ok(struct rig *r)
{
    enum mysql_sm_act a = mysql_sm_open(&r->m, T0);
    CHECK(a == MYSQL_SM_CONNECT, "the open connects (act %d)", a);
    a = mysql_sm_connected(&r->m, true, NULL, T0);
    CHECK(a == MYSQL_SM_DONE && r->m.open_rc == 0, "opened");
    CHECK(r->stats.round_trips == 0, "the open counts no round trip");
}

static void test_open_refused(void)
{
    struct rig r;
    rig_init(&r, MYSQL_SM_GET_LOCK);
    mysql_sm_open(&r.m, T0);
    struct lab_err e;
    lab_err_set(&e, 2002, "cannot connect to the MariaDB lock store");
    enum mysql_sm_act a = mysql_sm_connected(&r.m, false, &e, T0);
    CHECK(a == MYSQL_SM_DONE && r.m.open_rc == -1 && r.m.err.code == 2002,
          "a refused connect fails the open with its error");
}

static void test_get_lock(void)
{
    struct rig r;
    rig_init(&r, MYSQL_SM_GET_LOCK);
    open_ok(&r);
    enum mysql_sm_act a = mysql_sm_acquire(&r.m, "k", 2500 * MS, T0);
    CHECK(sends(&r, a, "SELECT GET_LOCK('locklab/k', 1.000)"), "a slice of a second: %s",
          r.m.sql);
    CHECK(r.m.waits, "GET_LOCK waits in the server");
    a = feed(&r, row(0, 0), T0 + 1000 * MS);
    CHECK(sends(&r, a, "SELECT GET_LOCK('locklab/k', 1.000)"), "0: asked again");
    a = feed(&r, row(0, 0), T0 + 2000 * MS);
    CHECK(sends(&r, a, "SELECT GET_LOCK('locklab/k', 0.500)"), "the last slice is what is left: %s",
          r.m.sql);
    a = feed(&r, row(0, 0), T0 + 2500 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_TIMEOUT, "0 with the budget spent: timeout");
    CHECK(r.stats.round_trips == 3, "three slices, three round trips");

    a = mysql_sm_acquire(&r.m, "k", 2500 * MS, T0);
    a = feed(&r, row(1, 0), T0 + 1 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_GRANTED, "1: granted");
    CHECK(!r.m.waits, "nothing waits once done");
    a = mysql_sm_acquire(&r.m, "k", 2500 * MS, T0);
    a = feed(&r, null_row(), T0 + 1 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_ERROR, "NULL: an error");

    a = mysql_sm_release(&r.m, "k", T0);
    CHECK(sends(&r, a, "SELECT RELEASE_LOCK('locklab/k')"), "release: RELEASE_LOCK");
    a = feed(&r, row(1, 0), T0);
    CHECK(a == MYSQL_SM_DONE && r.m.release == RELEASE_OK, "1: released");
    mysql_sm_release(&r.m, "k", T0);
    a = feed(&r, row(0, 0), T0);
    CHECK(r.m.release == RELEASE_NOT_OWNER, "0: another session's");
    mysql_sm_release(&r.m, "k", T0);
    a = feed(&r, null_row(), T0);
    CHECK(r.m.release == RELEASE_NOT_OWNER, "NULL: nobody's");
    mysql_sm_release(&r.m, "k", T0);
    a = feed(&r, error(1146), T0);
    CHECK(r.m.release == RELEASE_ERROR && r.m.err.code == 1146, "an error: its number");
}

static void test_stop_slice(void)
{
    struct rig r;
    rig_init(&r, MYSQL_SM_GET_LOCK);
    open_ok(&r);
    mysql_sm_acquire(&r.m, "k", 30000 * MS, T0);
    r.stop = 1;
    enum mysql_sm_act a = feed(&r, row(0, 0), T0 + 1000 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_TIMEOUT, "a slice ending after the stop: timeout");
}

/* Decision: a connection lost under a statement fails it, never resent;
 * the next statement connects anew, and a session lost since the grant
 * answers RELEASE_LOCK on the new one. */
static void test_lost(void)
{
    struct rig r;
    rig_init(&r, MYSQL_SM_GET_LOCK);
    open_ok(&r);
    mysql_sm_acquire(&r.m, "k", 5000 * MS, T0);
    struct lab_err e;
    lab_err_set(&e, 2013, "Lost connection to server during query");
    enum mysql_sm_act a = mysql_sm_lost(&r.m, &e, T0 + 1 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_ERROR && r.m.err.code == 2013,
          "lost under GET_LOCK: an error, not sent again (act %d)", a);
    CHECK(r.stats.round_trips == 1, "one GET_LOCK only");
    a = mysql_sm_release(&r.m, "k", T0 + 2 * MS);
    CHECK(a == MYSQL_SM_CONNECT, "the next statement connects first");
    a = mysql_sm_connected(&r.m, true, NULL, T0 + 3 * MS);
    CHECK(sends(&r, a, "SELECT RELEASE_LOCK"), "then RELEASE_LOCK on the new session");
    a = feed(&r, null_row(), T0 + 4 * MS);
    CHECK(r.m.release == RELEASE_NOT_OWNER, "which holds nothing: not ours");

    r.m.connected = false;
    a = mysql_sm_acquire(&r.m, "k", 5000 * MS, T0);
    CHECK(a == MYSQL_SM_CONNECT, "no connection: connect first");
    lab_err_set(&e, 2003, "cannot connect");
    a = mysql_sm_connected(&r.m, false, &e, T0);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_ERROR && r.m.err.code == 2003,
          "a connect that fails fails the acquire with its error");
}

static void test_for_update(void)
{
    struct rig r;
    rig_init(&r, MYSQL_SM_FOR_UPDATE);
    open_ok(&r);
    enum mysql_sm_act a = mysql_sm_acquire(&r.m, "k", 1500 * MS, T0);
    CHECK(sends(&r, a, "START TRANSACTION"), "BEGIN first");
    CHECK(!r.m.waits, "BEGIN does not wait");
    a = feed(&r, rows(0), T0);
    CHECK(sends(&r, a, "SELECT holder FROM locklab_rows WHERE name = 'k' FOR UPDATE WAIT 1"),
          "then the row's locking read: %s", r.m.sql);
    CHECK(r.m.waits && r.m.in_txn, "which waits, in the transaction");
    a = feed(&r, row(0, 0), T0 + 1 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_GRANTED, "a row: granted");
    a = mysql_sm_release(&r.m, "k", T0);
    CHECK(sends(&r, a, "COMMIT"), "release: COMMIT");
    a = feed(&r, rows(0), T0);
    CHECK(r.m.release == RELEASE_OK, "committed");
    CHECK(r.stats.round_trips == 3, "BEGIN, FOR UPDATE, COMMIT");

    /* lock wait timeout: again until the budget is spent, then ROLLBACK */
    mysql_sm_acquire(&r.m, "k", 1500 * MS, T0);
    feed(&r, rows(0), T0);
    a = feed(&r, error(1205), T0 + 1000 * MS);
    CHECK(sends(&r, a, "SELECT holder"), "1205: the row asked again");
    a = feed(&r, error(1205), T0 + 2000 * MS);
    CHECK(sends(&r, a, "ROLLBACK"), "1205 with the budget spent: ROLLBACK");
    a = feed(&r, rows(0), T0 + 2000 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_TIMEOUT && !r.m.in_txn,
          "then a timeout, the transaction over");

    /* another error, or no row: ROLLBACK and an error */
    mysql_sm_acquire(&r.m, "k", 1500 * MS, T0);
    feed(&r, rows(0), T0);
    a = feed(&r, error(1213), T0);
    CHECK(sends(&r, a, "ROLLBACK"), "a deadlock: ROLLBACK");
    a = feed(&r, error(2014), T0);
    CHECK(r.m.status == LOCK_ERROR && r.m.err.code == 1213, "an error, the first one's, not "
          "the ROLLBACK's");
    mysql_sm_acquire(&r.m, "k", 1500 * MS, T0);
    feed(&r, rows(0), T0);
    a = feed(&r, no_row(), T0);
    CHECK(sends(&r, a, "ROLLBACK"), "no row: ROLLBACK");
    feed(&r, rows(0), T0);
    CHECK(r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "no row 'k'"), "no row: an error");
}

/* Decision: a transaction whose connection was lost is the server's to
 * roll back: no ROLLBACK on it, and its release sends nothing. */
static void test_for_update_lost(void)
{
    struct rig r;
    rig_init(&r, MYSQL_SM_FOR_UPDATE);
    open_ok(&r);
    mysql_sm_acquire(&r.m, "k", 1500 * MS, T0);
    feed(&r, rows(0), T0);
    enum mysql_sm_act a = mysql_sm_lost(&r.m, NULL, T0);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_ERROR && !r.m.in_txn,
          "lost under FOR UPDATE: an error, no ROLLBACK");

    a = mysql_sm_acquire(&r.m, "k", 1500 * MS, T0);
    CHECK(a == MYSQL_SM_CONNECT, "the next acquire connects anew");
    mysql_sm_connected(&r.m, true, NULL, T0);
    feed(&r, rows(0), T0);
    feed(&r, row(0, 0), T0);
    CHECK(r.m.status == LOCK_GRANTED, "granted on the new session");
    int64_t trips = r.stats.round_trips;
    mysql_sm_acquire(&r.m, "other", 1500 * MS, T0);
    mysql_sm_lost(&r.m, NULL, T0);
    a = mysql_sm_release(&r.m, "k", T0);
    CHECK(a == MYSQL_SM_DONE && r.m.release == RELEASE_NOT_OWNER && r.m.err.code != 0,
          "the transaction was lost since the grant: not ours, with why");
    CHECK(r.stats.round_trips == trips + 1, "and nothing sent for it");
}

static void test_unique(void)
{
    struct rig r;
    rig_init(&r, MYSQL_SM_UNIQUE);
    open_ok(&r);
    enum mysql_sm_act a = mysql_sm_acquire(&r.m, "k", 50 * MS, T0);
    CHECK(sends(&r, a, "INSERT INTO locklab_locks (name, owner, expires_at) VALUES ('k', 'tok', "
                       "NOW(6) + INTERVAL 1000000 MICROSECOND)"),
          "the row with owner and lease: %s", r.m.sql);
    a = feed(&r, rows(1), T0 + 2 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_GRANTED, "inserted: granted");
    CHECK(r.stats.lease_floor_ns == T0 + 1000 * MS, "the lease floor is sent + ttl");

    a = mysql_sm_acquire(&r.m, "k", 50 * MS, T0);
    a = feed(&r, error(1062), T0);
    CHECK(sends(&r, a, "UPDATE locklab_locks SET owner = 'tok'"), "a duplicate: the takeover");
    a = feed(&r, rows(0), T0);
    CHECK(a == MYSQL_SM_SLEEP && r.m.wake_at == T0 + 10 * MS && r.stats.polls == 1,
          "not expired: taken, a pause of retry_interval");
    a = mysql_sm_timer(&r.m, T0 + 10 * MS);
    CHECK(sends(&r, a, "INSERT"), "then INSERT again");
    a = feed(&r, error(1213), T0 + 11 * MS);
    CHECK(a == MYSQL_SM_SLEEP && r.stats.polls == 2, "a deadlock victim: taken");
    a = mysql_sm_timer(&r.m, T0 + 21 * MS);
    a = feed(&r, error(1062), T0 + 22 * MS);
    a = feed(&r, rows(1), T0 + 23 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_GRANTED, "an expired row taken over");
    CHECK(r.stats.lease_floor_ns == T0 + 21 * MS + 1000 * MS, "from the granting attempt on");

    mysql_sm_acquire(&r.m, "k", 50 * MS, T0);
    a = feed(&r, error(1146), T0);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_ERROR, "another error: an error");
    mysql_sm_acquire(&r.m, "k", 15 * MS, T0);
    feed(&r, error(1062), T0);
    feed(&r, rows(0), T0);
    a = mysql_sm_timer(&r.m, T0 + 10 * MS);
    feed(&r, error(1062), T0 + 10 * MS);
    a = feed(&r, error(1205), T0 + 15 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_TIMEOUT, "taken with the budget spent: timeout");

    a = mysql_sm_release(&r.m, "k", T0);
    CHECK(sends(&r, a, "DELETE FROM locklab_locks WHERE name = 'k' AND owner = 'tok'"),
          "release: DELETE by owner");
    feed(&r, rows(1), T0);
    CHECK(r.m.release == RELEASE_OK, "1 row: released");
    mysql_sm_release(&r.m, "k", T0);
    feed(&r, rows(0), T0);
    CHECK(r.m.release == RELEASE_NOT_OWNER, "0 rows: taken over meanwhile");
}

/* Decision: a pause the stop cut short ends in a timeout, no attempt more. */
static void test_stop_pause(void)
{
    struct rig r;
    rig_init(&r, MYSQL_SM_UNIQUE);
    open_ok(&r);
    mysql_sm_acquire(&r.m, "k", 5000 * MS, T0);
    feed(&r, error(1062), T0);
    enum mysql_sm_act a = feed(&r, rows(0), T0);
    CHECK(a == MYSQL_SM_SLEEP, "taken: a pause");
    int64_t trips = r.stats.round_trips;
    r.stop = 1;
    a = mysql_sm_timer(&r.m, T0 + 1 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_TIMEOUT, "cut by the stop: a timeout");
    CHECK(r.stats.round_trips == trips, "without one more INSERT");
}

/* Decision: a wait given up at the stop is a timeout on a closed
 * connection; an answer after it changes nothing. */
static void test_abandoned(void)
{
    struct rig r;
    rig_init(&r, MYSQL_SM_FOR_UPDATE);
    open_ok(&r);
    mysql_sm_acquire(&r.m, "k", 30000 * MS, T0);
    enum mysql_sm_act a = feed(&r, rows(0), T0);
    CHECK(r.m.waits, "the row's read waits");
    a = mysql_sm_abandoned(&r.m, T0 + 5 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_TIMEOUT && !r.m.connected && !r.m.in_txn,
          "given up: a timeout, the session gone with its transaction");
    a = feed(&r, row(0, 0), T0 + 6 * MS);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_TIMEOUT, "a late answer changes nothing");
    a = mysql_sm_release(&r.m, "k", T0);
    CHECK(r.m.release == RELEASE_NOT_OWNER, "and there is nothing to commit");
}

static void test_optimistic(void)
{
    struct rig r;
    rig_init(&r, MYSQL_SM_OPTIMISTIC);
    open_ok(&r);
    enum mysql_sm_act a = mysql_sm_acquire(&r.m, "k", 0, T0);
    CHECK(sends(&r, a, "SELECT stock, version FROM locklab_stock WHERE name = 'k'"), "the read");
    a = feed(&r, row(5, 7), T0);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_GRANTED && r.stats.read_stock == 5,
          "read: the stock the business sees");
    a = mysql_sm_release(&r.m, "k", T0);
    CHECK(sends(&r, a, "UPDATE locklab_stock SET stock = stock - 1, version = version + 1 "
                       "WHERE name = 'k' AND version = 7"),
          "the write is conditional on the version read: %s", r.m.sql);
    feed(&r, rows(0), T0);
    CHECK(r.m.release == RELEASE_NOT_OWNER && r.stats.polls == 1, "0 rows: a conflict, a poll");
    mysql_sm_release(&r.m, "k", T0);
    feed(&r, rows(1), T0);
    CHECK(r.m.release == RELEASE_OK && r.stats.polls == 1, "1 row: sold");

    mysql_sm_acquire(&r.m, "k", 0, T0);
    feed(&r, row(0, 9), T0);
    int64_t trips = r.stats.round_trips;
    a = mysql_sm_release(&r.m, "k", T0);
    CHECK(a == MYSQL_SM_DONE && r.m.release == RELEASE_OK && r.stats.round_trips == trips,
          "sold out at the read: nothing written");
    mysql_sm_acquire(&r.m, "k", 0, T0);
    a = feed(&r, no_row(), T0);
    CHECK(r.m.status == LOCK_ERROR && strstr(r.m.err.msg, "no stock row"), "no row: an error");
}

static void test_key(void)
{
    struct rig r;
    rig_init(&r, MYSQL_SM_GET_LOCK);
    open_ok(&r);
    enum mysql_sm_act a = mysql_sm_acquire(&r.m, "a'b\\c\n", 0, T0);
    CHECK(sends(&r, a, "SELECT GET_LOCK('locklab/a\\'b\\\\c\\n', 0.000)"),
          "the key escaped as a literal: %s", r.m.sql);
    char big[200];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    a = mysql_sm_acquire(&r.m, big, 0, T0);
    CHECK(a == MYSQL_SM_DONE && r.m.status == LOCK_ERROR, "a key too long: an error, nothing sent");
}

int main(void)
{
    test_open_refused();
    test_get_lock();
    test_stop_slice();
    test_lost();
    test_for_update();
    test_for_update_lost();
    test_unique();
    test_stop_pause();
    test_abandoned();
    test_optimistic();
    test_key();
    return check_done();
}
