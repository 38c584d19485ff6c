/*
 * cross_check.c - the oracle checked against itself (cross_check.h).
 *
 * The clients count holders live, on the key's word in shared memory, and
 * log every interval; the oracle judges from the logs. Replaying the live
 * counter from the logs (oracle_sequence) must give the live figures
 * exactly when the logs are complete: a difference is the lab's own error,
 * and the run's verdict says so rather than trusting either.
 */
#include "cross_check.h"

#include <stdio.h>

int cross_check(struct run_result *res, struct oracle_interval *all, int64_t n)
{
    struct oracle_sequence seq;
    if (res->oracle_marks_unknown) {
        res->cross_check = CROSS_SKIPPED;
        snprintf(res->cross_note, sizeof res->cross_note,
                 "%d client(s) died in the middle of an oracle mark", res->oracle_marks_unknown);
        return 0;
    }
    if (res->intervals_dropped) {
        res->cross_check = CROSS_SKIPPED;
        snprintf(res->cross_note, sizeof res->cross_note, "the interval log was full");
        return 0;
    }
    int rc = oracle_sequence(all, (size_t)n, &seq);
    if (rc != 0)
        return rc;
    if (seq.overlaps == res->live_overlaps && seq.max_holders == res->max_holders_live) {
        res->cross_check = CROSS_OK;
        return 0;
    }
    res->cross_check = CROSS_MISMATCH;
    snprintf(res->cross_note, sizeof res->cross_note,
             "live counter saw %lld overlapping entries and %d holders at most, the logs %lld and %d",
             (long long)res->live_overlaps, res->max_holders_live, (long long)seq.overlaps,
             seq.max_holders);
    return 0;
}
