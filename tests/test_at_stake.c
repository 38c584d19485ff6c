/*
 * test_at_stake.c - whether a fault put the lock at stake
 * (harness/oracle/at_stake.c), on intervals and fault records built by
 * hand: a holder paused through another's grant or not, a store that
 * served again with a holder still inside and another asking, the
 * failover of issue 32 whose holder left before the new master took
 * writes, a clock jump on one key of two, and the faults never judged.
 */
#include <string.h>

#include "at_stake.h"
#include "check.h"

#define MS(x) ((int64_t)(x) * 1000000LL)

/* A section of client c on key k: asking from w, inside from e to x (ms). */
static struct oracle_interval sec(int c, int k, int w, int e, int x)
{
    return (struct oracle_interval){.client = (uint32_t)c, .key = (uint32_t)k,
                                    .wait_ns = MS(w), .enter_ns = MS(e), .exit_ns = MS(x)};
}

static struct fault_record rec(enum fault_action a, int client, bool holder, int at, int end)
{
    return (struct fault_record){.action = a, .outcome = FAULT_DONE, .client = client,
                                 .holder = holder, .start_ns = MS(at), .end_ns = MS(end)};
}

static void judge(struct fault_record *r, bool failpoint, struct oracle_interval *iv, size_t n)
{
    oracle_sort(iv, n);
    CHECK(at_stake_judge(r, failpoint, iv, n, NULL, 0) == 0, "judged");
}

/* A paused holder: another client granted while it was still inside. */
static void test_pause_taken(void)
{
    struct oracle_interval iv[] = { /* given out of order: the sort puts them right */
        sec(2, 0, 1800, 2600, 2700), sec(1, 0, 1200, 2000, 2500), sec(0, 0, 900, 1000, 5000),
        sec(3, 0, 5200, 5300, 5400), /* asked after the holder left: not a waiter */
    };
    struct fault_record r = rec(FAULT_PAUSE, 0, true, 1500, 4800);
    judge(&r, false, iv, 4);
    CHECK(r.at_stake == STAKE_YES, "paused holder, client 1 granted under it: %s", r.stake_why);
    CHECK(r.stake_from_ns == MS(2000) && r.stake_to_ns == MS(5000), "window from the grant "
          "to the holder's exit");
    CHECK(r.stake_waiters == 2, "clients 1 and 2 asked in it (%d)", r.stake_waiters);
    CHECK(strcmp(r.stake_why, "client 0 still inside 3.00 s after client 1 was granted") == 0,
          "%s", r.stake_why);
    CHECK(strcmp(fault_stake_name(r.at_stake), "yes") == 0, "yes");
}

