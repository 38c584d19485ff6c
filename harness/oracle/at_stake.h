/*
 * at_stake.h - did a fault put the lock at stake? Judged after the run,
 * from the oracle's intervals alone (what the clients were seen to do),
 * for each fault that can cost a holder its lock while it still works:
 *
 *   - a pause or a partition of a holder, a delay, a clock jump, a
 *     partition that named no holder: at stake when, after the fault
 *     landed, another client was granted the key while a holder it caught
 *     (the one hit, or any inside during it) was still inside: the lock
 *     ended on the server under a working holder. Window: from that grant
 *     to the holder's exit. A partition's holder is caught in every
 *     section it entered before the heal: on its side of a split brain
 *     it may be granted again by a store the others no longer see.
 *   - a server fault that took the store's service away (kill, restart,
 *     stop, pause of a server) and a failover: the same, or a holder
 *     inside at the action (a failover: the kill of the master; its lost
 *     grant's holder when it names one) still inside when the store served
 *     again (back_ns, or leader_ns when an ensemble elected a leader before
 *     that; a failover: the new master took writes) while another
 *     client asked. Window: from the store's return to the holder's exit.
 *   - a failover done without a lost grant (the design gave back every
 *     grant no replica had acknowledged, redis-wait): the danger came and
 *     the design refused it. Window: the master's kill (zero long).
 *   - either kind, when the holder caught noticed its loss and left
 *     (ORACLE_NOTICED) before another client was granted, and that grant
 *     came while the fault was still on: the lock ended under a holder
 *     that defended itself. Window: that grant (zero long).
 *
 * Every other fault is n/a: a holder killed (liveness, judged by
 * recovery), a non-holder hit, a failpoint, a start, a fault that never
 * landed. The waiters of a window are the other clients on the key whose
 * asking reaches into it: from wait_ns to their grant, and the asks that
 * were never granted (struct stake_ask: the caller knows them, the
 * intervals do not).
 *
 * No I/O: tests/test_at_stake.c feeds it hand-built intervals.
 */
#ifndef LOCKLAB_AT_STAKE_H
#define LOCKLAB_AT_STAKE_H

#include <stdbool.h>
#include <stddef.h>

#include "fault_record.h"
#include "oracle.h"

/* "yes", "no", "n/a". */
const char *fault_stake_name(enum fault_stake s);

/* A client asking for key from from_ns to to_ns and never granted in it
 * (a closed loop's last acquire, cut short by the run's end). */
struct stake_ask {
    uint32_t client, key;
    int64_t from_ns, to_ns;
};

/* Judge r (its at_stake, window, waiters and reason) from iv, sorted by
 * oracle_sort, and the asks never granted (asks, n_asks; may be NULL,
 * 0). failpoint: the fault's entry targets a failpoint (n/a). Returns 0,
 * or -ENOMEM (r is left n/a). */
int at_stake_judge(struct fault_record *r, bool failpoint, const struct oracle_interval *iv,
                   size_t n, const struct stake_ask *asks, size_t n_asks);

#endif
