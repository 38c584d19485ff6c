/*
 * client_cs.c - entry, exit and release bookkeeping of one critical
 * section (see client_cs.h).
 *
 * The interval in progress carries a phase, so that the parent can close
 * it exactly if the client dies in the middle (runner.c, close_interval):
 * ENTERING and EXITING bracket the atomic oracle marks, INSIDE is between
 * them, RELEASING from the exit mark until the interval is logged.
 */
#include "client_cs.h"

#include <errno.h>
#include <stdio.h>

#include "backend.h"

void client_cs_init(struct client_cs *cs, struct region *rg, const struct lock_ops *ops,
                    int idx, int k)
{
    *cs = (struct client_cs){
        .h = rg->head, .sl = &rg->slots[idx], .log = rg->iv + (int64_t)idx * rg->iv_cap,
        .iv_cap = rg->iv_cap, .ok = &rg->keys[k].oracle, .k = k, .idx = idx,
        /* only a release that removes a lock from a shared store can remove
         * someone else's; a process-local mutex has nothing to delete */
        .shared_store = backend_of(ops) != NULL,
        .has_ttl = (ops->caps & LOCK_CAP_TTL) != 0,
        .optimistic = (ops->caps & LOCK_CAP_OPTIMISTIC) != 0};
}

void client_slot_error(struct client_slot *sl, const struct lab_err *err)
{
    if (!sl->err[0])
        lab_text_copy(sl->err, sizeof sl->err, lab_err_text(err));
}

void client_lock_error(struct shared_head *h, struct client_slot *sl, int64_t *count,
                       const struct lab_err *err)
{
    if (lab_now_ns() <= atomic_load(&h->excused_until_ns)) {
        if (!sl->fault_errors++)
            lab_text_copy(sl->fault_err, sizeof sl->fault_err, lab_err_text(err));
        return;
    }
    (*count)++;
    client_slot_error(sl, err);
}

bool client_stop_cut(const struct shared_head *h, const struct lab_err *err)
{
    return h->stop && err && err->code == ECANCELED;
}

void client_lock_timeout(struct shared_head *h, struct client_slot *sl, int64_t t_wait)
{
    if (h->stop)
        return;
    int64_t from = atomic_load(&h->outage_from_ns), until = atomic_load(&h->outage_until_ns);
    if (from > 0 && t_wait <= until && lab_now_ns() >= from)
        sl->fault_timeouts++;
    else
        sl->timeouts++;
}

void client_cs_enter(struct client_cs *cs, int64_t t_wait, int64_t t_enter)
{
    struct client_slot *sl = cs->sl;
    cs->lease_floor = sl->stats.lease_floor_ns;
    sl->cur = (struct oracle_interval){
        .wait_ns = t_wait, .enter_ns = t_enter, .key = (uint32_t)cs->k,
        .client = (uint32_t)cs->idx, .token = sl->stats.fence_token};
    atomic_store(&sl->iv_phase, IV_ENTERING);
    oracle_enter(cs->ok, &sl->cur.enter_seq);
    atomic_store(&sl->iv_phase, IV_INSIDE);
    sl->acquired++;
    hist_record(&sl->acquire, (t_enter - t_wait + 500) / 1000);
}

void client_cs_exit(struct client_cs *cs, enum workload_step ws,
                    const struct workload_trace *tr, const struct lab_err *err)
{
    struct client_slot *sl = cs->sl;
    int64_t t_exit = lab_now_ns();
    sl->cur.exit_ns = t_exit;
    if (tr) {
        sl->cur.last_access_ns = tr->last_access_ns;
        sl->cur.notice_ns = tr->notice_ns;
        if (tr->fenced && tr->last_access_ns)
            sl->cur.flags |= ORACLE_FENCED;
    }
    atomic_store(&sl->iv_phase, IV_EXITING);
    sl->cur.exit_seq = oracle_exit(cs->ok);
    atomic_store(&sl->iv_phase, IV_RELEASING);
    hist_record(&sl->hold, (t_exit - sl->cur.enter_ns + 500) / 1000);
    if (ws == WORKLOAD_DONE && !cs->optimistic)
        sl->units++;
    else if (ws == WORKLOAD_FAILED) {
        sl->errors++;
        client_slot_error(sl, err);
    } else if (ws == WORKLOAD_ABORTED) {
        sl->aborted++; /* left before its write: the design said the lock may be lost */
        sl->cur.flags |= ORACLE_NOTICED;
    } else if (ws == WORKLOAD_STALE) {
        sl->stale_refused++;
        sl->cur.flags |= ORACLE_REFUSED;
    }
}

int client_cs_released(struct client_cs *cs, enum workload_step ws, enum release_status rs,
                       const struct lab_err *err)
{
    struct client_slot *sl = cs->sl;
    int64_t t_released = lab_now_ns();
    hist_record(&sl->release, (t_released - sl->cur.exit_ns + 500) / 1000);
    sl->cur.release_ns = t_released;
    /* only a release that knows it removed our lock is evidence (an
     * adapter's `released ?` is not: RELEASE_UNCHECKED) */
    if (rs == RELEASE_OK && cs->shared_store && !cs->optimistic)
        sl->cur.flags |= ORACLE_RELEASED_KEY;
    /* the lock was gone although it could not have expired yet: the
     * release is over when it returns, so returning before the floor
     * means the check came before it */
    if (rs == RELEASE_NOT_OWNER && cs->has_ttl && cs->lease_floor > 0 &&
        t_released < cs->lease_floor)
        sl->cur.flags |= ORACLE_LOST_EARLY;
    /* log the interval only now, complete, and publish it with a release
     * store: a client killed at any moment leaves no half-written entry,
     * and until the phase is back to NONE the parent can tell (by the
     * last entry) whether this one made it in */
    int64_t n_iv = atomic_load_explicit(&sl->n_iv, memory_order_relaxed);
    if (n_iv < cs->iv_cap) {
        cs->log[n_iv] = sl->cur;
        atomic_store_explicit(&sl->n_iv, n_iv + 1, memory_order_release);
    } else {
        sl->iv_dropped++; /* first: a death in between may count it twice, never zero times */
    }
    atomic_store(&sl->iv_phase, IV_NONE);
    if (rs == RELEASE_OK || rs == RELEASE_UNCHECKED) {
        sl->released++;
        sl->released_unchecked += rs == RELEASE_UNCHECKED;
        if (cs->optimistic && ws == WORKLOAD_DONE)
            sl->units++; /* the write that sold it went through */
    } else if (rs == RELEASE_NOT_OWNER) {
        sl->release_not_owner++;
        if (cs->optimistic && ws == WORKLOAD_DONE)
            return -1; /* a conflict: the same unit again, bounded by max_duration */
    } else if (!client_stop_cut(cs->h, err)) {
        client_lock_error(cs->h, sl, &sl->release_errors, err);
    }
    return 0;
}