/* A paused holder that left before anyone else was granted. */
static void test_pause_not_taken(void)
{
    struct oracle_interval iv[] = {
        sec(0, 0, 900, 1000, 1800), sec(1, 0, 1200, 1900, 2000),
    };
    struct fault_record r = rec(FAULT_PAUSE, 0, true, 1500, 1700);
    judge(&r, false, iv, 2);
    CHECK(r.at_stake == STAKE_NO, "left first: not at stake (%s)", r.stake_why);
    CHECK(strcmp(r.stake_why, "client 0 left 0.10 s before another client (1) was granted") == 0,
          "%s", r.stake_why);
    CHECK(r.stake_from_ns == 0 && r.stake_to_ns == 0 && r.stake_waiters == 0, "no window");
    /* a grant on another key is no taking of this holder's lock */
    struct oracle_interval keyed[] = {
        sec(0, 0, 900, 1000, 3000), sec(1, 1, 1200, 1600, 2000),
    };
    r = rec(FAULT_PARTITION, 0, true, 1500, 2500);
    judge(&r, false, keyed, 2);
    CHECK(r.at_stake == STAKE_NO, "a cut holder, another key granted: no (%s)", r.stake_why);

    /* a cut holder that noticed its loss and left, the next grant during
     * the cut: at stake, and the defence held; after the heal: not */
    struct oracle_interval noticed[] = {
        sec(0, 0, 900, 1000, 1670), sec(1, 0, 1100, 2050, 2100),
    };
    noticed[0].flags = ORACLE_NOTICED;
    r = rec(FAULT_PARTITION, 0, true, 1000, 4000);
    judge(&r, false, noticed, 2);
    CHECK(r.at_stake == STAKE_YES && r.stake_from_ns == MS(2050) && r.stake_to_ns == MS(2050) &&
              r.stake_waiters == 1,
          "noticed, granted to another during the cut: %s", r.stake_why);
    CHECK(strstr(r.stake_why, "noticed its loss"), "%s", r.stake_why);
    r = rec(FAULT_PARTITION, 0, true, 1000, 2000);
    judge(&r, false, noticed, 2);
    CHECK(r.at_stake == STAKE_NO, "noticed, granted after the heal: %s", r.stake_why);
    noticed[0].flags = 0;
    r = rec(FAULT_PARTITION, 0, true, 1000, 4000);
    judge(&r, false, noticed, 2);
    CHECK(r.at_stake == STAKE_NO, "left on its own (business over): %s", r.stake_why);

    /* a split brain: the holder at the cut left at once, its side's old
     * master granted it again during the cut while the new master had
     * granted client 1 (tests/it_partition_redis.sh's split-brain) */
    struct oracle_interval split[] = {
        sec(0, 0, 900, 1000, 1300), sec(0, 0, 2000, 2000, 2300), sec(1, 0, 1100, 2100, 2400),
    };
    r = rec(FAULT_PARTITION, 0, true, 1200, 5000);
    judge(&r, false, split, 3);
    CHECK(r.at_stake == STAKE_YES && r.stake_from_ns == MS(2100) && r.stake_to_ns == MS(2300),
          "granted again on its side of the cut, another granted on the other: %s",
          r.stake_why);
    /* the same second section after the heal: not caught by the cut */
    r = rec(FAULT_PARTITION, 0, true, 1200, 1900);
    judge(&r, false, split, 3);
    CHECK(r.at_stake == STAKE_NO, "granted again after the heal: not the cut's (%s)",
          r.stake_why);
}

/* The faults that are never judged. */
static void test_not_judged(void)
{
    struct oracle_interval iv[] = {
        sec(0, 0, 900, 1000, 5000), sec(1, 0, 1200, 2000, 2500),
    };
    struct fault_record r = rec(FAULT_PAUSE, 1, false, 1500, 1700);
    judge(&r, false, iv, 2);
    CHECK(r.at_stake == STAKE_NA, "a paused non-holder: n/a");
    r = rec(FAULT_KILL, 0, true, 1500, 1500);
    judge(&r, false, iv, 2);
    CHECK(r.at_stake == STAKE_NA && strstr(r.stake_why, "recovery"), "a killed holder: n/a "
          "(%s)", r.stake_why);
    r = rec(FAULT_PAUSE, 0, true, 1500, 1700);
    judge(&r, true, iv, 2);
    CHECK(r.at_stake == STAKE_NA, "at a failpoint: n/a");
    r = rec(FAULT_PAUSE, 0, true, 1500, 1700);
    r.outcome = FAULT_SKIPPED;
    judge(&r, false, iv, 2);
    CHECK(r.at_stake == STAKE_NA, "skipped: n/a");
    r = rec(FAULT_RESTART, -1, false, 1500, 1500);
    r.not_used = true;
    judge(&r, false, iv, 2);
    CHECK(r.at_stake == STAKE_NA, "not used by the design: n/a");
    r = rec(FAULT_START, -1, false, 1500, 1500);
    judge(&r, false, iv, 2);
    CHECK(r.at_stake == STAKE_NA, "a start: n/a");
}

/* A restart: a holder inside at the kill and when the store served again,
 * another asking; one that left first; one held through that nobody asked
 * for; a store that never came back. */
