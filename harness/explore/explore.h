/*
 * explore.h - the parts of `locklab explore` that do no I/O: the explore:
 * section of a file read into a spec, the seeded generator that draws a
 * fault schedule from it, the schedule written as a scenario's faults:
 * list (YAML text the real loader reads) and in short for a progress
 * line, the shrinker's candidates, and the edits of a scenario's text
 * (the explore: block commented out, a top-level key replaced, a scalar
 * spliced at its libyaml marks). harness/cmd/cmd_explore.c runs them.
 *
 * A trial's scenario is text, never a struct written back out: the file's
 * own text with its explore: block commented out (so every line keeps its
 * number for the loader's messages) and a generated faults: list appended,
 * read by the one loader (harness/loader/scenario_load.c).
 */
#ifndef LOCKLAB_EXPLORE_H
#define LOCKLAB_EXPLORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The fault actions a schedule draws from (a subset of the lab's). */
enum xaction {
    XA_PAUSE, XA_KILL, XA_RESTART, XA_FAILOVER, XA_CLOCK_JUMP, XA_PARTITION, XA_DELAY,
    XA_COUNT
};
extern const char *const explore_action_words[XA_COUNT + 1]; /* NULL-terminated */

#define XPL_TARGETS_MAX 32
#define XPL_NAME_MAX 48
#define XPL_FAULTS_MAX 8

/* The explore: section, as read (explore_spec_read) and then resolved
 * against the scenario (explore_spec_resolve). */
struct explore_spec {
    unsigned actions;               /* 1u << enum xaction */
    int n_targets;                  /* targets: as given (0: the defaults) */
    char targets[XPL_TARGETS_MAX][XPL_NAME_MAX];
    int target_line[XPL_TARGETS_MAX], target_column[XPL_TARGETS_MAX]; /* where each is */
    int64_t at[2], duration[2];     /* ranges in ns; [0, 0]: not given */
    int faults[2];                  /* entries per schedule; [0, 0]: not given */
    /* line:column of the section's keys, for a message about a resolved value */
    int line, column;

    /* resolved: where each kind of action aims */
    int n_client, n_server, n_clock, n_isolate, n_hosts;
    char client[XPL_TARGETS_MAX][XPL_NAME_MAX];  /* holder, random-client, client:N */
    char server[XPL_TARGETS_MAX][XPL_NAME_MAX];  /* server roles: redis, redis-node:2 */
    char clock[XPL_TARGETS_MAX][XPL_NAME_MAX];   /* of those, the ones a clock-jump takes */
    char isolate[XPL_TARGETS_MAX][XPL_NAME_MAX]; /* what a partition isolates */
    char hosts[XPL_TARGETS_MAX][XPL_NAME_MAX];   /* the file's hosts (delay's links) */
    int64_t lease_ns;               /* lock.ttl: what the defaults are relative to */
    int64_t run_ns;                 /* run.max_duration */
};

/* One fault entry of a schedule. */
struct xfault {
    enum xaction action;
    char target[XPL_NAME_MAX];      /* target:, isolate: (partition) or a host (delay) */
    char target2[XPL_NAME_MAX];     /* delay: the other host of between */
    int64_t at_ns;                  /* at: (count 1) or every: (count > 1) */
    int count;                      /* 1: once, at at_ns; more: every at_ns, count times */
    int64_t duration_ns;            /* pause, restart, partition, delay; 0 for the others */
    int64_t offset_ns;              /* clock-jump */
    int64_t latency_ns;             /* delay */
    bool when_holder;               /* a server fault held back until a client holds */
};

struct xschedule {
    int n;
    struct xfault f[XPL_FAULTS_MAX];
};

/* ---- the PRNG: splitmix64 seeding a xorshift64* stream ---- */
struct xrng { uint64_t s; };
void xrng_seed(struct xrng *r, uint64_t seed);
uint64_t xrng_next(struct xrng *r);
/* uniform in [lo, hi] (hi >= lo) */
int64_t xrng_range(struct xrng *r, int64_t lo, int64_t hi);

/* ---- the explore: section ---- */
/* Read text's top-level explore: mapping into *sp. On error -1 with
 * "path:line:column: what is wrong" in err. */
int explore_spec_read(const char *text, size_t len, const char *path, struct explore_spec *sp,
                      char *err, size_t errlen);

/* What the scenario says that the defaults follow (filled by the command
 * from the loaded scenario and the running stores). */
