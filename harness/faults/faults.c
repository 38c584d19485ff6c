/*
 * faults.c - the fault engine (see faults.h): the parent's timeline and the
 * failpoint side of a client (its records: fault_records.c).
 *
 * The engine fires each entry when it is due (fault_fire.c finds its
 * target and hands it to the action's row, fault_action.h), continues the
 * processes a fault stopped once their time is up, brings back the servers
 * a fault left down, lets an action that goes on (a failover) take its
 * steps, and keeps the window in which lock errors are a server fault's
 * doing. It never asks which action it has: what an action does is its
 * row's.
 */
#include "faults.h"

#include "fault_engine.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ----------------------------------------------------------------- setup */

/* Does failpoint entry f belong to design ops ("<impl>/...")? */
static bool own_failpoint(const struct fault_spec *f, const struct lock_ops *ops)
{
    size_t n = strlen(ops->name);
    return strncmp(f->target_text, ops->name, n) == 0 && f->target_text[n] == '/';
}

/* The parent runs one design at a time: one engine. */
static struct faults engine;

struct faults *faults_begin(const struct scenario *s, const struct lock_ops *ops,
                            struct region *rg, const pid_t *pids, int64_t start)
{
    struct faults *F = &engine;
    memset(F, 0, sizeof *F);
    F->s = s;
    F->ops = ops;
    F->rg = rg;
    F->pids = pids;
    F->n_clients = s->clients;
    F->start = start;
    F->rnd = (unsigned)getpid() ^ (unsigned)start;
    const struct backend_ops *be = backend_of(ops);
    F->n_roles = be ? be->roles(ops, s, F->roles, BACKEND_MAX_ROLES) : 0;
    fault_watch_init(&F->watch, ops, s, &rg->head->faults);
    for (int i = 0; i < s->n_faults; i++) {
        const struct fault_spec *f = &s->faults[i];
        F->st[i].due = INT64_MAX;
        F->st[i].aim = -1;
        if (f->target == TARGET_FAILPOINT) {
            if (!own_failpoint(f, ops))
                fault_rec_skip(F, i, start, true, "failpoint of another design");
        } else if (f->target == TARGET_SERVER && !fault_find_role(F, f)) {
            if (fault_no_role(F, f))
                fault_rec_skip(F, i, start, false, "%s", fault_no_role(F, f));
            else
                fault_rec_skip(F, i, start, true, "%s does not run on an embedded %s",
                               ops->name, f->target_text);
        } else {
            F->st[i].due = start + f->at_ns;
            F->st[i].window_end = F->st[i].due + f->window_ns;
        }
    }
    return F;
}

int faults_arm_failpoints(const struct scenario *s, const struct lock_ops *ops)
{
    int mark = failpoint_mark();
    for (int i = 0; i < s->n_faults; i++)
        if (s->faults[i].target == TARGET_FAILPOINT && own_failpoint(&s->faults[i], ops))
            failpoint_arm_fault(s->faults[i].target_text, i);
    return mark;
}

void faults_disarm(int mark)
{
    failpoint_disarm_to(mark);
}

/* ---------------------------------------------------------------- timeline */

/* Set spec's next firing after one that happened at `was`. */
static void advance(struct faults *F, int spec, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    F->st[spec].fired++;
    F->st[spec].look_ns = 0; /* the next firing aims at a grant of its own */
    F->st[spec].aim = -1;
    if (!f->every_ns || (f->count && F->st[spec].fired >= f->count)) {
        F->st[spec].due = INT64_MAX;
        return;
    }
    int64_t due = F->st[spec].due;
    while (due <= now)
        due += f->every_ns;
    F->st[spec].due = due;
    F->st[spec].window_end = due + f->window_ns;
}

/* Continue what pause record r stopped, now that its time has come: a
 * client of a group held alone (its ctl), or a stopped process (a client's
 * group, or a server with its processes). false: not yet, a client at a
 * failpoint published its pause just before stopping itself (continued
 * once the stop has landed). */
