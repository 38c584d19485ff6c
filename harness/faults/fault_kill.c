/*
 * fault_kill.c - the actions that take a process down and bring a server
 * back: kill (SIGKILL: a crash) of a client, of a server or of the client
 * that reaches a failpoint; stop (SIGTERM, then SIGKILL if that was not
 * enough) and restart (killed, started again after the duration, empty or
 * with its data as the store keeps it) of a server; start, which brings
 * back a server an earlier fault left down. Rows of the action table
 * (fault_action.h).
 *
 * A client killed inside its critical section has its section closed by
 * whoever kills it (fault_exit_for_victim), so the oracle neither hides
 * an overlap nor invents one. A server taken down is remembered
 * (fault_note_down) until its record's down time is over or the run ends.
 */
#include "fault_engine.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static void kill_client(struct faults *F, struct fault_record *r, int client, bool inside)
{
    (void)inside; /* read again for each client of its process */
    if (r->one_client) { /* this client of its group alone (group.c closes it) */
        fault_kill_one(F->rg, client);
        if (!fault_client_ctl(F, client, CLIENT_KILL))
            fault_note_add(r, "its group did not confirm the kill");
        r->end_ns = r->start_ns;
        r->outcome = FAULT_DONE;
        return;
    }
    fault_kill_clients_of(F->rg, client);
    fault_signal_client(F->pids[client], SIGKILL); /* a stopped process dies of it as well */
    r->end_ns = r->start_ns;
    r->outcome = FAULT_DONE;
}

/* Take srv down until due (INT64_MAX: until a start entry or the end of
 * the run); by says how, for a start whose rejoin it cuts short. */
static void take_down(struct faults *F, int rec, struct server *srv, int64_t due, const char *by)
{
    fault_watch_taken(&F->watch, srv, rec, by);
    servers_kill(srv);
    fault_note_down(F, rec, srv, due);
}

static void kill_server(struct faults *F, struct fault_record *r, int rec, struct server *srv,
                        int64_t now)
{
    (void)r, (void)now;
    take_down(F, rec, srv, INT64_MAX, "killed");
}

static void kill_at_failpoint(struct region *rg, const struct fault_spec *f,
                              struct fault_record *r, int ri, int idx)
{
    (void)f;
    if (r->one_client) { /* its group closes it alone (group.c) */
        fault_kill_one(rg, idx);
        atomic_store(&rg->slots[idx].ctl, CLIENT_KILL);
        r->end_ns = r->start_ns;
        r->outcome = FAULT_DONE;
        fault_rec_publish(&rg->head->faults, ri);
        return;
    }
    fault_kill_clients_of(rg, idx); /* as the engine does for a holder it kills */
    r->end_ns = r->start_ns;
    fault_rec_publish(&rg->head->faults, ri);
    raise(SIGKILL);
}

const struct fault_action_ops fault_kill = {
    .word = "kill",
    .flags = FA_SERVICE | FA_LEAVES_DOWN,
    .hit_client = kill_client,
    .hit_server = kill_server,
    .at_failpoint = kill_at_failpoint,
};

static void stop_server(struct faults *F, struct fault_record *r, int rec, struct server *srv,
                        int64_t now)
{
    (void)r, (void)now;
    kill(srv->pid, SIGTERM); /* reaped at once if SIGTERM was not enough */
    take_down(F, rec, srv, INT64_MAX, "stopped");
}

const struct fault_action_ops fault_stop = {
    .word = "stop",
    .flags = FA_SERVICE | FA_LEAVES_DOWN,
    .hit_server = stop_server,
};

static void restart_server(struct faults *F, struct fault_record *r, int rec,
                           struct server *srv, int64_t now)
{
    take_down(F, rec, srv, now + F->s->faults[r->spec].duration_ns, "killed");
}

const struct fault_action_ops fault_restart = {
    .word = "restart",
    .keys = FA_DURATION,
    .flags = FA_SERVICE | FA_STARTS,
    .hit_server = restart_server,
};

/* Start the server an earlier fault took down: the one an entry with the
 * same target words hit (a role that moved since, zookeeper-leader, still
 * names the server it took), else srv, the one the target names now. */
static enum fault_fire start_server(struct faults *F, int spec, struct server *srv, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    int k = F->n_down - 1;
    while (k >= 0 && strcmp(fault_rec(F, F->down[k].rec)->target, f->target_text) != 0)
        k--;
    for (int j = F->n_down - 1; k < 0 && j >= 0; j--)
        if (srv && F->down[j].srv == srv)
            k = j;
    if (k < 0) {
        fault_rec_skip(F, spec, now, false, "%s was not stopped", f->target_text);
        return FAULT_FIRED;
    }
    struct server *back = F->down[k].srv;
    char name[48];
    fault_server_name(F, back, name, sizeof name);
    fault_bring_back(F, k);
    int idx;
    struct fault_record *r = fault_rec_new(&F->rg->head->faults, F->s, spec, &idx);
    if (r) {
        r->start_ns = now;
        r->end_ns = lab_now_ns();
        r->pid = back->pid;
        snprintf(r->hit, sizeof r->hit, "%s (pid %d)", name, (int)back->pid);
        if (back->pid > 0 && fault_watch_open(&F->watch, idx, back, name))
            r->outcome = FAULT_ACTIVE; /* until it has joined */
        fault_rec_publish(&F->rg->head->faults, idx);
    }
    return FAULT_FIRED;
}

const struct fault_action_ops fault_start = {
    .word = "start",
    .flags = FA_STARTS,
    .fire_server = start_server,
};
