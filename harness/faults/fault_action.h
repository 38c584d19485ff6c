/*
 * fault_action.h - the fault actions as one table: a row per action word
 * (pause, kill, restart, ...), saying which keys and targets an entry with
 * that action takes and how the engine carries it out.
 *
 * The loader checks an entry against its row (the keys it needs, the
 * targets its hooks serve, the row's own rule for a target), and the
 * engine (faults.c) never asks which action it has: it finds the target,
 * opens the record and calls the row's hook (on a client it stopped, on a
 * server of the design's store, in a client at a failpoint); the watch
 * (fault_watch.c) reads from the row what the fault does to its server.
 * Adding an action is one row, written beside its hooks in the file of
 * what it does (fault_pause.c, fault_kill.c, fault_clock.c,
 * fault_failover.c, or a new one), and one line in the table
 * (fault_actions.c). enum fault_action (fault.h) is the table's index; it
 * names the rows other rooms of the harness ask about, and a new row
 * needs no name there unless one does.
 */
#ifndef LOCKLAB_FAULT_ACTION_H
#define LOCKLAB_FAULT_ACTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fault.h"

struct faults;   /* the engine's state (fault_engine.h) */
struct region;   /* the run's shared memory (region.h) */
struct server;   /* an embedded server (servers.h) */

/* What an entry with this action must or may give besides when and target. */
enum fault_action_keys {
    FA_DURATION = 1u << 0, /* duration: required (how long it lasts); refused otherwise */
    FA_OFFSET = 1u << 1,   /* offset: required (how far a clock moves); refused otherwise */
    FA_WINDOW = 1u << 2,   /* window: how long it waits on its own after it fired (a
                              failover, for a fresh grant); by default the lease plus the
                              business time and a second */
    FA_LATENCY = 1u << 3   /* between (a link), latency and jitter: taken; refused
                              otherwise (the row's check says which it needs) */
};

/* What a fault with this action does to the server it hits. */
enum fault_action_flags {
    FA_SERVICE = 1u << 0,    /* it takes the store's service away: lock errors are its
                                doing until the store serves again, which the watch times */
    FA_STOPS = 1u << 1,      /* its process stays stopped until the duration is over:
                                the engine continues it (a client's group, a server's tree) */
    FA_LEAVES_DOWN = 1u << 2, /* its server stays down (its own part is over at once) */
    FA_STARTS = 1u << 3      /* it starts a server again, which must be running once the
                                store is whole; a later fault taking it down cuts its
                                rejoin short */
};

enum fault_fire { FAULT_FIRED, FAULT_RETRY }; /* retry: wait for a holder a while longer */

struct fault_action_ops {
    const char *word;  /* as written in the file */
    unsigned keys;     /* enum fault_action_keys */
    unsigned flags;    /* enum fault_action_flags */
    const char *hint;  /* an action with only at_failpoint: why, when given a timed target */
    /* The row's own rule for its target, checked by the loader after the
     * common ones: NULL when f is fine, else the message (in buf). */
    const char *(*check)(const struct fault_spec *f, char *buf, size_t n);

    /* Hooks; a target kind whose hook is NULL is refused by the loader. */
    /* a client target (holder, client:N, random-client), stopped and
     * confirmed stopped: act on it; r is its record (client, pid, start,
     * hit, holder filled), published by the engine after */
    void (*hit_client)(struct faults *F, struct fault_record *r, int client, bool inside);
    /* a server target the engine found running: act on srv; r (index rec)
     * is open (pid, start, hit, FAULT_ACTIVE; with FA_SERVICE the errors
     * excused and the watch opened), published by the engine after */
    void (*hit_server)(struct faults *F, struct fault_record *r, int rec, struct server *srv,
                       int64_t now);
    /* a server target whose action finds its server itself (instead of
     * hit_server): srv is the one the target names now, or NULL */
    enum fault_fire (*fire_server)(struct faults *F, int spec, struct server *srv, int64_t now);
    /* an action on the links between the run's hosts (TARGET_NET: groups
     * or isolate instead of a target): it finds its hosts itself */
    enum fault_fire (*fire_net)(struct faults *F, int spec, int64_t now);
    /* in client idx's own process, at a failpoint: r (index ri) is open
     * (client, pid, start, hit, holder, note); the hook publishes it once
     * it has done what it can before it stops or dies */
    void (*at_failpoint)(struct region *rg, const struct fault_spec *f, struct fault_record *r,
                         int ri, int idx);
    /* an action that goes on after it fired (a failover's steps): driven
     * from every tick (when next, INT64_MAX: nothing under way), and seen
     * through (or undone when interrupted) at the end of the run */
    int64_t (*tick)(struct faults *F, int64_t now);
    void (*finish)(struct faults *F, bool interrupted);
};

/* The table (fault_actions.c), indexed by enum fault_action. */
extern const struct fault_action_ops *const fault_actions[];
extern const int fault_actions_count;

/* What an entry's action key takes, for the key reference: the words. */
extern const char fault_actions_help[];

/* The row of action a. */
const struct fault_action_ops *fault_action_of(enum fault_action a);

/* The action written word, or -1. */
int fault_action_find(const char *word);

/* The action words in table order, NULL-terminated (the loader's list). */
const char *const *fault_action_words(void);

/* Does a's row say so (enum fault_action_flags)? */
bool fault_action_is(enum fault_action a, unsigned flag);

/* "w1, w2 or w3": the words of the rows that have hook kind or key
 * (fault_action_join with a predicate), into buf. */
const char *fault_action_join(char *buf, size_t n, bool (*pick)(const struct fault_action_ops *),
                              const char *last_sep);

#endif