static bool continue_stopped(struct faults *F, const struct fault_record *r, bool force)
{
    if (r->one_client) {
        fault_client_ctl(F, r->client, CLIENT_RUN);
        return true;
    }
    char st = lab_proc_state(r->pid); /* only once it is due: /proc is a read per call */
    if (st == 'T' || st == 't' || force) {
        if (r->client >= 0) {
            fault_signal_client(r->pid, SIGCONT); /* the client's group: an adapter too */
        } else {
            servers_signal_children(r->pid, SIGCONT); /* a server: its processes too */
            kill(r->pid, SIGCONT);
        }
        return true;
    }
    return st == 0 || st == 'Z'; /* gone: nothing left to continue */
}

/* Continue every process a fault stopped (a pause: its row says
 * FA_STOPS) whose time has come (all of them when force); returns the
 * earliest end still to come. */
static int64_t end_pauses(struct faults *F, int64_t now, bool force)
{
    struct fault_log *log = &F->rg->head->faults;
    int n = atomic_load(&log->n);
    int64_t next = INT64_MAX;
    for (int i = 0; i < n && i < FAULT_RECORDS_MAX; i++) {
        struct fault_record *r = &log->rec[i];
        if (!atomic_load(&log->published[i]) || r->outcome != FAULT_ACTIVE ||
            !fault_action_is(r->action, FA_STOPS) || r->pid <= 0 || r->end_ns)
            continue; /* (a pause continued whose watch keeps it open has its end) */
        int64_t end = r->start_ns + F->s->faults[r->spec].duration_ns;
        if (!force && now < end) {
            if (end < next)
                next = end;
            continue;
        }
        if (!continue_stopped(F, r, force)) {
            next = now + HOLDER_POLL_NS;
            continue;
        }
        r->end_ns = now;
        if (!fault_watch_has(&F->watch, i)) {
            r->outcome = FAULT_DONE;
            if (r->client < 0)
                r->back_ns = now; /* no health check: continued, it serves */
        }
        if (force && now < end)
            fault_note_add(r, "continued early: the run ended");
    }
    return next;
}

/* Publish the window in which lock errors are a server fault's doing
 * (region.h): opened by fault_excuse_open just before a fault acts, kept open
 * while any server fault's store has not served again, and closed
 * GRACE_NS after the last of them did (back_ns). A store that never comes
 * back keeps it open to the end: the verdict then says `unavailable`
 * (runner.c) rather than counting errors. The latest outage of the whole
 * store (region.h) is closed at its back_ns in the same pass. */
static void update_excuse(struct faults *F)
{
    struct fault_log *log = &F->rg->head->faults;
    int n = atomic_load(&log->n);
    bool any = false, on = false;
    int64_t until = 0;
    const struct fault_record *w = NULL; /* the latest outage of the whole store */
    for (int i = 0; i < n && i < FAULT_RECORDS_MAX; i++) {
        const struct fault_record *r = &log->rec[i];
        if (!atomic_load(&log->published[i]) || !r->excusing)
            continue;
        any = true;
        if (!r->back_ns)
            on = true;
        else if (r->back_ns + r->grace_ns > until)
            until = r->back_ns + r->grace_ns;
        if (r->whole_store && (!w || r->start_ns >= w->start_ns))
            w = r;
    }
    if (any)
        atomic_store(&F->rg->head->excused_until_ns, on ? INT64_MAX : until);
    if (w && w->back_ns) /* it ends when its store serves again */
        atomic_store(&F->rg->head->outage_until_ns, w->back_ns);
}

/* Records published so far. */
static int published(struct faults *F)
{
    struct fault_log *log = &F->rg->head->faults;
    int n = atomic_load(&log->n), k = 0;
    for (int i = 0; i < n && i < FAULT_RECORDS_MAX; i++)
        k += atomic_load(&log->published[i]) != 0;
    return k;
}