static void test_server(void)
{
    struct oracle_interval iv[] = {
        sec(0, 0, 900, 1000, 4000), sec(1, 0, 2000, 4100, 4200),
    };
    struct fault_record r = rec(FAULT_RESTART, -1, false, 1500, 1500);
    r.back_ns = MS(2500);
    judge(&r, false, iv, 2);
    CHECK(r.at_stake == STAKE_YES && r.stake_from_ns == MS(2500) && r.stake_to_ns == MS(4000) &&
              r.stake_waiters == 1,
          "held through the restart while client 1 asked (%s)", r.stake_why);
    CHECK(strcmp(r.stake_why, "client 0 still inside 1.50 s after the store served again, "
                              "1 other asking") == 0, "%s", r.stake_why);

    /* an ensemble that elected a leader before the killed member was back */
    r = rec(FAULT_RESTART, -1, false, 1500, 1500);
    r.back_ns = MS(3000);
    r.leader_ns = MS(2500);
    judge(&r, false, iv, 2);
    CHECK(r.at_stake == STAKE_YES && r.stake_from_ns == MS(2500) &&
              strstr(r.stake_why, "after a new leader served"),
          "from the new leader on: %s", r.stake_why);

    struct oracle_interval early[] = {
        sec(0, 0, 900, 1000, 2000), sec(1, 0, 2000, 2600, 2700),
    };
    r = rec(FAULT_KILL, -1, false, 1500, 1500);
    r.back_ns = MS(2500);
    judge(&r, false, early, 2);
    CHECK(r.at_stake == STAKE_NO && strcmp(r.stake_why, "client 0 left 0.50 s before the store "
                                                        "served again") == 0,
          "left before the store was back: %s", r.stake_why);

    struct oracle_interval alone[] = {
        sec(0, 0, 900, 1000, 4000), sec(1, 0, 4500, 4600, 4700),
    };
    r = rec(FAULT_RESTART, -1, false, 1500, 1500);
    r.back_ns = MS(2500);
    judge(&r, false, alone, 2);
    CHECK(r.at_stake == STAKE_NO && strstr(r.stake_why, "no other client asked"),
          "held through, nobody asking: %s", r.stake_why);

    /* the same, client 1's ask never granted (the run ended): still asking */
    struct oracle_interval only[] = {sec(0, 0, 900, 1000, 4000), sec(1, 0, 100, 200, 300)};
    struct stake_ask ask = {.client = 1, .key = 0, .from_ns = MS(350), .to_ns = MS(4050)};
    r = rec(FAULT_RESTART, -1, false, 1500, 1500);
    r.back_ns = MS(2500);
    oracle_sort(only, 2);
    CHECK(at_stake_judge(&r, false, only, 2, &ask, 1) == 0 && r.at_stake == STAKE_YES &&
              r.stake_waiters == 1,
          "a waiter never granted counts: %s", r.stake_why);
    ask.key = 1;
    CHECK(at_stake_judge(&r, false, only, 2, &ask, 1) == 0 && r.at_stake == STAKE_NO,
          "... on its own key only: %s", r.stake_why);

    r = rec(FAULT_STOP, -1, false, 1500, 1500); /* never back */
    judge(&r, false, iv, 2);
    CHECK(r.at_stake == STAKE_NO && strcmp(r.stake_why, "the store did not serve again") == 0,
          "never back: %s", r.stake_why);

    struct oracle_interval none[] = {sec(1, 0, 2000, 2600, 2700)};
    r = rec(FAULT_PAUSE, -1, false, 1500, 2000); /* a server paused, nobody inside */
    r.back_ns = MS(2000);
    judge(&r, false, none, 1);
    CHECK(r.at_stake == STAKE_NO && strcmp(r.stake_why, "no client was inside at its action") == 0,
          "%s", r.stake_why);
}

