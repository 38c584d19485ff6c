/*
 * run_env.h - what the runner hands every client it forks besides the
 * scenario: where the design's servers are (and, from there, the lock
 * design's open hook gets them), where the stock store is, and where in
 * the results the design may keep files of its own (an adapter's stderr).
 */
#ifndef LOCKLAB_RUN_ENV_H
#define LOCKLAB_RUN_ENV_H

#include <stdbool.h>

#include "lock.h"
#include "progress.h"
#include "workload.h"

struct run_env {
    struct lock_servers servers;   /* the design's servers (the runner fills them per run) */
    struct workload_target stock;  /* the stock store (embedded, never faulted) */
    struct progress *progress;     /* what to draw on a terminal, NULL: nothing */
    char log_dir[1280];            /* the step's directory in the results for files the
                                      design keeps (lock_env.log_dir), "": none */
};

#endif
