/*
 * verdict.c - the verdict rules (see verdict.h): what a run's numbers
 * support, before it is compared with the scenario's expectation. Kept
 * apart from the runner, which gathers the numbers, so that the rules are
 * read in one place and unit-tested on results built by hand
 * (tests/test_verdict.c), with no server and no client.
 */
#include "verdict.h"

/* Two holders at once, the stock exact: what the stale holders did
 * decides (oracle_stale_holders). Any access of theirs that got through
 * unchecked, or one that touched nothing only by chance (nothing refused
 * it, it did not know), is a violation: nothing defended the resource.
 * When every stale holder was refused by the fence, came first in its
 * token order (ordered) or noticed its loss and touched nothing more, and
 * at least one was refused or noticed (overlap the defences never had to
 * stop stays a violation, as before), the resource defended itself or
 * the design told its holder in time: fenced. Overlap with no pair to judge (the live counter
 * alone saw it) is a violation; an interval log that overflowed leaves
 * pairs unknown, and then the fence must have refused something, as
 * before the pairs were judged. */
static enum verdict overlap_verdict(const struct run_result *r)
{
    const struct oracle_stale *st = &r->stale;
    if (st->through > 0 || st->chance > 0 || st->refused + st->noticed == 0)
        return VERDICT_VIOLATION;
    if (r->intervals_dropped > 0 &&
        !(r->fencing == FENCING_ON &&
          r->work.stale_writes_rejected + r->work.stale_reads_rejected > 0))
        return VERDICT_VIOLATION;
    return VERDICT_FENCED;
}

enum verdict verdict_of(const struct run_result *r)
{
    /* Overlap by the logs' timestamps or by the live counter's order of
     * events are both two holders at once: each mark lies between the
     * grant and the release. The live counter is left out only when a
     * client died in the middle of a mark (the parent cannot tell whether
     * the count saw it, so it may be off by one from then on). */
    bool live_counts = r->oracle_marks_unknown == 0;
    bool overlap = r->oracle.violations > 0 || (live_counts && r->live_overlaps > 0);
    /* an optimistic design (LOCK_CAP_OPTIMISTIC) lets several clients in at
     * once by design: only the damage to its stock judges it */
    if (r->ops && (r->ops->caps & LOCK_CAP_OPTIMISTIC))
        overlap = false;
    if (r->work.oversold > 0 || r->work.lost_updates > 0)
        return VERDICT_VIOLATION;
    /* The fenced store refused a holder that nobody newer overlapped: the
     * tokens went backwards (a store restarted empty). The stock is exact
     * (above), but the fence cannot be trusted: it refuses the rightful
     * holder, and would let a stale one through. */
    if (r->fencing == FENCING_ON && r->rightful_refused > 0)
        return VERDICT_TOKEN_REGRESSED;
    /* Two holders, the stock exact (above): fenced when every stale holder
     * was refused or noticed its loss, else a violation. */
    if (overlap)
        return overlap_verdict(r);
    if (r->cross_check == CROSS_MISMATCH)
        return VERDICT_ERROR; /* the lab lost track: nothing it says is sure */
    /* no grant after the last server fault: the lock errors it excused are
     * not a clean run, they are a service that never came back */
    if (r->unavailable)
        return VERDICT_UNAVAILABLE;
    if (r->unrecovered_kills > 0)
        return VERDICT_BLOCKED; /* a killed holder's lock was never granted again */
    if (r->faults_missed > 0)
        return VERDICT_ERROR; /* "safe" because a fault never hit would be a lie */
    if (r->clients_failed_start || r->clients_crashed || r->errors || r->release_errors)
        return VERDICT_ERROR;
    if (r->timeouts > 0 || r->nested_timeouts > 0)
        return VERDICT_BLOCKED;
    if (r->acquired == 0)
        return VERDICT_ERROR;
    /* faults that could put the lock at stake landed, and none did: the
     * run is clean but showed nothing of the lock under them (at_stake.h);
     * faults of no such kind (a holder killed, failpoints) leave it safe */
    if (r->stake_judged > 0 && r->stake_yes == 0)
        return VERDICT_NOT_EXERCISED;
    return VERDICT_SAFE;
}

const char *verdict_lock_outcome(const struct run_result *r)
{
    bool live_counts = r->oracle_marks_unknown == 0;
    bool overlap = r->oracle.violations > 0 || (live_counts && r->live_overlaps > 0);
    return overlap ? "overlapped" : "exclusive";
}

const char *verdict_resource_outcome(const struct run_result *r)
{
    if (r->work.oversold > 0 || r->work.lost_updates > 0 || r->stale.through > 0)
        return "damaged";
    return r->stale.refused > 0 ? "stale-refused" : "intact";
}