bool faults_news(struct faults *F)
{
    return F && published(F) != F->seen;
}

int64_t faults_tick(struct faults *F, int64_t now)
{
    int64_t next = INT64_MAX, retry = INT64_MAX;
    F->seen = published(F);
    end_pauses(F, now, false);
    for (int k = F->n_down - 1; k >= 0; k--)
        if (F->down[k].due <= now)
            fault_bring_back(F, k);
    now = lab_now_ns(); /* a server brought back took its start-up time */
    for (int i = 0; i < F->s->n_faults; i++) {
        if (F->st[i].due > now)
            continue;
        const struct fault_spec *f = &F->s->faults[i];
        enum fault_fire r = f->target == TARGET_NET      ? fault_action_of(f->action)->fire_net(F, i, now)
                            : f->target == TARGET_SERVER ? fault_fire_server(F, i, now)
                                                         : fault_fire_client(F, i, now);
        if (r == FAULT_RETRY)
            retry = now + HOLDER_POLL_NS;
        else
            advance(F, i, now);
    }
    /* when next: a retry, an entry due, a pause or a down time ending
     * (including those that began just now) */
    for (int i = 0; i < F->s->n_faults; i++)
        if (F->st[i].due > now && F->st[i].due < next)
            next = F->st[i].due;
    for (int k = 0; k < F->n_down; k++)
        if (F->down[k].due < next)
            next = F->down[k].due;
    int64_t pause_end = end_pauses(F, now, false);
    if (pause_end < next)
        next = pause_end;
    for (int a = 0; a < fault_actions_count; a++) { /* actions under way take their steps */
        int64_t step = fault_actions[a]->tick ? fault_actions[a]->tick(F, now) : INT64_MAX;
        if (step < next)
            next = step;
    }
    int64_t look = fault_watch_poll(&F->watch, lab_now_ns());
    if (look < next)
        next = look;
    update_excuse(F);
    return retry < next ? retry : next;
}

void faults_release(struct faults *F)
{
    end_pauses(F, lab_now_ns(), true);
}

void faults_finish(struct faults *F, bool interrupted)
{
    faults_release(F);
    /* an action the run's end caught half-way (a failover): seen through,
     * so the next run starts on a whole topology (undone when interrupted) */
    for (int a = 0; a < fault_actions_count; a++)
        if (fault_actions[a]->finish)
            fault_actions[a]->finish(F, interrupted);
    while (F->n_down > 0) {
        if (!interrupted) {
            fault_bring_back(F, F->n_down - 1);
            continue;
        }
        struct fault_record *r = &F->rg->head->faults.rec[F->down[F->n_down - 1].rec];
        r->end_ns = lab_now_ns();
        r->outcome = FAULT_DONE;
        snprintf(r->note, sizeof r->note, "not brought back: the run was interrupted");
        F->n_down--;
    }
    fault_watch_settle(&F->watch, interrupted);
    for (int i = 0; i < F->s->n_faults; i++)
        F->st[i].due = INT64_MAX;
}

/* -------------------------------------------------------- client's side */

void faults_at_failpoint(struct region *rg, const struct scenario *s, int idx,
                         const struct failpoint *fp, bool one_client)
{
    const struct fault_spec *f = &s->faults[fp->fault];
    struct fault_log *log = &rg->head->faults;
    if (atomic_fetch_add(&log->fired[fp->fault], 1) >= f->count)
        return;
    int ri;
    struct fault_record *r = fault_rec_new(log, s, fp->fault, &ri);
    if (!r)
        return;
    r->client = idx;
    r->pid = getpid();
    r->start_ns = lab_now_ns();
    r->one_client = one_client;
    fault_hit_client_text(r, rg, idx, r->pid);
    r->holder = true;
    snprintf(r->note, sizeof r->note, "at %s", f->target_text);
    fault_action_of(f->action)->at_failpoint(rg, f, r, ri, idx); /* the loader saw it has one */
}
