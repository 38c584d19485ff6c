/*
 * backend.h - one table per kind of store the lock designs talk to, so the
 * runner never asks which store a design uses (redis's ae.c talks to one
 * aeApi* interface the same way, whatever the multiplexer).
 *
 * A design names its store in lock_ops.backend; backend_of() finds the
 * table (the only place that compares backend names). Each table knows,
 * for one run of one design: how to clear the keys that run will use (a
 * killed holder's lock left by an earlier run would block it), how many
 * operations its servers have served (for server operations per acquire),
 * and how to describe the servers the result ran on. Starting and stopping
 * the servers of an invocation is backends.c.
 */
#ifndef LOCKLAB_BACKEND_H
#define LOCKLAB_BACKEND_H

#include <stdint.h>

#include "lock.h"
#include "run_env.h"
#include "scenario.h"

struct backend_ops {
    const char *name; /* as lock_ops.backend names it */

    /* Remove whatever an earlier run left under the keys s will use with
     * ops (one key, or one per client). 0 or -1 with err filled. */
    int (*clear)(const struct lock_ops *ops, const struct run_env *env, const struct scenario *s,
                 struct lab_err *err);

    /* Operations the servers ops talks to have served so far, into *ops_served.
     * 0, or -1 with err filled when the figure cannot be had (it is then
     * left out: a figure, not a precondition). */
    int (*server_ops)(const struct lock_ops *ops, const struct run_env *env, int64_t *ops_served,
                      struct lab_err *err);

    /* Fill out with the servers ops really runs on in env for s. */
    void (*describe)(const struct lock_ops *ops, const struct run_env *env,
                     const struct scenario *s, struct run_servers *out);
};

extern const struct backend_ops backend_redis;
extern const struct backend_ops backend_zookeeper;

/* The table of ops's store, or NULL for a design without one ("none": the
 * lock lives in the client process, nothing to clear or count). */
const struct backend_ops *backend_of(const struct lock_ops *ops);

#endif
