/*
 * fault_load.h - reading a scenario's faults: list (fault_load.c), for the
 * scenario loader: its table names load_faults as the handler of the
 * faults key, calls fault_load_finish once the file is read, and lists
 * the entry's keys in its key reference.
 */
#ifndef LOCKLAB_FAULT_LOAD_H
#define LOCKLAB_FAULT_LOAD_H

#include "opt_engine.h"

/* OPT_NODE handler of the faults key (common/opt.h's opt_handler). */
int load_faults(struct opt_loader *L, const yaml_node_t *value, const char *keypath);

/* Once the file is read: a default window for an action that waits on
 * its own (a failover), and a warning when lock.wait outlasts the time
 * left after the last fault. */
int fault_load_finish(struct opt_loader *L); /* 0, or -1: a partition without its hosts */

/* The keys of a fault entry, as rows (name and help), NULL-terminated. */
extern const struct opt fault_entry_opts[];

#endif
