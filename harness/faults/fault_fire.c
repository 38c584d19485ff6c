/*
 * fault_fire.c - firing one entry of the timeline: find its target and
 * hand it to the action's row (fault_action.h).
 *
 * A client is hit as a whole process, with its threads (a watchdog) and
 * its connections, as a GC pause (SIGSTOP, then SIGCONT) or a crash
 * (SIGKILL) would hit a user's process. A client target is always stopped
 * first and confirmed stopped (/proc/<pid>/stat says T) before anything else
 * is decided, so "it is inside its critical section" is read while it can
 * no longer leave; a `holder` target lands on a fresh grant (fire_holder:
 * right after it, or at a point drawn within the business time, as the
 * entry's point says). Servers come from the design's backend table by role;
 * the stock store is never one of them. A server entry with `when: holder`
 * waits (up to its window) until a client is inside its critical section,
 * as Kleppmann's counterexamples need the server hit while the lock is
 * held.
 */
#include "fault_engine.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- clients */

/* A client is hit as its process group: itself and, for an adapter, the
 * child running the library (client.c puts each client in a group of its
 * own). The stop is confirmed of each process; an adapter's child that is
 * already gone has nothing left to stop. */
static bool client_stop_confirmed(struct faults *F, int i)
{
    if (fault_one_client(F, i))
        return fault_client_ctl(F, i, CLIENT_PAUSE);
    pid_t pid = F->pids[i];
    pid_t child = F->rg->slots[i].child_pid;
    if (kill(-pid, SIGSTOP) != 0 || !lab_stop_confirmed(pid, LAB_STOP_CONFIRM_NS))
        return false;
    if (child > 0 && !lab_stop_confirmed(child, LAB_STOP_CONFIRM_NS)) {
        char st = lab_proc_state(child);
        return st == 0 || st == 'Z';
    }
    return true;
}

void fault_signal_client(pid_t pid, int sig)
{
    kill(-pid, sig);
}

bool fault_one_client(const struct faults *F, int i)
{
    return F->rg->slots[i].group_n > 1 && F->ops->async && F->ops->async->client_faults;
}

bool fault_client_ctl(struct faults *F, int i, int ctl)
{
    struct client_slot *sl = &F->rg->slots[i];
    atomic_store(&sl->ctl, ctl);
    if (kill(F->pids[i], SIGUSR2) != 0)
        return false;
    int64_t deadline = lab_now_ns() + LAB_STOP_CONFIRM_NS;
    while (atomic_load(&sl->ctl_ack) != ctl) { /* observed, not hoped for */
        if (lab_now_ns() > deadline)
            return false;
        lab_sleep_ns(20000, NULL);
    }
    return true;
}

void fault_continue_client(struct faults *F, int i)
{
    if (fault_one_client(F, i))
        fault_client_ctl(F, i, CLIENT_RUN);
    else
        fault_signal_client(F->pids[i], SIGCONT); /* whatever of its group did stop */
}

/* Client i, stopped inside its critical section (or stopping itself at a
 * failpoint), is about to be killed: its critical section ends now, since
 * it never runs again. Mark its exit
 * as it would itself (exit time, the live count's exit mark, phase
 * RELEASING: complete but for the release), so the runner logs it at the
 * reap as it is. Closing it only at the reap would count a lock the server
 * hands on the moment the victim's connection closes (a database session's
 * lock) as two holders whenever the parent is scheduled later than the
 * next grantee. */
void fault_exit_for_victim(struct region *rg, int i)
{
    struct client_slot *sl = &rg->slots[i];
    sl->cur.exit_ns = lab_now_ns();
    atomic_store(&sl->iv_phase, IV_EXITING);
    sl->cur.exit_seq = oracle_exit(&rg->keys[sl->cur.key].oracle);
    atomic_store(&sl->iv_phase, IV_RELEASING);
}

void fault_hit_client_text(struct fault_record *r, const struct region *rg, int i, pid_t pid)
{
    const struct client_slot *sl = &rg->slots[i];
    if (r->one_client)
        snprintf(r->hit, sizeof r->hit, "client %d (of group %d, pid %d)", i,
                 sl->group_first / sl->group_n, (int)pid);
    else if (sl->group_n > 1)
        snprintf(r->hit, sizeof r->hit, "clients %d-%d (group %d, pid %d)", sl->group_first,
                 sl->group_first + sl->group_n - 1, sl->group_first / sl->group_n, (int)pid);
    else
        snprintf(r->hit, sizeof r->hit, "client %d (pid %d)", i, (int)pid);
}

void fault_kill_one(struct region *rg, int i)
{
    atomic_store(&rg->slots[i].fault_killed, 1);
    if (atomic_load(&rg->slots[i].iv_phase) == IV_INSIDE)
        fault_exit_for_victim(rg, i);
}

