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

/* fenced: overlap, the stock exact, and every stale holder of the pairs
 * (oracle_stale_holders) refused by the fence or aware of its loss and
 * touching nothing more; any damage, a stale access let through, or a
 * stale holder that touched nothing only by chance stays a violation. */
static void test_fenced(void)
{
    static struct run_result r; /* large: not on the stack */
    memset(&r, 0, sizeof r);
    r.acquired = 10;
    r.cross_check = CROSS_OK;
    CHECK(verdict_of(&r) == VERDICT_SAFE, "a clean run is safe");
    r.oracle.violations = 2;
    r.stale.chance = 2;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "overlap, nothing defended the resource");
    r.stale.chance = 0;
    r.stale.through = 2;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "overlap, the stale writes got through");
    r.fencing = FENCING_ON;
    r.stale.through = 0;
    r.stale.refused = 2;
    r.work.stale_writes_rejected = 1;
    CHECK(verdict_of(&r) == VERDICT_FENCED, "overlap, stale write refused, stock exact");
    r.work.stale_writes_rejected = 0;
    r.work.stale_reads_rejected = 1;
    CHECK(verdict_of(&r) == VERDICT_FENCED, "overlap, stale read refused, stock exact");
    r.stale.refused = 1;
    r.stale.through = 1;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION,
          "one stale holder refused, another's access got through: violation");
    r.stale.through = 0;
    r.stale.chance = 1;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION,
          "one refused, another untouched only by chance: violation");
    r.stale.chance = 0;
    r.stale.refused = 0;
    r.stale.noticed = 2;
    r.work.stale_reads_rejected = 0;
    CHECK(verdict_of(&r) == VERDICT_FENCED,
          "every stale holder noticed its loss and touched nothing: fenced, as a refusal");
    r.fencing = FENCING_OFF;
    CHECK(verdict_of(&r) == VERDICT_FENCED, "... fencing on or off");
    r.stale.noticed = 0;
    r.fencing = FENCING_ON;
    r.stale.ordered = 2;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "stale writes let in by the fence in token "
          "order, nothing refused or noticed: the defences never had to act, violation");
    r.stale.refused = 1;
    CHECK(verdict_of(&r) == VERDICT_FENCED, "in token order, and one refused: fenced");
    r.stale.ordered = 0;
    r.stale.noticed = 1;
    r.stale.refused = 1;
    CHECK(verdict_of(&r) == VERDICT_FENCED, "one noticed, one refused: fenced");
    r.stale.chance = 1;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "... and one by chance: violation");
    r.stale.chance = 0;
    r.intervals_dropped = 5;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION,
          "a log that overflowed and nothing refused: the pairs it lost are unknown");
    r.work.stale_writes_rejected = 1;
    CHECK(verdict_of(&r) == VERDICT_FENCED, "... the fence refused something: fenced");
    r.intervals_dropped = 0;
    r.stale = (struct oracle_stale){0};
    r.oracle.violations = 0;
    r.live_overlaps = 1;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "overlap the live counter alone saw: no pair "
          "to judge, violation");
    r.live_overlaps = 0;
    r.oracle.violations = 2;
    r.stale.refused = 2;
    r.work.stale_writes_rejected = 3;
    r.work.lost_updates = 1;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "a lost update despite fencing");
    r.work.lost_updates = 0;
    r.work.oversold = 1;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "oversold despite fencing");
    r.work.oversold = 0;
    r.stale.noticed = 2, r.stale.refused = 0;
    r.work.oversold = 1;
    CHECK(verdict_of(&r) == VERDICT_VIOLATION, "oversold though every stale holder noticed");
    r.work.oversold = 0;
    r.oracle.violations = 0;
    r.stale = (struct oracle_stale){0};
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
    r->stale.refused = 2;
    CHECK(verdict_of(r) == VERDICT_FENCED, "only stale holders refused: fenced");
    r->stale.refused = 0;
    r->stale.chance = 2;
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