/* Issue 32's failover: client 3 granted after the cut at 3.00 s, the
 * master killed at 4.00 s, client 3 out at 6.00 s, the new master
 * writable at 6.28 s: the lost grant could not be used. Then the same with
 * client 3 inside until 7.00 s and client 1 asking from 3.5 s. */
static void test_failover(void)
{
    struct oracle_interval iv[] = {
        sec(0, 0, 100, 200, 1000), sec(3, 0, 2900, 3000, 6000), sec(1, 0, 3500, 6500, 6600),
    };
    struct fault_record r = rec(FAULT_FAILOVER, 3, true, 2500, 6280);
    r.n_phases = 4;
    const char *names[] = {"cut", "granted", "killed", "writable"};
    int at[] = {2500, 3000, 4000, 6280};
    for (int i = 0; i < 4; i++) {
        strcpy(r.phase[i].name, names[i]);
        r.phase[i].at_ns = MS(at[i]);
    }
    r.back_ns = MS(6280);
    struct fault_record late = r;
    judge(&r, false, iv, 3);
    CHECK(r.at_stake == STAKE_NO &&
              strcmp(r.stake_why, "client 3 left 0.28 s before the new master took writes") == 0,
          "the lost grant's holder left first: %s", r.stake_why);

    iv[1] = sec(3, 0, 2900, 3000, 7000);
    iv[2] = sec(1, 0, 3500, 7100, 7200);
    judge(&late, false, iv, 3);
    CHECK(late.at_stake == STAKE_YES && late.stake_from_ns == MS(6280) &&
              late.stake_to_ns == MS(7000) && late.stake_waiters == 1,
          "inside when the new master took writes, client 1 asking: %s", late.stake_why);
    CHECK(strstr(late.stake_why, "after the new master took writes"), "%s", late.stake_why);

    struct fault_record refused = rec(FAULT_FAILOVER, -1, false, 2500, 6280);
    memcpy(refused.phase, late.phase, sizeof refused.phase);
    refused.n_phases = 4;
    judge(&refused, false, iv, 3);
    CHECK(refused.at_stake == STAKE_YES && refused.stake_from_ns == MS(4000) &&
              strstr(refused.stake_why, "gave back"),
          "done with no lost grant: the design refused it (%s)", refused.stake_why);

    struct fault_record nokill = rec(FAULT_FAILOVER, -1, false, 2500, 6280);
    judge(&nokill, false, iv, 3);
    CHECK(nokill.at_stake == STAKE_NA, "a failover that killed nothing: n/a");
}

/* A clock jump: any holder inside at it, granted under on its own key. */
static void test_clock_and_delay(void)
{
    struct oracle_interval iv[] = {
        sec(0, 0, 900, 1000, 3000), sec(1, 1, 900, 1000, 3000), sec(2, 1, 1100, 1500, 1600),
    };
    struct fault_record r = rec(FAULT_CLOCK_JUMP, -1, false, 1200, 1200);
    judge(&r, false, iv, 3);
    CHECK(r.at_stake == STAKE_YES && r.stake_from_ns == MS(1500) && r.stake_to_ns == MS(3000),
          "a lease ended early on key 1: %s", r.stake_why);
    CHECK(strcmp(r.stake_why, "client 1 still inside 1.50 s after client 2 was granted") == 0,
          "%s", r.stake_why);
    r = rec(FAULT_DELAY, -1, false, 3100, 4000);
    judge(&r, false, iv, 3);
    CHECK(r.at_stake == STAKE_NO &&
              strcmp(r.stake_why, "no client was inside while it lasted") == 0,
          "a delay after every section: %s", r.stake_why);
    r = rec(FAULT_DELAY, -1, false, 500, 1200); /* caught both holders as they entered */
    judge(&r, false, iv, 3);
    CHECK(r.at_stake == STAKE_YES, "a delay over the grants: %s", r.stake_why);
}

int main(void)
{
    test_pause_taken();
    test_pause_not_taken();
    test_not_judged();
    test_server();
    test_failover();
    test_clock_and_delay();
    return check_done();
}
