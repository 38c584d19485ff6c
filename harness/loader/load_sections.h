/*
 * load_sections.h - the handlers of the scenario file's keys that need
 * more than one row (impls, clients, lock.keys, workload.fencing, expect,
 * adapters, the stores' sections of backends), each in its own file of
 * harness/loader/ (faults: the faults room's, harness/faults/fault_load.h),
 * and what the loader calls once the file is read.
 *
 * Internal to the loader: scenario_load.c's tables name these handlers; the
 * rest of the program sees only scenario.h.
 */
#ifndef LOCKLAB_SCENARIO_SECTIONS_H
#define LOCKLAB_SCENARIO_SECTIONS_H

#include "opt_engine.h"

/* OPT_NODE handlers (common/opt.h's opt_handler) */
int load_impls(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
int load_clients(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
int load_keys(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
int load_fencing(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
int load_expect(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
int load_hosts(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
/* The most clients any step of the run has (a clients sweep's largest). */
int scenario_most_clients(const struct scenario *s);
int load_arrival_rate(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
/* adapters, met again in its place among the keys: read already */
int load_adapters_done(struct opt_loader *L, const yaml_node_t *value, const char *keypath);

/* Read the root's adapters key first, if it has one (impls and expect
 * name the adapters). */
int load_adapters_first(struct opt_loader *L, const yaml_node_t *root);

/* Once the designs have resolved their settings (designs_finish): tell each
 * adapter the renewal settings of its store's built-in designs. */
void adapters_renewals(struct scenario *s);

/* The rows of one adapters entry, for the key reference. */
extern const struct opt adapter_opts[];

/* The stores' settings fit in scenario.store_settings (an internal error
 * if not). */
int stores_fit(struct opt_loader *L);

/* The sections of backends: one per store with settings of its own,
 * named as the store, its fields at its struct in scenario.store_settings. */
const struct opt *stores_section_rows(void);

/* Once the file is read: each store checks its settings against the rest
 * of the scenario (backend_ops.finish_settings). */
int stores_finish(struct opt_loader *L);

/* The designs' settings fit in scenario.options (an internal error if not). */
int designs_fit(struct opt_loader *L);

/* Once the file is read: each design derives and checks its settings. */
int designs_finish(struct opt_loader *L);

#endif
