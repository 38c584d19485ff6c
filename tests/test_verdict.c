/*
 * test_verdict.c - the verdict rules (harness/oracle/verdict.c) and the
 * cross-check (cross_check.c) on results built by hand: no server, no
 * client, each rule and the order in which they win, so a change to them
 * shows here before any integration test runs.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cross_check.h"
#include "verdict.h"

/* fenced: overlap, fencing on, something refused, the stock exact; any
 * damage, or overlap the fence never refused, stays a violation. */
static void test_fenced(void)
{
    static struct run_result r; /* large: not on the stack */
    memset(&r, 0, sizeof r);
    r.acquired = 10;
    r.cross_check = CROSS_OK;
    CHECK(verdict_of(&r) == VERDICT_SAFE, "a clean run is safe");
    r.oracle.violations = 2;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "overlap without fencing");
    r.fencing = FENCING_UNSUPPORTED;
    r.work.stale_writes_rejected = 1; /* cannot happen unfenced; the mode decides */
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "overlap, fencing asked for, no token");
    r.fencing = FENCING_ON;
    CHECK(verdict_of(&r) == VERDICT_FENCED, "overlap, stale write refused, stock exact");
    r.work.stale_writes_rejected = 0;
    r.work.stale_reads_rejected = 1;
    CHECK(verdict_of(&r) == VERDICT_FENCED, "overlap, stale read refused, stock exact");
    r.work.stale_reads_rejected = 0;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "overlap the fence never refused");
    r.work.stale_writes_rejected = 3;
    r.work.lost_updates = 1;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "a lost update despite fencing");
    r.work.lost_updates = 0;
    r.work.oversold = 1;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "oversold despite fencing");
    r.work.oversold = 0;
    r.oracle.violations = 0;
    CHECK(verdict_of(&r) == VERDICT_SAFE, "no overlap: safe, fencing or not");
}

/* What wins when a run shows several things at once. */
static void test_order(void)
{
    struct run_result *r = calloc(1, sizeof *r);
    if (!r)
        return;
    r->acquired = 10;
    CHECK(verdict_of(r) == VERDICT_SAFE, "a clean run: safe");
    r->fault_errors = 300;
    r->unavailable = true;
    CHECK(verdict_of(r) == VERDICT_UNAVAILABLE, "no grant after the last server fault: "
          "unavailable, not safe");
    r->errors = 3;
    r->faults_missed = 1;
    CHECK(verdict_of(r) == VERDICT_UNAVAILABLE, "... nor error for errors it left");
    r->oracle.violations = 1;
    CHECK(verdict_of(r) == VERDICT_VIOLATION, "two holders outrank unavailable");
    memset(r, 0, sizeof *r);
    r->acquired = 10;
    r->fencing = FENCING_ON;
    r->rightful_refused = 4;
    r->work.stale_reads_rejected = 4;
    CHECK(verdict_of(r) == VERDICT_TOKEN_REGRESSED, "a rightful holder refused: "
          "token-regressed");
    r->oracle.violations = 2;
    CHECK(verdict_of(r) == VERDICT_TOKEN_REGRESSED, "... also when holders overlapped");
    r->work.lost_updates = 1;
    CHECK(verdict_of(r) == VERDICT_VIOLATION, "a stale write accepted: violation");
    r->work.lost_updates = 0;
    r->rightful_refused = 0;
    CHECK(verdict_of(r) == VERDICT_FENCED, "only stale holders refused: fenced");
    r->fencing = FENCING_OFF;
    CHECK(verdict_of(r) == VERDICT_VIOLATION, "unfenced overlap: violation");
    free(r);
}

/* not-exercised: faults that could put the lock at stake landed and none
 * did; it only ever replaces safe. */
static void test_not_exercised(void)
{
    struct run_result *r = calloc(1, sizeof *r);
    if (!r)
        return;
    r->acquired = 10;
    r->stake_judged = 2;
    CHECK(verdict_of(r) == VERDICT_NOT_EXERCISED, "two faults, neither at stake");
    r->stake_yes = 1;
    CHECK(verdict_of(r) == VERDICT_SAFE, "one at stake and held: safe");
    r->stake_yes = 0;
    r->timeouts = 1;
    CHECK(verdict_of(r) == VERDICT_BLOCKED, "timeouts outrank not-exercised");
    r->timeouts = 0;
    r->unavailable = true;
    CHECK(verdict_of(r) == VERDICT_UNAVAILABLE, "so does unavailable");
    r->unavailable = false;
    r->faults_missed = 1;
    CHECK(verdict_of(r) == VERDICT_ERROR, "and a fault that never landed");
    r->faults_missed = 0;
    r->oracle.violations = 1;
    CHECK(verdict_of(r) == VERDICT_VIOLATION, "overlap is never not-exercised");
    r->oracle.violations = 0;
    r->stake_judged = 0;
    CHECK(verdict_of(r) == VERDICT_SAFE, "no fault of those kinds (a holder killed): safe");
    CHECK(verdict_parse("not-exercised") == VERDICT_NOT_EXERCISED &&
              strcmp(verdict_name(VERDICT_NOT_EXERCISED), "not-exercised") == 0,
          "the word");
    free(r);
}

/* The cross-check (harness/oracle/cross_check.c): the live counter
 * replayed from the logs. Key 0: A enters (seq 0), B enters (1, finds A
 * inside), A exits (2), B exits (3): one overlap, two holders at most. */
static void test_cross_check(void)
{
    static struct run_result r;
    struct oracle_interval iv[2];
    const struct oracle_interval logs[2] = {
        {.key = 0, .client = 0, .enter_seq = 0, .exit_seq = 2},
        {.key = 0, .client = 1, .enter_seq = 1, .exit_seq = 3},
    };

    memset(&r, 0, sizeof r);
    r.live_overlaps = 1;
    r.max_holders_live = 2;
    memcpy(iv, logs, sizeof iv);
    CHECK(cross_check(&r, iv, 2) == 0 && r.cross_check == CROSS_OK, "live and logs agree");
    r.live_overlaps = 0;
    r.max_holders_live = 1;
    memcpy(iv, logs, sizeof iv);
    CHECK(cross_check(&r, iv, 2) == 0 && r.cross_check == CROSS_MISMATCH &&
              strstr(r.cross_note, "the logs 1 and 2"),
          "a live counter that missed the overlap is a mismatch: %s", r.cross_note);
    CHECK(verdict_of(&r) == VERDICT_ERROR, "a mismatch is the lab's error");
    r.intervals_dropped = 1;
    memcpy(iv, logs, sizeof iv);
    CHECK(cross_check(&r, iv, 2) == 0 && r.cross_check == CROSS_SKIPPED,
          "a full log cannot be replayed: skipped");
    r.intervals_dropped = 0;
    r.oracle_marks_unknown = 1;
    CHECK(cross_check(&r, iv, 2) == 0 && r.cross_check == CROSS_SKIPPED &&
              strstr(r.cross_note, "died in the middle"),
          "a client dead inside a mark: skipped (%s)", r.cross_note);
}

int main(void)
{
    test_fenced();
    test_order();
    test_not_exercised();
    test_cross_check();
    return check_done();
}
