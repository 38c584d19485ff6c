/*
 * fault.h - the words of a scenario's fault timeline and what a run
 * records of each fault, shared by the loader (harness/loader/), the engine that
 * injects them (faults.c) and the reports.
 *
 * A fault entry is closed vocabulary, as Jepsen's nemeses are: when (`at`
 * a time after the start barrier, or `every` a period, `count` times), an
 * action (a row of fault_action.h's table: pause, kill, restart, stop,
 * start, failover, clock-jump) and a target
 * (holder, client:N, random-client, or a server role such as redis,
 * redis-node:I, zookeeper; a server fault may wait for a holder: `when:
 * holder`); or a failpoint inside a design where the client that reaches
 * it is hit (kill, pause, sleep). Nothing in it ever runs a command.
 */
#ifndef LOCKLAB_FAULT_H
#define LOCKLAB_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#define FAULT_SPECS_MAX 16   /* entries of one scenario's faults: list */
#define FAULT_RECORDS_MAX 128 /* faults one run records */

/* The index of an action's row in the table (fault_action.h), with names
 * for the rows the harness's other rooms ask about. */
enum fault_action { FAULT_PAUSE = 0, FAULT_KILL, FAULT_RESTART, FAULT_STOP, FAULT_START,
                    FAULT_SLEEP, FAULT_FAILOVER, FAULT_CLOCK_JUMP };

#define FAULT_PHASES_MAX 6 /* named instants of a fault with phases (a failover) */

enum fault_target { TARGET_HOLDER = 0, TARGET_CLIENT, TARGET_RANDOM_CLIENT, TARGET_SERVER,
                    TARGET_FAILPOINT };

/* One entry of faults: as the loader read it. */
struct fault_spec {
    enum fault_action action;
    enum fault_target target;
    char target_text[48];   /* as written: "holder", "client:2", "redis-node:1", or the failpoint */
    char role[32];          /* TARGET_SERVER: the role name ("redis-node") */
    int index;              /* client:N / role:I; -1 when none was written */
    int64_t at_ns;          /* first time, after the start barrier (every: its period) */
    int64_t every_ns;       /* 0: once */
    int count;              /* times it fires (every, failpoint), default unbounded / 1 */
    int64_t duration_ns;    /* pause / restart / sleep: how long */
    int64_t window_ns;      /* holder: how long to wait for a holder before `skipped` */
    int64_t offset_ns;      /* clock-jump: how far the server's wall clock moves (< 0: back) */
    bool when_holder;       /* a server target: fire only while a client holds the lock */
    bool window_given;      /* the file gave window (else a failover's covers lease + business) */
    int line, column;       /* where the entry starts in its file (1-based), for warnings */
};

enum fault_outcome { FAULT_DONE = 0, FAULT_SKIPPED, FAULT_FAILED, FAULT_ACTIVE };

/* What one firing of a fault did, in a run. */
struct fault_record {
    int spec;               /* index in the scenario's faults */
    enum fault_action action;
    char target[48];        /* the entry's target as written (or its failpoint) */
    enum fault_outcome outcome;
    char hit[96];           /* "client 3 (pid 1234)", "redis (pid 99)", "" when skipped */
    int client;             /* the client hit, -1 for a server or none */
    int pid;                /* the process hit, 0 for none */
    int64_t start_ns;       /* CLOCK_MONOTONIC when it landed (or was given up) */
    int64_t end_ns;         /* when it ended (a pause continued, a server back); = start when instant */
    char note[200];         /* why skipped or failed; what else happened */
    bool not_used;          /* skipped because the design does not use the target */
    bool holder;            /* the client hit held the lock (or was taking it, at a failpoint) */
    int64_t recovery_ns;    /* a killed client: from the kill to the next grant; a server
                               fault: from back_ns to the first grant after it; -1 none */
    int64_t back_ns;        /* a server fault: when the store itself said it served again
                               (its health check), 0 while (or when never) back */
    bool excusing;          /* a fault on a server that acted: lock errors are its doing */
    int64_t grace_ns;       /* a server fault: lock errors are the fault's from just before
                               its action until back_ns + this */
    int64_t errors_before;  /* a server fault: lock errors of all clients when it fired */
    int64_t errors_after;   /* ... and those that came after it (errors_before taken off) */
    int n_phases;           /* a fault with phases (failover): its instants, in order */
    struct {
        char name[24];      /* "cut", "granted", "killed", "switched", "writable", "rejoined" */
        int64_t at_ns;      /* CLOCK_MONOTONIC */
    } phase[FAULT_PHASES_MAX];
    char leader[32];        /* a server fault on a store that elects (fault_watch.h): who
                               led once it served again, "" when not watched */
    int64_t leader_ns;      /* ... when a leader served again after the fault took the
                               store's away (an election), 0 when it never went */
    int64_t jump_ns;        /* clock-jump: how far the server's clock was seen to move */
};

/* Did r take a server's service away (a server fault that acted: not a
 * client's, not a clock's, not one skipped)? Those are the faults whose
 * store's return is timed (back_ns, recovery_ns, errors_after). */
static inline bool fault_took_service(const struct fault_record *r)
{
    return r->excusing && r->outcome != FAULT_SKIPPED;
}

/* The action's word (its row's, fault_actions.c). */
const char *fault_action_name(enum fault_action a);
const char *fault_outcome_name(enum fault_outcome o);

/* Append to r's note (printf-style), after a "; " when it has one. */
__attribute__((format(printf, 2, 3)))
void fault_note_add(struct fault_record *r, const char *fmt, ...);

/* Parse a target word: holder, client:N, random-client, or ROLE[:I] for a
 * server role (the roles are the stores' own, backend_ops.role_names: a
 * name no store lists, or an index where its role takes none, is refused;
 * the engine matches the role to a run's servers). 0, or -1 when it is
 * none of these. */
int fault_target_parse(const char *text, struct fault_spec *f);

/* The server targets for messages: "redis, redis-node:I, zookeeper[:I], ...". */
const char *fault_server_targets(void);

#endif
