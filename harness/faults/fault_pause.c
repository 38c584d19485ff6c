/*
 * fault_pause.c - the actions that stop a process for a while: pause
 * (SIGSTOP, then SIGCONT after the duration: a GC pause) of a client, of a
 * server or of the client that reaches a failpoint, and sleep, a client
 * stalling where it is at a failpoint. Rows of the action table
 * (fault_action.h).
 *
 * A paused process stays stopped until the engine continues it (its row
 * says FA_STOPS): a client's whole group, a server with every process it
 * forked.
 */
#include "fault_engine.h"

#include <signal.h>
#include <stdio.h>

/* Paused client: the engine continues it after the duration. */
static void pause_client(struct faults *F, struct fault_record *r, int client, bool inside)
{
    (void)F, (void)client, (void)inside;
    r->outcome = FAULT_ACTIVE;
}

/* A server paused is paused whole: the processes it forked (PostgreSQL's
 * backends, one per connection, each in a session of its own) are
 * stopped after it (it forks no more meanwhile) and confirmed stopped. */
static void pause_children(struct fault_record *r, pid_t pid)
{
    pid_t kids[SERVERS_TREE_MAX];
    int n = servers_descendants(pid, kids, SERVERS_TREE_MAX), stopped = 0, gone = 0;
    for (int i = 0; i < n; i++) {
        if (lab_stop_confirmed(kids[i], LAB_STOP_CONFIRM_NS)) {
            stopped++;
            continue;
        }
        char st = lab_proc_state(kids[i]);
        gone += st == 0 || st == 'Z'; /* a session ending as it was listed: nothing to stop */
    }
    if (n - gone)
        fault_note_add(r, "with %d of its %d child processes", stopped, n - gone);
}

static void pause_server(struct faults *F, struct fault_record *r, int rec, struct server *srv,
                         int64_t now)
{
    (void)F, (void)rec;
    if (!lab_stop_confirmed(srv->pid, LAB_STOP_CONFIRM_NS)) {
        r->outcome = FAULT_FAILED;
        r->back_ns = now; /* it never stopped serving */
        snprintf(r->note, sizeof r->note, "the stop did not land");
    } else {
        pause_children(r, srv->pid);
    }
}

/* The client stops itself; the parent continues it after the duration. */
static void pause_at_failpoint(struct region *rg, const struct fault_spec *f,
                               struct fault_record *r, int ri, int idx)
{
    (void)f;
    r->outcome = FAULT_ACTIVE;
    if (r->one_client) { /* its group holds it alone (group.c), the engine releases it */
        atomic_store(&rg->slots[idx].ctl, CLIENT_PAUSE);
        fault_rec_publish(&rg->head->faults, ri);
        return;
    }
    fault_rec_publish(&rg->head->faults, ri);
    raise(SIGSTOP);
}

const struct fault_action_ops fault_pause = {
    .word = "pause",
    .keys = FA_DURATION,
    .flags = FA_SERVICE | FA_STOPS,
    .hit_client = pause_client,
    .hit_server = pause_server,
    .at_failpoint = pause_at_failpoint,
};

static void sleep_at_failpoint(struct region *rg, const struct fault_spec *f,
                               struct fault_record *r, int ri, int idx)
{
    (void)idx;
    lab_sleep_ns(f->duration_ns, &rg->head->stop);
    r->end_ns = lab_now_ns();
    fault_rec_publish(&rg->head->faults, ri);
}

const struct fault_action_ops fault_sleep = {
    .word = "sleep",
    .keys = FA_DURATION,
    .hint = "(the client sleeps where it is); use pause for a timed fault",
    .at_failpoint = sleep_at_failpoint,
};