void fault_kill_clients_of(struct region *rg, int i)
{
    const struct client_slot *sl = &rg->slots[i];
    int first = sl->group_n > 1 ? sl->group_first : i, n = sl->group_n > 1 ? sl->group_n : 1;
    for (int j = first; j < first + n; j++)
        fault_kill_one(rg, j);
}

/* Hit client i (already stopped) with spec's action: its row acts.
 * in_section: a holder stopped this far into its critical section (from
 * its grant), -1 when not aimed at a holder's grant. */
static void hit_client(struct faults *F, int spec, int i, int64_t now, bool inside,
                       int64_t in_section)
{
    const struct fault_spec *f = &F->s->faults[spec];
    struct fault_log *log = &F->rg->head->faults;
    pid_t pid = F->pids[i];
    int idx;
    struct fault_record *r = fault_rec_new(log, F->s, spec, &idx);
    if (!r) {
        fault_continue_client(F, i);
        return;
    }
    r->client = i;
    r->pid = pid;
    r->start_ns = now;
    r->one_client = fault_one_client(F, i);
    fault_hit_client_text(r, F->rg, i, pid);
    r->holder = inside;
    r->in_section_ns = in_section;
    snprintf(r->note, sizeof r->note, "%s", inside ? "inside its critical section" : "");
    if (in_section >= 0)
        fault_note_add(r, "stopped %.2f ms after its grant (point: %s)",
                       (double)in_section / 1e6, f->point == FAULT_POINT_RANDOM ? "random" : "grant");
    fault_action_of(f->action)->hit_client(F, r, i, inside); /* the loader saw it has one */
    fault_rec_publish(log, idx);
}

static int alive_clients(struct faults *F, int *out, bool holders_only)
{
    int n = 0;
    for (int i = 0; i < F->n_clients; i++)
        if (F->pids[i] > 0 && !atomic_load(&F->rg->slots[i].fault_killed) &&
            (!holders_only || atomic_load(&F->rg->slots[i].iv_phase) == IV_INSIDE))
            out[n++] = i;
    return n;
}

/* No holder came within spec's window: recorded skipped. */
static void skip_no_holder(struct faults *F, int spec, int64_t now)
{
    fault_rec_skip(F, spec, now, false,
                   "no client was inside its critical section within %lld ms",
                   (long long)(F->s->faults[spec].window_ns / 1000000));
}

/* ------------------------------------------------------------- holders */

/* Is client i still inside the critical section it was granted at enter? */
static bool inside_since(const struct faults *F, int i, int64_t enter)
{
    const struct client_slot *sl = &F->rg->slots[i];
    return atomic_load(&sl->iv_phase) == IV_INSIDE && sl->cur.enter_ns == enter;
}

/* The clients inside a critical section granted at or after since (their
 * grants in enter): grants the engine sees for the first time, since it
 * looked last (client_cs.c sets enter_ns before the phase says INSIDE). */
static int fresh_holders(struct faults *F, int64_t since, int *out, int64_t *enter)
{
    int n = alive_clients(F, out, true), k = 0;
    for (int j = 0; j < n; j++) {
        int64_t e = F->rg->slots[out[j]].cur.enter_ns;
        if (e >= since) {
            enter[k] = e;
            out[k++] = out[j];
        }
    }
    return k;
}

/* Stop client i and hit it if it is still inside the section it was
 * granted at enter (else continue it: it left before the stop landed).
 * The point recorded is when the stop was sent, from the grant. */
static bool land_on_holder(struct faults *F, int spec, int i, int64_t enter)
{
    int64_t t = lab_now_ns();
    if (!client_stop_confirmed(F, i) || !inside_since(F, i, enter)) {
        fault_continue_client(F, i); /* whatever of its group did stop */
        return false;
    }
    hit_client(F, spec, i, lab_now_ns(), true, t - enter);
    return true;
}

/* A uniform draw in [0, n). */
static int64_t draw_below(unsigned *rnd, int64_t n)
{
    if (n <= 0)
        return 0;
    uint64_t x = ((uint64_t)rand_r(rnd) << 31) ^ (uint64_t)rand_r(rnd);
    return (int64_t)(x % (uint64_t)n);
}

/* target: holder. It lands at a stated point of a holder's critical
 * section, on a grant that came once the entry was due and that the
 * engine sees first at this look (it looks every HOLDER_POLL_NS): point
 * grant, as soon as it sees it (before the business time; the counter and
 * stock workloads read the resource at once, write it at the end); point
 * random, at a point drawn uniformly within the business time after that
 * grant (a holder that leaves first is let go, and the next grant aimed
 * at). Within window, or skipped; an aim taken keeps it going past it. */
