/*
 * explore_cmd.h - what `locklab explore`'s two files share
 * (cmd_explore.c: the options, the trials, the repro files and the
 * report; cmd_explore_shrink.c: shrinking a break and measuring how often
 * it reproduces): the state of one invocation, of each file and of each
 * design, and the few steps both take (a scenario's text loaded and run
 * once, the budget).
 */
#ifndef LOCKLAB_EXPLORE_CMD_H
#define LOCKLAB_EXPLORE_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "explore.h"
#include "lab.h"
#include "lock.h"
#include "runner.h"
#include "scenario.h"

#define XPL_SHRINK_STEPS_MAX 60

struct xopts {
    int trials;          /* --trials N (default 20; with --budget alone: until it is spent) */
    bool trials_given;
    int64_t budget_ns;   /* --budget DUR: 0 none */
    uint64_t seed;       /* --seed S */
    bool seed_given;
    const char *out;     /* --out DIR */
    int k, n;            /* -k re-runs per shrink candidate, -n reproduction runs */
    bool quiet;
};

/* One trial of one design, for the report. */
struct xtrial {
    int trial;
    int design;
    char schedule[320];
    enum verdict verdict;
    bool pass;
    int at_stake;        /* 1: a fault of the trial put the lock at stake (the run's
                          * at-stake records, at_stake.h), 0: none did */
};

/* A state of the shrink path: the schedule and text after a kept step. */
struct xkept {
    struct xschedule sch;
    char *base;          /* a copy of the design's base, NULL: the file's own */
};

/* What became of one design. */
struct xdesign {
    const struct lock_ops *ops;
    int trials;          /* trials it ran */
    int at_stake;        /* of those, how many put the lock at stake */
    int broke;           /* the trial that broke it, 0: held */
    int64_t found_ns;    /* exploring time until then (other designs' shrinking left out) */
    enum verdict verdict;
    verdict_set expected;
    int shrink_steps;
    bool shrink_cut;     /* the budget stopped the shrinking */
    char path[16][160];  /* the shrink path, a line a kept step (the first 16) */
    int n_path;
    int repro_fails, repro_runs;
    struct xschedule final;
    char *base;          /* the file's text as shrinking left it (fewer clients,
                          * shorter business and run); NULL: the file's own */
    struct xkept *kept;  /* every state of the shrink path, the trial's first:
                          * what xcmd_reproduce() walks back along */
    int n_kept;
    char repro[1600];
};

struct xfile {
    const char *path;
    char *text;          /* the file as written */
    size_t len;
    char *base;          /* ... its explore: block commented out */
    struct explore_spec sp;
    struct scenario *s;  /* base as loaded */
    struct scenario *probe; /* base with an entry of every action: what the servers need */
    int n_designs;
    struct xdesign d[SCN_MAX_IMPLS];
    struct xtrial *t;
    int n_t, cap_t;
    char dir[1400];      /* its run folder */
};

struct xctx {
    const struct xopts *o;
    struct run_env env;
    struct run_result *res;
    struct scenario *cur;
    int64_t deadline;    /* CLOCK_MONOTONIC, 0: none */
    int64_t reserve_ns;  /* of the budget, kept for measuring the repro while shrinking */
    char tmp[1500];      /* where a trial's text is written */
};

/* Is the budget spent (less what c->reserve_ns keeps), or a stop asked? */
bool xcmd_over_budget(const struct xctx *c);

/* Load text (written to tmp) as a scenario; the loader's messages name
 * shown instead of tmp, whose lines are the file's own. quiet: 0 the
 * loader's warnings and errors shown, 1 its errors only (a trial's
 * warnings are the same for every trial), 2 nothing (a candidate tried). */
int xcmd_load_text(const char *tmp, const char *shown, const char *text, struct scenario *out,
                   int quiet);

/* Run design ops once on text. 0 with *v and *pass (the expectation met,
 * or nothing tested: no break), -1 when the run could not be made
 * (message printed). */
int xcmd_run_text(struct xctx *c, const struct xfile *x, const char *text,
                  const struct lock_ops *ops, enum verdict *v, bool *pass);

/* The text d runs: the file's (as shrinking left it for d; d NULL: the
 * file's own) with sch as its faults: list, malloc'd (NULL: out of memory). */
char *xcmd_schedule_text(const struct xfile *x, const struct xdesign *d,
                         const struct xschedule *sch);

/* ---- cmd_explore_shrink.c ---- */
/* d's present state onto its shrink path: 0, or -1 out of memory. */
int xcmd_push_kept(struct xdesign *d);
/* Shrink d's failing schedule (d->final), then the file's clients,
 * business and run (d->base), each step kept when the design still breaks
 * in one of k runs, until none does or the budget is spent. 0, or -1 when
 * a run could not be made. */
int xcmd_shrink_schedule(struct xctx *c, struct xfile *x, struct xdesign *d, FILE *log);
int xcmd_shrink_text(struct xctx *c, struct xfile *x, struct xdesign *d, FILE *log);
/* d's reproduction rate, its shrink path walked back (bisected) to the
 * last state that reproduces in 8 of n; the path says where it went. */
int xcmd_reproduce(struct xctx *c, const struct xfile *x, struct xdesign *d);

#endif
