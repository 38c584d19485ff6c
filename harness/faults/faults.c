/*
 * faults.c - the fault engine (see faults.h): the parent's timeline and the
 * failpoint side of a client.
 *
 * A client is hit as a whole process, with its threads (a watchdog) and
 * its connections, as a GC pause (SIGSTOP, then SIGCONT) or a crash
 * (SIGKILL) would hit a user's process. A client target is always stopped
 * first and confirmed stopped (/proc/<pid>/stat says T) before anything else
 * is decided, so "it is inside its critical section" is read while it can
 * no longer leave. Servers come from the design's backend table by role;
 * the stock store is never one of them. A server entry with `when: holder`
 * waits (up to its window) until a client is inside its critical section,
 * as Kleppmann's counterexamples need the server hit while the lock is
 * held. A clock jump goes through the store's table (backend_ops.clock_jump),
 * which checks it against the server's own clock: one that did not move it
 * is `failed`, never `done`.
 */
#include "faults.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOLDER_POLL_NS (1000000LL)     /* while waiting for a holder */
#define STOP_CONFIRM_NS (500000000LL)  /* a SIGSTOP lands within this */
/* after the store serves again (its health check says so, a failover's new
 * master took a write), lock errors are still the fault's doing for this
 * long: clients find out about a broken connection only at their next
 * command. Each server fault's record states it (grace_ns). */
#define GRACE_NS (1000000000LL)
#define FAILOVER_POLL_NS (2000000LL)  /* a failover's steps are looked at this often */

/* --------------------------------------------------------------- records */

/* Reserve a record of the run's log; NULL when the log is full. */
static struct fault_record *rec_new(struct fault_log *log, const struct scenario *s, int spec,
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
    *idx = i;
    return r;
}

static void rec_publish(struct fault_log *log, int idx)
{
    atomic_store(&log->published[idx], 1);
}

