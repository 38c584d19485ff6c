/*
 * client.h - one client of a run, in its forked process (client.c).
 */
#ifndef LOCKLAB_CLIENT_H
#define LOCKLAB_CLIENT_H

#include <sys/types.h>

#include "region.h"
#include "run_env.h"

/* The life of client idx in a forked process: open its connections, report
 * ready, wait at the start barrier, run its loop, close, and _exit (it
 * never returns). parent is the runner's pid (a client whose parent is
 * already gone exits at once). */
_Noreturn void client_main(const struct scenario *s, const struct lock_ops *ops,
                           const struct run_env *env, struct region *rg, int idx, pid_t parent);

#endif
