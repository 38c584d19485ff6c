/*
 * verdict.h - the verdict rules: one verdict from one run's result.
 *
 * Damage to the stock (oversold, a lost update) is a violation whatever
 * else happened; then a fence that went backwards (token-regressed),
 * overlap whose every stale holder the fence refused or that noticed its
 * loss and touched nothing more (fenced), other overlap (violation), a lab inconsistency (error), a service that never came
 * back after a server fault (unavailable), a killed holder nobody followed
 * (blocked), a fault that never landed and client or backend errors
 * (error), timeouts (blocked), faults that could put the lock at stake of
 * which none did (not-exercised), and safe only when none of these is
 * there.
 * docs/verdicts.md says the same for users.
 */
#ifndef LOCKLAB_VERDICT_H
#define LOCKLAB_VERDICT_H

#include "result.h"

/* The verdict the numbers in r support (before comparing to expect). */
enum verdict verdict_of(const struct run_result *r);

/* The two questions the verdict answers at once, apart (docs/results.md):
 * the lock's outcome, "exclusive" or "overlapped" (two holders at once, by
 * the logs or the live counter, whatever the design: an optimistic one
 * overlaps by design), and the resource's, "damaged" (oversold, a lost
 * update, or a stale holder's access let through), "stale-refused" (the
 * fence refused a stale holder, nothing got through) or "intact". */
const char *verdict_lock_outcome(const struct run_result *r);
const char *verdict_resource_outcome(const struct run_result *r);

#endif
