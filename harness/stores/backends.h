/*
 * backends.h - the servers one locklab invocation needs, decided once.
 *
 * Before anything runs, a command plans every (scenario, design) pair it
 * will run, then starts (or checks) what the stores' tables (backend.h)
 * say they need, so a missing redis-server is reported up front with exit
 * code 3, not in the middle of a table. A store is embedded unless the user
 * named external servers for it (--redis, --zk, or their environment
 * variables: the tables say which). The stock store is always embedded,
 * because it is the ground truth of the stock workload and must never be a
 * shared server or a fault's target.
 */
#ifndef LOCKLAB_BACKENDS_H
#define LOCKLAB_BACKENDS_H

#include <stdbool.h>

#include "backend.h"
#include "scenario.h"
#include "servers.h"

struct backends {
    bool used[BACKEND_MAX];             /* a planned design uses registry entry i */
    const char *external[BACKEND_MAX];  /* the user's servers for entry i, or NULL */
    bool need_stock;                     /* a planned scenario has the stock workload */
    bool have_stock;                     /* ... and it runs */
    struct server stock_srv;
};

/* Start an empty plan. */
void backends_init(struct backends *b);

/* Add every design of s (each of its impls) to the plan. */
void backends_plan(struct backends *b, const struct scenario *s);

/* Add one design running s to the plan. */
void backends_plan_one(struct backends *b, const struct scenario *s, const struct lock_ops *ops);

/* Start or check everything planned. 0, or -1 with err filled (an
 * environment failure: exit 3); what did start is then stopped again. */
int backends_start(struct backends *b, const volatile int *stop, struct lab_err *err);

void backends_stop(struct backends *b);

#endif
