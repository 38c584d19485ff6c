/*
 * group.h - a client group: one forked process running several logical
 * clients on one event loop (group.c), for runs with
 * run.clients_per_process above 1 and a design with asynchronous hooks
 * (lock_ops.async).
 */
#ifndef LOCKLAB_GROUP_H
#define LOCKLAB_GROUP_H

#include <sys/types.h>

#include "region.h"
#include "run_env.h"

/* The life of clients first .. first+n-1 in one forked process: open them
 * all, report each ready (or failed), wait at the start barrier, run them
 * until each is done, close, and _exit (it never returns). parent is the
 * runner's pid. */
_Noreturn void group_main(const struct scenario *s, const struct lock_ops *ops,
                          const struct run_env *env, struct region *rg, int first, int n,
                          pid_t parent);

#endif