struct explore_env {
    int64_t ttl_ns, business_ns, run_ns;
    int n_roles;                    /* server roles the designs use */
    char roles[XPL_TARGETS_MAX][XPL_NAME_MAX];
    bool role_clock[XPL_TARGETS_MAX]; /* ... and which a clock-jump may move */
    int n_hosts;                    /* the file's hosts: */
    char hosts[XPL_TARGETS_MAX][XPL_NAME_MAX];
};

/* Fill the defaults and sort the targets by kind. -1 with "path: ..." in
 * err when an action has nothing to aim at (partition without hosts:). */
int explore_spec_resolve(struct explore_spec *sp, const struct explore_env *env,
                         const char *path, char *err, size_t errlen);

/* ---- schedules ---- */
/* Draw one schedule from sp (faults[0]..faults[1] entries, sorted by time). */
void explore_draw(const struct explore_spec *sp, struct xrng *r, struct xschedule *out);

/* The schedule as a top-level faults: list, YAML text ending in a newline;
 * the bytes written (as snprintf: may be >= n when cut short). */
size_t explore_faults_yaml(const struct xschedule *s, char *buf, size_t n);

/* In short, "pause holder@1.20s/2.00s + restart redis@3.10s/0.50s". */
size_t explore_short(const struct xschedule *s, char *buf, size_t n);

/* ---- shrinking ---- */
#define XPL_CANDIDATES_MAX (XPL_FAULTS_MAX * 8)
/* The schedules one step smaller than s, most promising first: each entry
 * dropped, then each entry rarer (count - 1), shorter (duration halved
 * toward sp's minimum), later (at toward sp's latest). Returns how many
 * (at most XPL_CANDIDATES_MAX), each with a line of what it changed in
 * why[i]. */
int explore_candidates(const struct explore_spec *sp, const struct xschedule *s,
                       struct xschedule *out, char (*why)[96]);

/* Is a strictly smaller than b: fewer entries; or as many, each no more
 * often, no longer, no earlier (and no further clock jump), one of them
 * strictly. The order shrinking descends, so it ends. */
bool explore_smaller(const struct xschedule *a, const struct xschedule *b);

/* The walk back along a shrink path. A candidate is kept when it breaks
 * in one of k runs, so a step can trade most of the reproduction rate for
 * a little size. States 0 (the trial's schedule) to top (the smallest);
 * rate() measures state i over n runs (give_up: it may stop once 8 of n
 * is out of reach) and returns 0, or -1 when a run could not be made;
 * stop() says the budget is spent. The smallest is measured in full; when
 * it reproduces in fewer than 8 of n, the path is bisected for the last
 * state that reaches 8 of n in full (the trial's own schedule measured
 * last, when nothing after it did): that one is kept, else the smallest
 * stays. 0, or -1 from rate(). */
struct xwalk {
    int kept;                      /* the state kept */
    int fails, runs;               /* its rate */
    bool reached;                  /* it reproduced in 8 of n */
    int top_fails, top_runs;       /* the smallest's rate */
    bool cut;                      /* stop() ended the walk before it was done */
};
/* Can fails of runs no longer reach 8 of n? */
bool explore_out_of_reach(int fails, int runs, int n);
typedef int (*xrate_fn)(void *arg, int state, bool give_up, int *fails, int *runs);
int explore_walk_back(int top, int n, xrate_fn rate, bool (*stop)(void *arg), void *arg,
                      struct xwalk *out);

/* ---- the scenario's text ---- */
/* A top-level key of a block mapping: where its lines are. */
struct xtop {
    char key[32];
    size_t start, end;             /* bytes: its first line's start, the next key's */
    int line, column;              /* 1-based, of the key */
};
#define XPL_TOP_MAX 32
/* The top-level keys of text, in order. -1 with "path:line:column: ..."
 * on a YAML error or a top level that is not a block mapping. */
int explore_top_keys(const char *text, size_t len, const char *path, struct xtop *out, int *n,
                     char *err, size_t errlen);

/* text with the lines of top-level key `key` commented out ("# " before
 * each), malloc'd (NULL: out of memory); when the key is absent a copy.
 * Every line keeps its number. */
char *explore_comment_key(const char *text, size_t len, const struct xtop *keys, int n,
                          const char *key);

/* The byte range of the scalar at dotted path ("workload.business") in
 * text, as libyaml's marks give it; 0, or -1 when there is none. */
int explore_scalar_at(const char *text, size_t len, const char *path, size_t *start,
                      size_t *end);

/* text with [start, end) replaced by with, malloc'd (NULL: out of memory). */
char *explore_splice(const char *text, size_t len, size_t start, size_t end, const char *with);

/* A duration as the loader reads it back exactly: "1234ms", "2s", "0". */
void explore_dur(char *buf, size_t n, int64_t ns);

#endif