/* Record spec as skipped (not landed) at now, with why. */
__attribute__((format(printf, 5, 6)))
static void rec_skip(struct faults *F, int spec, int64_t now, bool not_used, const char *fmt, ...)
{
    int idx;
    struct fault_record *r = rec_new(&F->rg->head->faults, F->s, spec, &idx);
    if (!r)
        return;
    r->outcome = FAULT_SKIPPED;
    r->not_used = not_used;
    r->start_ns = r->end_ns = now;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
    rec_publish(&F->rg->head->faults, idx);
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
static void excuse_open(struct faults *F, struct fault_record *r)
{
    atomic_store(&F->rg->head->excused_until_ns, INT64_MAX);
    r->excusing = true;
    r->grace_ns = GRACE_NS;
    r->errors_before = errors_now(F);
}

/* ------------------------------------------------------------- processes */

/* A client is hit as its process group: itself and, for an adapter, the
 * child running the library (client.c puts each client in a group of its
 * own). The stop is confirmed of each process; an adapter's child that is
 * already gone has nothing left to stop. */
static bool client_stop_confirmed(struct faults *F, int i)
{
    pid_t pid = F->pids[i];
    pid_t child = F->rg->slots[i].child_pid;
    if (kill(-pid, SIGSTOP) != 0 || !lab_stop_confirmed(pid, STOP_CONFIRM_NS))
        return false;
    if (child > 0 && !lab_stop_confirmed(child, STOP_CONFIRM_NS)) {
        char st = lab_proc_state(child);
        return st == 0 || st == 'Z';
    }
    return true;
}

static void signal_client(pid_t pid, int sig)
{
    kill(-pid, sig);
}

/* A server paused is paused whole: the processes it forked (PostgreSQL's
 * backends, one per connection, each in a session of its own) are
 * stopped after it (it forks no more meanwhile) and confirmed stopped. */
static void pause_children(struct fault_record *r, pid_t pid)
{
    pid_t kids[SERVERS_TREE_MAX];
    int n = servers_descendants(pid, kids, SERVERS_TREE_MAX), stopped = 0, gone = 0;
    for (int i = 0; i < n; i++) {
        if (lab_stop_confirmed(kids[i], STOP_CONFIRM_NS)) {
            stopped++;
            continue;
        }
        char st = lab_proc_state(kids[i]);
        gone += st == 0 || st == 'Z'; /* a session ending as it was listed: nothing to stop */
    }
    if (n - gone)
        fault_note_add(r, "with %d of its %d child processes", stopped, n - gone);
}

/* ----------------------------------------------------------------- setup */

/* The server a target names among the design's roles, or NULL. A target
 * without an index names the first server of that role. */
static struct server *find_role(struct faults *F, const struct fault_spec *f)
{
    for (int i = 0; i < F->n_roles; i++) {
        const struct backend_role *r = &F->roles[i];
        if (strcmp(r->name, f->role) != 0)
            continue;
        if (f->index < 0 || f->index == (r->index < 0 ? 0 : r->index))
            return r->srv;
    }
    return NULL;
}

/* The name server srv keeps ("zookeeper:0", "redis"): its first role. */
static void server_name(const struct faults *F, const struct server *srv, char *buf, size_t n)
{
    for (int i = 0; i < F->n_roles; i++)
        if (F->roles[i].srv == srv) {
            if (F->roles[i].index < 0)
                snprintf(buf, n, "%s", F->roles[i].name);
            else
                snprintf(buf, n, "%s:%d", F->roles[i].name, F->roles[i].index);
            return;
        }
    snprintf(buf, n, "%s", srv->role);
}

/* Why the design's store has no server for target f (a single ZooKeeper
 * server has no leader), or NULL when the backend does not say. */
static const char *no_role(const struct faults *F, const struct fault_spec *f)
{
    const struct backend_ops *be = backend_of(F->ops);
    return be && be->no_role ? be->no_role(F->ops, F->s, f->role, f->index) : NULL;
}

/* Does failpoint entry f belong to design ops ("<impl>/...")? */
static bool own_failpoint(const struct fault_spec *f, const struct lock_ops *ops)
{
    size_t n = strlen(ops->name);
    return strncmp(f->target_text, ops->name, n) == 0 && f->target_text[n] == '/';
}

void faults_begin(struct faults *F, const struct scenario *s, const struct lock_ops *ops,
                  struct region *rg, const pid_t *pids, int64_t start)
{
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
    for (int i = 0; i < s->n_faults; i++) {
        const struct fault_spec *f = &s->faults[i];
        F->st[i].due = INT64_MAX;
        if (f->target == TARGET_FAILPOINT) {
            if (!own_failpoint(f, ops))
                rec_skip(F, i, start, true, "failpoint of another design");
        } else if (f->target == TARGET_SERVER && !find_role(F, f)) {
            if (no_role(F, f))
                rec_skip(F, i, start, false, "%s", no_role(F, f));
            else
                rec_skip(F, i, start, true, "%s does not run on an embedded %s", ops->name,
                         f->target_text);
        } else {
            F->st[i].due = start + f->at_ns;
            F->st[i].window_end = F->st[i].due + f->window_ns;
        }
    }
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

/* ---------------------------------------------------------------- firing */

enum fire { FIRED, RETRY };

/* Client i, stopped inside its critical section (or stopping itself at a
 * failpoint), is about to be killed: its critical section ends now, since
 * it never runs again. Mark its exit
 * as it would itself (exit time, the live count's exit mark, phase
 * RELEASING: complete but for the release), so the runner logs it at the
 * reap as it is. Closing it only at the reap would count a lock the server
 * hands on the moment the victim's connection closes (a database session's
 * lock) as two holders whenever the parent is scheduled later than the
 * next grantee. */
static void exit_for_victim(struct region *rg, int i)
{
    struct client_slot *sl = &rg->slots[i];
    sl->cur.exit_ns = lab_now_ns();
    atomic_store(&sl->iv_phase, IV_EXITING);
    sl->cur.exit_seq = oracle_exit(&rg->keys[sl->cur.key].oracle);
    atomic_store(&sl->iv_phase, IV_RELEASING);
}

/* Hit client i (already stopped) with spec's action. */
static void hit_client(struct faults *F, int spec, int i, int64_t now, bool inside)
{
    const struct fault_spec *f = &F->s->faults[spec];
    struct fault_log *log = &F->rg->head->faults;
    pid_t pid = F->pids[i];
    int idx;
    struct fault_record *r = rec_new(log, F->s, spec, &idx);
    if (!r) {
        signal_client(pid, SIGCONT);
        return;
    }
    r->client = i;
    r->pid = pid;
    r->start_ns = now;
    snprintf(r->hit, sizeof r->hit, "client %d (pid %d)", i, (int)pid);
    r->holder = inside;
    snprintf(r->note, sizeof r->note, "%s", inside ? "inside its critical section" : "");
    if (f->action == FAULT_KILL) {
        atomic_store(&F->rg->slots[i].fault_killed, 1);
        if (inside)
            exit_for_victim(F->rg, i);
        signal_client(pid, SIGKILL); /* a stopped process dies of it as well */
        r->end_ns = now;
        r->outcome = FAULT_DONE;
    } else { /* FAULT_PAUSE: continued by faults_tick after the duration */
        r->outcome = FAULT_ACTIVE;
    }
    rec_publish(log, idx);
}

static int alive_clients(struct faults *F, int *out, bool holders_only)
{
    int n = 0;
    for (int i = 0; i < F->n_clients; i++)
        if (F->pids[i] > 0 &&
            (!holders_only || atomic_load(&F->rg->slots[i].iv_phase) == IV_INSIDE))
            out[n++] = i;
    return n;
}

/* No holder came within spec's window: recorded skipped. */
static void skip_no_holder(struct faults *F, int spec, int64_t now)
{
    rec_skip(F, spec, now, false, "no client was inside its critical section within %lld ms",
             (long long)(F->s->faults[spec].window_ns / 1000000));
}

static enum fire fire_client(struct faults *F, int spec, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    int cand[SCN_MAX_CLIENTS];
    int n;
    if (f->target == TARGET_CLIENT) {
        if (f->index >= F->n_clients || F->pids[f->index] <= 0) {
            rec_skip(F, spec, now, false, "client %d is not running", f->index);
            return FIRED;
        }
        cand[0] = f->index;
        n = 1;
    } else {
        n = alive_clients(F, cand, f->target == TARGET_HOLDER);
    }
    while (n > 0) {
        int k = (int)(rand_r(&F->rnd) % (unsigned)n);
        int i = cand[k];
        cand[k] = cand[--n];
        if (!client_stop_confirmed(F, i)) {
            signal_client(F->pids[i], SIGCONT); /* whatever of its group did stop */
            continue; /* exited meanwhile */
        }
        bool inside = atomic_load(&F->rg->slots[i].iv_phase) == IV_INSIDE;
        if (f->target == TARGET_HOLDER && !inside) {
            signal_client(F->pids[i], SIGCONT); /* it left before the stop landed */
            continue;
        }
        hit_client(F, spec, i, lab_now_ns(), inside);
        return FIRED;
    }
    if (f->target == TARGET_HOLDER && now < F->st[spec].window_end)
        return RETRY;
    if (f->target == TARGET_HOLDER)
        skip_no_holder(F, spec, now);
    else
        rec_skip(F, spec, now, false, "no client is running");
    return FIRED;
}

/* Remember that a server is down until due (INT64_MAX: until a start
 * entry or the end of the run). */
static void note_down(struct faults *F, int rec, struct server *srv, int64_t due)
{
    if (F->n_down < FAULTS_MAX_PENDING)
    {
        F->down[F->n_down].rec = rec;
        F->down[F->n_down].srv = srv;
        F->down[F->n_down++].due = due;
    }
}

/* Bring back down server k now; closes its record. */
static void bring_back(struct faults *F, int k)
{
    struct fault_record *r = &F->rg->head->faults.rec[F->down[k].rec];
    struct lab_err err = {0};
    int rc = servers_restart(F->down[k].srv, &err);
    if (r->outcome == FAULT_ACTIVE) { /* else its watch ended it: the store served without it */
        r->end_ns = lab_now_ns();
        if (!fault_watch_has(F, F->down[k].rec)) {
            r->outcome = FAULT_DONE;
            if (rc == 0)
                r->back_ns = r->end_ns; /* no health check: it answered its start-up check */
        }
    }
    if (rc != 0) {
        r->outcome = FAULT_FAILED;
        snprintf(r->note, sizeof r->note, "did not come back: %.100s", err.msg);
    } else {
        snprintf(r->hit + strlen(r->hit), sizeof r->hit - strlen(r->hit), " -> pid %d",
                 (int)F->down[k].srv->pid);
    }
    F->down[k] = F->down[--F->n_down];
}

/* ------------------------------------------------------------- failover */

/* Grants the clients gave back so far because too few replicas had them. */
static int64_t unreplicated_now(const struct faults *F)
{
    int64_t n = 0;
    for (int i = 0; i < F->n_clients; i++)
        n += F->rg->slots[i].stats.unreplicated;
    return n;
}

/* Start a failover (the backend's steps, backend.h); step_failover() drives
 * it from then on. */
static enum fire fire_failover(struct faults *F, int spec, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    const struct backend_ops *be = backend_of(F->ops);
    if (!be->failover_step) {
        rec_skip(F, spec, now, true, "%s has no failover", be->title);
        return FIRED;
    }
    if (F->fo.on) {
        rec_skip(F, spec, now, false, "the last failover is still under way");
        return FIRED;
    }
    int idx;
    struct fault_record *r = rec_new(&F->rg->head->faults, F->s, spec, &idx);
    if (!r)
        return FIRED;
    memset(&F->fo, 0, sizeof F->fo);
    r->start_ns = now;
    r->outcome = FAULT_ACTIVE;
    excuse_open(F, r);
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
        snprintf(r->hit, sizeof r->hit, "%s", f->target_text);
    }
    rec_publish(&F->rg->head->faults, idx);
    return FIRED;
}

/* Add phase name at t (when reached) to r. */
static void add_phase(struct fault_record *r, const char *name, int64_t t)
{
    if (t <= 0 || r->n_phases >= FAULT_PHASES_MAX)
        return;
    snprintf(r->phase[r->n_phases].name, sizeof r->phase[0].name, "%s", name);
    r->phase[r->n_phases++].at_ns = t;
}

/* Close the failover's record: its phases, what they took, and whether it
 * lost a fresh grant. One that found none to lose tested nothing, unless
 * the design itself refused every grant the replicas had not acknowledged
 * (redis-wait): then the refusal is what the run shows. Otherwise the
 * record is `skipped`, a fault that never landed (never a `safe`). */
static void failover_record(struct faults *F, int rc, const struct lab_err *err, int64_t now)
{
    struct fault_record *r = &F->rg->head->faults.rec[F->fo.rec];
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
    char what[112];
    if (lost)
        snprintf(what, sizeof what, "lost a fresh grant: client %d granted after the cut, "
                 "not replicated", r->client);
    else if (!fo->killed_ns)
        snprintf(what, sizeof what, "no client was granted while replication was cut");
    else if (refused > 0)
        snprintf(what, sizeof what, "found none to lose: the design gave back %lld grants "
                 "no replica had acknowledged", (long long)refused);
    else
        snprintf(what, sizeof what, "found none to lose: no fresh grant reached the master in "
                 "the %.1f s window", (double)F->s->faults[F->fo.spec].window_ns / 1e9);
    r->outcome = rc != 1 ? FAULT_FAILED : lost || refused > 0 ? FAULT_DONE : FAULT_SKIPPED;
    if (rc == 1)
        snprintf(r->note, sizeof r->note, "%s; switched %.2f s and writable %.2f s after the kill",
                 what, (double)(fo->switched_ns - fo->killed_ns) / 1e9,
                 (double)(fo->writable_ns - fo->killed_ns) / 1e9);
    else
        snprintf(r->note, sizeof r->note, "%.90s; %.30s", what, err ? err->msg : "interrupted");
    F->fo.on = false;
}

/* The next step of the failover under way; when the engine needs to look
 * again. A grant after the cut is read from the shared slots: a client
 * inside a critical section it entered after the replication was cut. */
static int64_t step_failover(struct faults *F, int64_t now)
{
    if (!F->fo.on)
        return INT64_MAX;
    struct failover *fo = &F->fo.fo;
    bool granted = false;
    int64_t was_granted = fo->granted_ns;
    int who = -1;
    for (int i = 0; i < F->n_clients && !granted && fo->cut_ns && !fo->killed_ns; i++) {
        const struct client_slot *sl = &F->rg->slots[i];
        if (F->pids[i] > 0 && atomic_load(&sl->iv_phase) == IV_INSIDE &&
            sl->cur.enter_ns > fo->cut_ns) {
            granted = true;
            who = i;
        }
    }
    struct lab_err err = {0};
    int rc = backend_of(F->ops)->failover_step(fo, granted, now >= F->fo.window_end, now, &err);
    struct fault_record *r = &F->rg->head->faults.rec[F->fo.rec];
    if (!r->pid && fo->master_pid) {
        r->pid = fo->master_pid; /* from the cut on, errors are the fault's */
        snprintf(r->hit, sizeof r->hit, "%s (pid %d)", F->s->faults[F->fo.spec].target_text,
                 (int)r->pid);
    }
    if (!was_granted && fo->granted_ns) {
        r->client = who;
        r->holder = true;
    }
    if (rc == 0)
        return now + FAILOVER_POLL_NS;
    failover_record(F, rc, &err, now);
    return INT64_MAX;
}

/* Start the server an earlier fault took down: the one an entry with the
 * same target words hit (a role that moved since, zookeeper-leader, still
 * names the server it took), else srv, the one the target names now. */
static enum fire fire_start(struct faults *F, int spec, int64_t now, struct server *srv)
{
    const struct fault_spec *f = &F->s->faults[spec];
    int k = F->n_down - 1;
    while (k >= 0 && strcmp(F->rg->head->faults.rec[F->down[k].rec].target, f->target_text) != 0)
        k--;
    for (int j = F->n_down - 1; k < 0 && j >= 0; j--)
        if (srv && F->down[j].srv == srv)
            k = j;
    if (k < 0) {
        rec_skip(F, spec, now, false, "%s was not stopped", f->target_text);
        return FIRED;
    }
    struct server *back = F->down[k].srv;
    char name[48];
    server_name(F, back, name, sizeof name);
    bring_back(F, k);
    int idx;
    struct fault_record *r = rec_new(&F->rg->head->faults, F->s, spec, &idx);
    if (r) {
        r->start_ns = now;
        r->end_ns = lab_now_ns();
        r->pid = back->pid;
        snprintf(r->hit, sizeof r->hit, "%s (pid %d)", name, (int)back->pid);
        if (back->pid > 0 && fault_watch_open(F, idx, back, name))
            r->outcome = FAULT_ACTIVE; /* until it has joined */
        rec_publish(&F->rg->head->faults, idx);
    }
    return FIRED;
}

/* Move srv's clock by f's offset, and record what the server's clock did. */
static void jump_clock(const struct faults *F, struct fault_record *r, const struct server *srv,
                       const struct fault_spec *f)
{
    struct lab_err err = {0};
    const struct backend_ops *be = backend_of(F->ops);
    int rc = -1;
    if (be->clock_jump)
        rc = be->clock_jump(srv, f->offset_ns, &r->jump_ns, &err);
    else
        lab_err_set(&err, ENOTSUP, "%s cannot move a server's clock", be->title);
    r->end_ns = lab_now_ns();
    r->outcome = rc == 0 ? FAULT_DONE : FAULT_FAILED;
    if (rc == 0)
        fault_note_add(r, "its clock moved %+.3f s", (double)r->jump_ns / 1e9);
    else
        fault_note_add(r, "%.100s", err.msg);
}

static enum fire fire_server(struct faults *F, int spec, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    int holder = -1, cand[SCN_MAX_CLIENTS];
    if (f->when_holder) { /* observed, not hoped for: a client inside now */
        if (alive_clients(F, cand, true) == 0) {
            if (now < F->st[spec].window_end)
                return RETRY;
            skip_no_holder(F, spec, now);
            return FIRED;
        }
        holder = cand[0];
    }
    /* roles can move (a failover makes a replica the master, an election
     * another ZooKeeper server the leader): ask the backend again */
    const struct backend_ops *be = backend_of(F->ops);
    F->n_roles = be->roles(F->ops, F->s, F->roles, BACKEND_MAX_ROLES);
    struct server *srv = find_role(F, f);
    if (f->action == FAULT_START)
        return fire_start(F, spec, now, srv);
    if (!srv) {
        if (no_role(F, f))
            rec_skip(F, spec, now, false, "%s", no_role(F, f));
        else
            rec_skip(F, spec, now, false, "no %s now", f->target_text);
        return FIRED;
    }
    if (f->action == FAULT_FAILOVER)
        return fire_failover(F, spec, now);
    if (srv->pid <= 0) {
        rec_skip(F, spec, now, false, "%s is down", f->target_text);
        return FIRED;
    }
    int idx;
    struct fault_record *r = rec_new(&F->rg->head->faults, F->s, spec, &idx);
    if (!r)
        return FIRED;
    r->pid = srv->pid;
    r->start_ns = now;
    char name[48];
    server_name(F, srv, name, sizeof name);
    snprintf(r->hit, sizeof r->hit, "%s (pid %d)", name, (int)srv->pid);
    r->outcome = FAULT_ACTIVE;
    if (f->action != FAULT_CLOCK_JUMP) {
        excuse_open(F, r);
        fault_watch_open(F, idx, srv, name); /* until the store says it serves again */
    }
    if (holder >= 0)
        fault_note_add(r, "while client %d held the lock", holder);
    switch (f->action) {
    case FAULT_PAUSE:
        if (!lab_stop_confirmed(srv->pid, STOP_CONFIRM_NS)) {
            r->outcome = FAULT_FAILED;
            r->back_ns = now; /* it never stopped serving */
            snprintf(r->note, sizeof r->note, "the stop did not land");
        } else {
            pause_children(r, srv->pid);
        }
        break;
    case FAULT_STOP:
        kill(srv->pid, SIGTERM);
        __attribute__((fallthrough)); /* reaped at once if SIGTERM was not enough */
    case FAULT_KILL:
    case FAULT_RESTART:
        fault_watch_taken(F, srv, idx, f->action == FAULT_STOP ? "stopped" : "killed");
        servers_kill(srv);
        note_down(F, idx, srv, f->action == FAULT_RESTART ? now + f->duration_ns : INT64_MAX);
        break;
    case FAULT_CLOCK_JUMP:
        jump_clock(F, r, srv, f);
        break;
    default:
        break;
    }
    rec_publish(&F->rg->head->faults, idx);
    return FIRED;
}

/* Set spec's next firing after one that happened at `was`. */
static void advance(struct faults *F, int spec, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    F->st[spec].fired++;
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

/* Continue every pause whose time has come (all of them when force);
 * returns the earliest end still to come. */
static int64_t end_pauses(struct faults *F, int64_t now, bool force)
{
    struct fault_log *log = &F->rg->head->faults;
    int n = atomic_load(&log->n);
    int64_t next = INT64_MAX;
    for (int i = 0; i < n && i < FAULT_RECORDS_MAX; i++) {
        struct fault_record *r = &log->rec[i];
        if (!atomic_load(&log->published[i]) || r->outcome != FAULT_ACTIVE ||
            r->action != FAULT_PAUSE || r->pid <= 0 || r->end_ns)
            continue; /* (a pause continued whose watch keeps it open has its end) */
        int64_t end = r->start_ns + F->s->faults[r->spec].duration_ns;
        if (!force && now < end) {
            if (end < next)
                next = end;
            continue;
        }
        char st = lab_proc_state(r->pid); /* only once it is due: /proc is a read per call */
        if (st == 'T' || st == 't' || force) {
            if (r->client >= 0) {
                signal_client(r->pid, SIGCONT); /* the client's group: an adapter too */
            } else {
                servers_signal_children(r->pid, SIGCONT); /* a server: its processes too */
                kill(r->pid, SIGCONT);
            }
        } else if (st != 0 && st != 'Z') {
            /* a client at a failpoint published its pause just before
             * stopping itself: continue it once the stop has landed */
            next = now + HOLDER_POLL_NS;
            continue;
        }
        r->end_ns = now;
        if (!fault_watch_has(F, i)) {
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
 * (region.h): opened by excuse_open just before a fault acts, kept open
 * while any server fault's store has not served again, and closed
 * GRACE_NS after the last of them did (back_ns). A store that never comes
 * back keeps it open to the end: the verdict then says `unavailable`
 * (runner.c) rather than counting errors. */
static void update_excuse(struct faults *F)
{
    struct fault_log *log = &F->rg->head->faults;
    int n = atomic_load(&log->n);
    bool any = false, on = false;
    int64_t until = 0;
    for (int i = 0; i < n && i < FAULT_RECORDS_MAX; i++) {
        const struct fault_record *r = &log->rec[i];
        if (!atomic_load(&log->published[i]) || !r->excusing)
            continue;
        any = true;
        if (!r->back_ns)
            on = true;
        else if (r->back_ns + r->grace_ns > until)
            until = r->back_ns + r->grace_ns;
    }
    if (any)
        atomic_store(&F->rg->head->excused_until_ns, on ? INT64_MAX : until);
}

int64_t faults_tick(struct faults *F, int64_t now)
{
    int64_t next = INT64_MAX, retry = INT64_MAX;
    end_pauses(F, now, false);
    for (int k = F->n_down - 1; k >= 0; k--)
        if (F->down[k].due <= now)
            bring_back(F, k);
    now = lab_now_ns(); /* a server brought back took its start-up time */
    for (int i = 0; i < F->s->n_faults; i++) {
        if (F->st[i].due > now)
            continue;
        const struct fault_spec *f = &F->s->faults[i];
        enum fire r = f->target == TARGET_SERVER ? fire_server(F, i, now) : fire_client(F, i, now);
        if (r == RETRY)
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
    int64_t fo_next = step_failover(F, now);
    if (fo_next < next)
        next = fo_next;
    int64_t look = fault_watch_poll(F, lab_now_ns());
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
    /* a failover the run's end caught half-way: see it through, so the
     * next run starts on a whole topology (undo it when interrupted) */
    while (F->fo.on && !interrupted) {
        lab_sleep_ns(FAILOVER_POLL_NS, NULL);
        step_failover(F, lab_now_ns());
    }
    if (F->fo.on) {
        backend_of(F->ops)->failover_abort(&F->fo.fo);
        failover_record(F, -1, NULL, lab_now_ns());
    }
    while (F->n_down > 0) {
        if (!interrupted) {
            bring_back(F, F->n_down - 1);
            continue;
        }
        struct fault_record *r = &F->rg->head->faults.rec[F->down[F->n_down - 1].rec];
        r->end_ns = lab_now_ns();
        r->outcome = FAULT_DONE;
        snprintf(r->note, sizeof r->note, "not brought back: the run was interrupted");
        F->n_down--;
    }
    fault_watch_settle(F, interrupted);
    for (int i = 0; i < F->s->n_faults; i++)
        F->st[i].due = INT64_MAX;
}

/* -------------------------------------------------------- client's side */

void faults_at_failpoint(struct region *rg, const struct scenario *s, int idx,
                         const struct failpoint *fp)
{
    const struct fault_spec *f = &s->faults[fp->fault];
    struct fault_log *log = &rg->head->faults;
    if (atomic_fetch_add(&log->fired[fp->fault], 1) >= f->count)
        return;
    int ri;
    struct fault_record *r = rec_new(log, s, fp->fault, &ri);
    if (!r)
        return;
    r->client = idx;
    r->pid = getpid();
    r->start_ns = lab_now_ns();
    snprintf(r->hit, sizeof r->hit, "client %d (pid %d)", idx, (int)r->pid);
    r->holder = true;
    snprintf(r->note, sizeof r->note, "at %s", f->target_text);
    switch (f->action) {
    case FAULT_SLEEP:
        lab_sleep_ns(f->duration_ns, &rg->head->stop);
        r->end_ns = lab_now_ns();
        rec_publish(log, ri);
        break;
    case FAULT_KILL:
        atomic_store(&rg->slots[idx].fault_killed, 1);
        if (atomic_load(&rg->slots[idx].iv_phase) == IV_INSIDE)
            exit_for_victim(rg, idx); /* as the engine does for a holder it kills */
        r->end_ns = r->start_ns;
        rec_publish(log, ri);
        raise(SIGKILL);
        break;
    default: /* FAULT_PAUSE: the parent continues this process */
        r->outcome = FAULT_ACTIVE;
        rec_publish(log, ri);
        raise(SIGSTOP);
        break;
    }
}
