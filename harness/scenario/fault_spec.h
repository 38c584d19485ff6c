/*
 * fault_spec.h - one entry of a scenario's faults: list, as the loader read
 * it (harness/faults/fault_load.c): when, which action, which target.
 *
 * A fault entry is closed vocabulary, as Jepsen's nemeses are: when (`at`
 * a time after the start barrier, or `every` a period, `count` times), an
 * action (a row of the faults room's table, harness/faults/fault_action.h:
 * pause, kill, restart, stop, start, failover, clock-jump) and a target
 * (holder, client:N, random-client, or a server role such as redis,
 * redis-node:I, zookeeper; a server fault may wait for a holder: `when:
 * holder`); or a failpoint inside a design where the client that reaches
 * it is hit (kill, pause, sleep). Nothing in it ever runs a command.
 */
#ifndef LOCKLAB_FAULT_SPEC_H
#define LOCKLAB_FAULT_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#define FAULT_SPECS_MAX 16   /* entries of one scenario's faults: list */
#define FAULT_GROUPS_MAX 4   /* sides of a partition */
#define FAULT_GROUP_MAX 8    /* members of one side */

/* The index of an action's row in the table (fault_action.h), with names
 * for the rows the harness's other rooms ask about. */
enum fault_action { FAULT_PAUSE = 0, FAULT_KILL, FAULT_RESTART, FAULT_STOP, FAULT_START,
                    FAULT_SLEEP, FAULT_FAILOVER, FAULT_CLOCK_JUMP, FAULT_PARTITION,
                    FAULT_DELAY };

enum fault_target { TARGET_HOLDER = 0, TARGET_CLIENT, TARGET_RANDOM_CLIENT, TARGET_SERVER,
                    TARGET_FAILPOINT, TARGET_NET /* the links between hosts: groups, isolate */ };

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
    /* partition (TARGET_NET): its sides, each a list of hosts, clients
     * (client:N, its host) or servers by role (redis-master: the host it
     * runs on when the cut lands); isolate gives one side and the rest of
     * the hosts are the other; a shape (below) makes the sides itself */
    int n_groups;
    int group_len[FAULT_GROUPS_MAX];
    char groups[FAULT_GROUPS_MAX][FAULT_GROUP_MAX][32];
    bool isolate;           /* isolate: X (groups[0] = {X}, the other side every other host) */
    bool one_way;           /* direction: one-way: only what the first side sends is lost */
    bool reject;            /* mode: reject (a fast reset) rather than drop (silence) */
    /* partition shapes that need no listing, as Jepsen's nemeses split a
     * cluster: the run's hosts in a shuffle a seed makes (given: the same
     * split every time; else drawn when it fires and recorded) */
    enum { FAULT_SHAPE_NONE = 0, FAULT_SHAPE_MAJORITY_MINORITY, FAULT_SHAPE_BRIDGE } shape;
    bool seed_given;
    int seed;               /* seed: the shuffle's seed, 0 to 2^31-1 */
    char pin[32];           /* minority: MEMBER (majority-minority) or middle: MEMBER (bridge):
                               the host that member runs on goes there; "" none */
    /* delay (TARGET_NET, between: two hosts, groups[0][0] and groups[1][0]):
     * what each sends the other (one_way: what the first sends) is held
     * latency, give or take jitter, by the lab's proxy on that link */
    bool between;
    int64_t latency_ns;
    int64_t jitter_ns;
    int line, column;       /* where the entry starts in its file (1-based), for warnings */
    /* target: holder: the point of the holder's critical section the fault
     * lands at: right after a grant that came once it was due (default),
     * or a point drawn uniformly within the business time after one */
    enum { FAULT_POINT_GRANT = 0, FAULT_POINT_RANDOM } point;
};

#endif
