/*
 * fault_servers.c - the servers the fault engine hits: which server a
 * target names among the design's roles (backend_ops.roles, asked again
 * before each firing, since a failover or an election moves them), the
 * name a server keeps in records, and the servers a fault left down, each
 * brought back when its down time is over (a restart), when a start entry
 * asks for it, or at the end of the run.
 */
#include "fault_engine.h"

#include <stdio.h>
#include <string.h>

/* The server a target names among the design's roles, or NULL. A target
 * without an index names the first server of that role. */
struct server *fault_find_role(struct faults *F, const struct fault_spec *f)
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
void fault_server_name(const struct faults *F, const struct server *srv, char *buf, size_t n)
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
const char *fault_no_role(const struct faults *F, const struct fault_spec *f)
{
    const struct backend_ops *be = backend_of(F->ops);
    return be && be->no_role ? be->no_role(F->ops, F->s, f->role, f->index) : NULL;
}

void fault_skip_missing(struct faults *F, int spec, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    if (fault_no_role(F, f))
        fault_rec_skip(F, spec, now, false, "%s", fault_no_role(F, f));
    else
        fault_rec_skip(F, spec, now, false, "no %s now", f->target_text);
}

/* Remember that a server is down until due (INT64_MAX: until a start
 * entry or the end of the run). */
void fault_note_down(struct faults *F, int rec, struct server *srv, int64_t due)
{
    if (F->n_down < FAULTS_MAX_PENDING)
    {
        F->down[F->n_down].rec = rec;
        F->down[F->n_down].srv = srv;
        F->down[F->n_down++].due = due;
    }
}

/* Bring back down server k now; closes its record. */
void fault_bring_back(struct faults *F, int k)
{
    struct fault_record *r = &F->rg->head->faults.rec[F->down[k].rec];
    struct lab_err err = {0};
    int rc = servers_restart(F->down[k].srv, &err);
    if (r->outcome == FAULT_ACTIVE) { /* else its watch ended it: the store served without it */
        r->end_ns = lab_now_ns();
        if (!fault_watch_has(&F->watch, F->down[k].rec)) {
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

