/*
 * fault_failover.c - failover: the store's replicas held back from the
 * master, the master killed right after a client was granted once the
 * replicas' older copy of the lock was gone (the grant on the master
 * only, its holder a few milliseconds into its section), the sentinels
 * left to promote a replica that never saw that grant (the
 * backend's steps, backend_ops.failover_step; Redis with sentinels). A row
 * of the action table (fault_action.h), the one action that goes on after
 * it fired: its steps are taken from every tick, and the end of a run sees
 * it through (or undoes it when interrupted).
 *
 * Its record has phases (cut, granted, killed, switched, writable,
 * rejoined), how far into its holder's section the kill landed, and says
 * whether a fresh grant was lost and whether its holder was still inside
 * when the new master took writes; one that found none to lose tested
 * nothing and is `skipped`, never a `safe`.
 */
#include "fault_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grants the clients gave back so far because too few replicas had them. */
static int64_t unreplicated_now(const struct faults *F)
{
    int64_t n = 0;
    for (int i = 0; i < F->n_clients; i++)
        n += F->rg->slots[i].stats.unreplicated;
    return n;
}

/* Start a failover (the backend's steps, backend.h); step_failover() drives
 * it from then on. srv: the master the target names now. */
static enum fault_fire fire_failover(struct faults *F, int spec, struct server *srv, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    const struct backend_ops *be = backend_of(F->ops);
    if (!srv) {
        fault_skip_missing(F, spec, now);
        return FAULT_FIRED;
    }
    if (!be->failover_step) {
        fault_rec_skip(F, spec, now, true, "%s has no failover", be->title);
        return FAULT_FIRED;
    }
    if (F->fo.on) {
        fault_rec_skip(F, spec, now, false, "the last failover is still under way");
        return FAULT_FIRED;
    }
    int idx;
    struct fault_record *r = fault_rec_new(&F->rg->head->faults, F->s, spec, &idx);
    if (!r)
        return FAULT_FIRED;
    memset(&F->fo, 0, sizeof F->fo);
    r->start_ns = now;
    r->outcome = FAULT_ACTIVE;
    fault_excuse_open(F, r);
    scenario_key_of(F->s, 0, F->fo.fo.key, sizeof F->fo.fo.key);
    struct lab_err err = {0};
    if (be->failover_step(&F->fo.fo, false, false, now, &err) != 0) {
        r->end_ns = r->back_ns = now; /* nothing was cut: the store served throughout */
        r->outcome = FAULT_FAILED;
        snprintf(r->note, sizeof r->note, "%.120s", err.msg);
    } else {
        F->fo.on = true;
        F->fo.spec = spec;
        F->fo.rec = idx;
        F->fo.window_end = now + f->window_ns;
        F->fo.unreplicated_at_cut = unreplicated_now(F);
        F->fo.who = -1;
        snprintf(r->hit, sizeof r->hit, "%s", f->target_text);
    }
    fault_rec_publish(&F->rg->head->faults, idx);
    return FAULT_FIRED;
}

/* Add phase name at t (when reached) to r. */
static void add_phase(struct fault_record *r, const char *name, int64_t t)
{
    if (t <= 0 || r->n_phases >= FAULT_PHASES_MAX)
        return;
    snprintf(r->phase[r->n_phases].name, sizeof r->phase[0].name, "%s", name);
    r->phase[r->n_phases++].at_ns = t;
}

/* When client i left the critical section it was granted at enter: 0
 * while it is still inside, -1 when its log no longer shows it. */
static int64_t holder_exit(const struct faults *F, int i, int64_t enter)
{
    const struct client_slot *sl = &F->rg->slots[i];
    int ph = atomic_load(&sl->iv_phase);
    if (sl->cur.enter_ns == enter)
        return ph == IV_INSIDE || ph == IV_ENTERING ? 0 : sl->cur.exit_ns;
    const struct oracle_interval *log = F->rg->iv + (int64_t)i * F->rg->iv_cap;
    for (int64_t k = atomic_load(&sl->n_iv) - 1; k >= 0; k--)
        if (log[k].enter_ns == enter)
            return log[k].exit_ns;
    return -1;
}

/* Is client i inside the section it was granted at enter? */
static bool inside_at(const struct faults *F, int i, int64_t enter)
{
    const struct client_slot *sl = &F->rg->slots[i];
    return atomic_load(&sl->iv_phase) == IV_INSIDE && sl->cur.enter_ns == enter;
}

/* Close the failover's record: its phases, what they took, and whether it
 * lost a fresh grant. One that found none to lose tested nothing, unless
 * the design itself refused every grant the replicas had not acknowledged
 * (redis-wait): then the refusal is what the run shows. Otherwise the
 * record is `skipped`, a fault that never landed (never a `safe`). */
