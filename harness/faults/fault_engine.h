/*
 * fault_engine.h - the fault engine's own state and the pieces its files
 * share; nothing outside harness/faults/ includes it (the runner and the
 * client see faults.h).
 *
 * The engine is split by concern: faults.c drives the timeline (begin,
 * tick, release, finish) and keeps the records; fault_fire.c finds a
 * fault's target (a client it stops, a server of the design's store) and
 * hands it to the action's row; fault_servers.c knows the servers (roles,
 * names, the ones a fault left down); the rows and their hooks are in
 * fault_pause.c, fault_kill.c, fault_clock.c and fault_failover.c, listed
 * in fault_actions.c; fault_watch.c times a store's recovery.
 */
#ifndef LOCKLAB_FAULT_ENGINE_H
#define LOCKLAB_FAULT_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"
#include "fault_action.h"
#include "fault_watch.h"
#include "failpoint.h"
#include "lock.h"
#include "region.h"
#include "scenario.h"

#define FAULTS_MAX_PENDING 32
#define HOLDER_POLL_NS (1000000LL)     /* while waiting for a holder */
/* after the store serves again (its health check says so, a failover's new
 * master took a write), lock errors are still the fault's doing for this
 * long: clients find out about a broken connection only at their next
 * command. Each server fault's record states it (grace_ns). */
#define GRACE_NS (1000000000LL)
#define FAILOVER_POLL_NS (2000000LL)  /* a failover's steps are looked at this often */

struct faults {
    const struct scenario *s;
    const struct lock_ops *ops;
    struct region *rg;
    const pid_t *pids;                    /* the runner's: > 0 alive, <= 0 reaped */
    int n_clients;
    int64_t start;                        /* the start barrier */
    struct backend_role roles[BACKEND_MAX_ROLES]; /* servers the design runs on */
    int n_roles;
    struct fault_due {
        int64_t due;                      /* next firing, INT64_MAX when done */
        int64_t window_end;               /* holder: give up waiting for one then */
        int fired;                        /* firings so far */
        /* target: holder (fault_fire.c): the grants it may land on are
         * those that came after the engine last looked (from due on) */
        int64_t look_ns;                  /* when it last looked; 0: not yet */
        int aim;                          /* point: random: the client aimed at, -1 none */
        int64_t aim_enter_ns;             /* ... its grant */
        int64_t aim_at_ns;                /* ... the point drawn to land at */
    } st[FAULT_SPECS_MAX];
    struct {
        int rec;                          /* its record */
        struct server *srv;               /* a server to bring back */
        int64_t due;                      /* when */
    } down[FAULTS_MAX_PENDING];
    int n_down;
    struct {
        bool on;                          /* a failover is under way */
        int spec, rec;                    /* its entry and its record */
        int64_t window_end;               /* stop waiting for a grant after the cut */
        int64_t unreplicated_at_cut;      /* the clients' lock_stats.unreplicated then */
        int who;                          /* the client whose grant the kill aimed at, -1 */
        bool inside_at_kill;              /* ... still inside that section after the kill */
        struct failover fo;               /* the backend's steps (backend.h) */
    } fo;
    struct fault_watches watch;           /* records kept open while the store recovers */
    unsigned rnd;                         /* random-client / holder choice */
    int seen;                             /* records published when the engine last ran */
};

/* ------------------------------------------------------ records (faults.c) */

/* Record idx of the run's log. */
static inline struct fault_record *fault_rec(struct faults *F, int idx)
{
    return &F->rg->head->faults.rec[idx];
}

/* Reserve a record of the run's log for entry spec; NULL when it is full. */
struct fault_record *fault_rec_new(struct fault_log *log, const struct scenario *s, int spec,
                                   int *idx);

/* Make record idx visible to the runner and the reports. */
void fault_rec_publish(struct fault_log *log, int idx);

/* Record spec as skipped (not landed) at now, with why. */
__attribute__((format(printf, 5, 6)))
void fault_rec_skip(struct faults *F, int spec, int64_t now, bool not_used, const char *fmt, ...);

/* A server fault is about to act: lock errors are its doing from now on. */
void fault_excuse_open(struct faults *F, struct fault_record *r);

/* ------------------------------------------------ targets (fault_fire.c) */

/* Fire entry spec at its client target, or at its server target. */
enum fault_fire fault_fire_client(struct faults *F, int spec, int64_t now);
enum fault_fire fault_fire_server(struct faults *F, int spec, int64_t now);

/* Signal a client's process group (itself and an adapter's child). */
void fault_signal_client(pid_t pid, int sig);

/* Is a fault aimed at client i one for that client alone: a client of a
 * group whose design's group driver shares nothing between its clients
 * (lock_async_ops.client_faults)? Otherwise it hits i's process. */
bool fault_one_client(const struct faults *F, int i);

/* Ask client i's group to apply ctl (enum client_ctl) to i alone, and wait
 * (LAB_STOP_CONFIRM_NS at most) until it says it has: true when it did. */
bool fault_client_ctl(struct faults *F, int i, int ctl);

/* Continue client i after a stop: its process, or i alone. */
void fault_continue_client(struct faults *F, int i);

/* Client i of rg is about to die inside its critical section: close it. */
void fault_exit_for_victim(struct region *rg, int i);

/* Client i's process is hit (pid): what the record's hit says, "client 3
 * (pid 1234)", or for a client group (group.c), whose process runs several
 * clients and is hit whole, "clients 0-63 (group 0, pid 1234)", or one of
 * them alone (r->one_client), "client 5 (of group 0, pid 1234)". */
void fault_hit_client_text(struct fault_record *r, const struct region *rg, int i, pid_t pid);

/* Client i is about to die of a fault: marked killed by the fault, and the
 * critical section it is inside ends now (fault_exit_for_victim). */
void fault_kill_one(struct region *rg, int i);

/* Client i's process is about to die of a fault (a kill): every client it
 * runs is marked killed by the fault (one client, or its whole group), and
 * the critical sections they are inside end now (fault_exit_for_victim). */
void fault_kill_clients_of(struct region *rg, int i);

/* ----------------------------------------------- servers (fault_servers.c) */

/* The server a target names among the design's roles, or NULL. */
struct server *fault_find_role(struct faults *F, const struct fault_spec *f);

/* The name server srv keeps ("zookeeper:0", "redis"). */
void fault_server_name(const struct faults *F, const struct server *srv, char *buf, size_t n);

/* Why the design's store has no server for target f, or NULL. */
const char *fault_no_role(const struct faults *F, const struct fault_spec *f);

/* srv (the one spec's target names now) is missing: spec recorded skipped. */
void fault_skip_missing(struct faults *F, int spec, int64_t now);

/* Remember that a server is down until due (INT64_MAX: until a start
 * entry or the end of the run), and bring back down server k now. */
void fault_note_down(struct faults *F, int rec, struct server *srv, int64_t due);
void fault_bring_back(struct faults *F, int k);

/* ------------------------------------------ partition shapes (fault_shape.c) */

/* The sides of a partition of shape (FAULT_SHAPE_*) over hosts 0..n-1 as
 * masks (bit h: host h), shuffled by seed: majority-minority, side[0] the
 * minority (host pin in it when pin >= 0) and side[1] the majority; bridge,
 * the two halves and *bridge the host that sees both (pin when >= 0). 0,
 * or -1 when n hosts cannot make the shape (fewer than 3). */
int fault_shape_split(int shape, int n, int pin, int seed, unsigned side[2], int *bridge);

#endif
