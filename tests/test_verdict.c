/*
 * test_verdict.c - the verdict rules (harness/oracle/verdict.c) on results built
 * by hand: no server, no client, each rule and the order in which they
 * win, so a change to them shows here before any integration test runs.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
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

int main(void)
{
    test_fenced();
    test_order();
    return check_done();
}