static enum fault_fire fire_holder(struct faults *F, int spec, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    int cand[SCN_MAX_CLIENTS];
    int64_t enter[SCN_MAX_CLIENTS];
    struct fault_due *st = &F->st[spec];
    int64_t since = st->look_ns ? st->look_ns : st->due;
    st->look_ns = now;
    if (st->aim >= 0 && !inside_since(F, st->aim, st->aim_enter_ns))
        st->aim = -1; /* it left before the point drawn */
    if (st->aim < 0) {
        int n = fresh_holders(F, since, cand, enter);
        while (n > 0) {
            int k = (int)(rand_r(&F->rnd) % (unsigned)n);
            if (f->point == FAULT_POINT_RANDOM) {
                st->aim = cand[k];
                st->aim_enter_ns = enter[k];
                st->aim_at_ns = enter[k] + draw_below(&F->rnd, F->s->business_ns);
                break;
            }
            if (land_on_holder(F, spec, cand[k], enter[k]))
                return FAULT_FIRED;
            cand[k] = cand[--n];
            enter[k] = enter[n];
        }
    }
    if (st->aim >= 0) {
        if (now < st->aim_at_ns)
            return FAULT_RETRY;
        int i = st->aim;
        st->aim = -1;
        if (land_on_holder(F, spec, i, st->aim_enter_ns))
            return FAULT_FIRED;
    }
    if (now < st->window_end)
        return FAULT_RETRY;
    skip_no_holder(F, spec, now);
    return FAULT_FIRED;
}

enum fault_fire fault_fire_client(struct faults *F, int spec, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    int cand[SCN_MAX_CLIENTS];
    int n;
    if (f->target == TARGET_HOLDER)
        return fire_holder(F, spec, now);
    if (f->target == TARGET_CLIENT) {
        if (f->index >= F->n_clients || F->pids[f->index] <= 0 ||
            atomic_load(&F->rg->slots[f->index].fault_killed)) {
            fault_rec_skip(F, spec, now, false, "client %d is not running", f->index);
            return FAULT_FIRED;
        }
        cand[0] = f->index;
        n = 1;
    } else {
        n = alive_clients(F, cand, false);
    }
    while (n > 0) {
        int k = (int)(rand_r(&F->rnd) % (unsigned)n);
        int i = cand[k];
        cand[k] = cand[--n];
        if (!client_stop_confirmed(F, i)) {
            fault_continue_client(F, i); /* whatever of its group did stop */
            continue; /* exited meanwhile */
        }
        bool inside = atomic_load(&F->rg->slots[i].iv_phase) == IV_INSIDE;
        hit_client(F, spec, i, lab_now_ns(), inside, -1);
        return FAULT_FIRED;
    }
    fault_rec_skip(F, spec, now, false, "no client is running");
    return FAULT_FIRED;
}

/* ------------------------------------------------------------- servers */

/* Does the design run on srv alone (its roles all name that one server)?
 * Then a fault that takes srv away leaves no server to grant anything. */
static bool only_server(const struct faults *F, const struct server *srv)
{
    for (int i = 0; i < F->n_roles; i++)
        if (F->roles[i].srv && F->roles[i].srv != srv)
            return false;
    return true;
}

enum fault_fire fault_fire_server(struct faults *F, int spec, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    int holder = -1, cand[SCN_MAX_CLIENTS];
    if (f->when_holder) { /* observed, not hoped for: a client inside now */
        if (alive_clients(F, cand, true) == 0) {
            if (now < F->st[spec].window_end)
                return FAULT_RETRY;
            skip_no_holder(F, spec, now);
            return FAULT_FIRED;
        }
        holder = cand[0];
    }
    /* roles can move (a failover makes a replica the master, an election
     * another ZooKeeper server the leader): ask the backend again */
    const struct backend_ops *be = backend_of(F->ops);
    F->n_roles = be->roles(F->ops, F->s, F->roles, BACKEND_MAX_ROLES);
    struct server *srv = fault_find_role(F, f);
    const struct fault_action_ops *act = fault_action_of(f->action);
    if (act->fire_server) /* it finds its server itself (start, failover) */
        return act->fire_server(F, spec, srv, now);
    if (!srv) {
        fault_skip_missing(F, spec, now);
        return FAULT_FIRED;
    }
    if (srv->pid <= 0) {
        fault_rec_skip(F, spec, now, false, "%s is down", f->target_text);
        return FAULT_FIRED;
    }
    int idx;
    struct fault_record *r = fault_rec_new(&F->rg->head->faults, F->s, spec, &idx);
    if (!r)
        return FAULT_FIRED;
    r->pid = srv->pid;
    r->start_ns = now;
    char name[48];
    fault_server_name(F, srv, name, sizeof name);
    snprintf(r->hit, sizeof r->hit, "%s (pid %d)", name, (int)srv->pid);
    r->outcome = FAULT_ACTIVE;
    if (act->flags & FA_SERVICE) {
        r->whole_store = only_server(F, srv);
        fault_excuse_open(F, r);
        fault_watch_open(&F->watch, idx, srv, name); /* until the store says it serves again */
    }
    if (holder >= 0)
        fault_note_add(r, "while client %d held the lock", holder);
    act->hit_server(F, r, idx, srv, now);
    fault_rec_publish(&F->rg->head->faults, idx);
    return FAULT_FIRED;
}
