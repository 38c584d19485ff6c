/*
 * fault_records.c - the run's fault records (fault_engine.h): reserving one
 * in the shared log, publishing it once filled, recording a fault that was
 * skipped, and opening the window in which lock errors are a server
 * fault's doing.
 *
 * Every part of the engine records through these (the timeline, the
 * target finding, the servers' side, the actions' hooks), so they sit
 * below all of them.
 */
#include "fault_engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Reserve a record of the run's log; NULL when the log is full. */
struct fault_record *fault_rec_new(struct fault_log *log, const struct scenario *s, int spec,
                                   int *idx)
{
    int i = atomic_fetch_add(&log->n, 1);
    if (i >= FAULT_RECORDS_MAX)
        return NULL;
    struct fault_record *r = &log->rec[i];
    memset(r, 0, sizeof *r);
    r->spec = spec;
    r->action = s->faults[spec].action;
    snprintf(r->target, sizeof r->target, "%s", s->faults[spec].target_text);
    r->client = -1;
    r->recovery_ns = -1;
    r->left_ns = -1;
    r->taken_ns = -1;
    r->in_section_ns = -1;
    *idx = i;
    return r;
}

void fault_rec_publish(struct fault_log *log, int idx)
{
    atomic_store(&log->published[idx], 1);
}

void fault_rec_skip(struct faults *F, int spec, int64_t now, bool not_used, const char *fmt, ...)
{
    int idx;
    struct fault_record *r = fault_rec_new(&F->rg->head->faults, F->s, spec, &idx);
    if (!r)
        return;
    r->outcome = FAULT_SKIPPED;
    r->not_used = not_used;
    r->start_ns = r->end_ns = now;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
    fault_rec_publish(&F->rg->head->faults, idx);
}

/* Lock errors of every client so far (the fault's record keeps the figure
 * at its firing, so the report can say how many came after it). */
static int64_t errors_now(const struct faults *F)
{
    int64_t n = 0;
    for (int i = 0; i < F->n_clients; i++) {
        const struct client_slot *sl = &F->rg->slots[i];
        n += sl->errors + sl->fault_errors + sl->release_errors;
    }
    return n;
}

/* A server fault is about to act: lock errors are its doing from now on,
 * not from the end of this tick (update_excuse closes the window once the
 * store serves again). */
void fault_excuse_open(struct faults *F, struct fault_record *r)
{
    struct shared_head *h = F->rg->head;
    atomic_store(&h->excused_until_ns, INT64_MAX);
    if (r->whole_store) { /* until first: a reader never sees this start with the last end */
        atomic_store(&h->outage_until_ns, INT64_MAX);
        atomic_store(&h->outage_from_ns, r->start_ns);
    }
    r->excusing = true;
    r->grace_ns = GRACE_NS;
    r->errors_before = errors_now(F);
}