static void failover_record(struct faults *F, int rc, const struct lab_err *err, int64_t now)
{
    struct fault_record *r = fault_rec(F, F->fo.rec);
    const struct failover *fo = &F->fo.fo;
    add_phase(r, "cut", fo->cut_ns);
    add_phase(r, "granted", fo->granted_ns);
    add_phase(r, "killed", fo->killed_ns);
    add_phase(r, "switched", fo->switched_ns);
    add_phase(r, "writable", fo->writable_ns);
    add_phase(r, "rejoined", fo->rejoined_ns);
    if (fo->cut_ns)
        r->start_ns = fo->cut_ns; /* the fault's band: from the cut to the first write */
    r->end_ns = fo->writable_ns ? fo->writable_ns : now;
    r->back_ns = fo->writable_ns; /* the new master took a write: it serves */
    int64_t refused = unreplicated_now(F) - F->fo.unreplicated_at_cut;
    bool lost = fo->granted_ns != 0;
    char what[200];
    if (lost)
        snprintf(what, sizeof what, "lost a fresh grant: client %d granted %.2f s after the "
                 "start, after the cut and the replicas' copy (%s), not replicated; killed %.2f ms "
                 "into its section%s", r->client, (double)(fo->granted_ns - F->start) / 1e9,
                 fo->copy_gone_ns <= fo->cut_ns ? "none held" : "expired",
                 (double)(fo->killed_ns - fo->granted_ns) / 1e6,
                 F->fo.inside_at_kill ? "" : ", which it had left");
    else if (!fo->killed_ns)
        snprintf(what, sizeof what, "no client was granted while replication was cut");
    else if (refused > 0)
        snprintf(what, sizeof what, "found none to lose: the design gave back %lld grants "
                 "no replica had acknowledged", (long long)refused);
    else
        snprintf(what, sizeof what, "found none to lose: no fresh grant reached the master in "
                 "the %.1f s window (none once the replicas' copy was gone)",
                 (double)F->s->faults[F->fo.spec].window_ns / 1e9);
    r->outcome = rc != 1 ? FAULT_FAILED : lost || refused > 0 ? FAULT_DONE : FAULT_SKIPPED;
    if (rc == 1) {
        snprintf(r->note, sizeof r->note, "%s; switched %.2f s and writable %.2f s after the kill",
                 what, (double)(fo->switched_ns - fo->killed_ns) / 1e9,
                 (double)(fo->writable_ns - fo->killed_ns) / 1e9);
        if (lost) {
            int64_t left = holder_exit(F, r->client, fo->granted_ns);
            if (left == 0)
                fault_note_add(r, "its holder still inside when the new master took writes");
            else if (left > 0)
                fault_note_add(r, "its holder left %.2f s %s the new master took writes",
                               (double)llabs(left - fo->writable_ns) / 1e9,
                               left < fo->writable_ns ? "before" : "after");
        }
    } else
        snprintf(r->note, sizeof r->note, "%.90s; %.30s", what, err ? err->msg : "interrupted");
    F->fo.on = false;
}

/* The grant the kill aims at: a client inside a critical section it was
 * granted after the cut and after the replicas' older copy of the lock
 * expired (that grant is on the master alone), read from the shared
 * slots; the latest such grant, so that its holder has the most of its
 * section ahead. Its client, its grant in *enter; -1 none. */
static int aim_grant(const struct faults *F, const struct failover *fo, int64_t *enter)
{
    int who = -1;
    int64_t after = fo->copy_gone_ns > fo->cut_ns ? fo->copy_gone_ns : fo->cut_ns + 1;
    for (int i = 0; i < F->n_clients; i++) {
        const struct client_slot *sl = &F->rg->slots[i];
        if (F->pids[i] <= 0 || atomic_load(&sl->iv_phase) != IV_INSIDE)
            continue;
        int64_t e = sl->cur.enter_ns;
        if (e >= after && (who < 0 || e > *enter)) {
            who = i;
            *enter = e;
        }
    }
    return who;
}

/* The next step of the failover under way; when the engine needs to look
 * again. Once replication is cut, each look (every FAILOVER_POLL_NS) asks
 * aim_grant; the first grant it finds, the master is killed at once. */
static int64_t step_failover(struct faults *F, int64_t now)
{
    if (!F->fo.on)
        return INT64_MAX;
    struct failover *fo = &F->fo.fo;
    int64_t enter = 0;
    int who = fo->cut_ns && !fo->killed_ns ? aim_grant(F, fo, &enter) : -1;
    if (who >= 0)
        fo->granted_ns = enter; /* the backend kills now */
    struct lab_err err = {0};
    int rc = backend_of(F->ops)->failover_step(fo, who >= 0, now >= F->fo.window_end, now, &err);
    struct fault_record *r = fault_rec(F, F->fo.rec);
    if (!r->pid && fo->master_pid) {
        r->pid = fo->master_pid; /* from the cut on, errors are the fault's */
        snprintf(r->hit, sizeof r->hit, "%s (pid %d)", F->s->faults[F->fo.spec].target_text,
                 (int)r->pid);
    }
    if (who >= 0 && fo->killed_ns && fo->granted_ns) {
        F->fo.who = who;
        F->fo.inside_at_kill = inside_at(F, who, enter);
        r->client = who;
        r->holder = true;
        r->in_section_ns = fo->killed_ns - enter;
    }
    if (rc == 0)
        return now + FAILOVER_POLL_NS;
    failover_record(F, rc, &err, now);
    return INT64_MAX;
}

/* The run ended with a failover under way: see it through, so the next
 * run starts on a whole topology (undo it when interrupted). */
static void finish_failover(struct faults *F, bool interrupted)
{
    while (F->fo.on && !interrupted) {
        lab_sleep_ns(FAILOVER_POLL_NS, NULL);
        step_failover(F, lab_now_ns());
    }
    if (F->fo.on) {
        backend_of(F->ops)->failover_abort(&F->fo.fo);
        failover_record(F, -1, NULL, lab_now_ns());
    }
}

/* Only the sentinel topology's master fails over. */
static const char *failover_check(const struct fault_spec *f, char *buf, size_t n)
{
    if (strcmp(f->role, "redis-master") == 0)
        return NULL;
    snprintf(buf, n, "failover applies to redis-master (the sentinel topology's master), "
                     "not to %s", f->target_text);
    return buf;
}

const struct fault_action_ops fault_failover = {
    .word = "failover",
    .keys = FA_WINDOW,
    .flags = FA_SERVICE,
    .check = failover_check,
    .fire_server = fire_failover,
    .tick = step_failover,
    .finish = finish_failover,
};
