/*
 * etcd_settings.h - the etcd store's own settings: the keys under
 * backends.etcd in a scenario (members), as rows (common/opt.h) the loader
 * reads into a struct etcd_settings kept with the scenario
 * (backend_ops.settings); the store reads them with etcd_settings_of().
 */
#ifndef LOCKLAB_ETCD_SETTINGS_H
#define LOCKLAB_ETCD_SETTINGS_H

#include "opt.h"

struct etcd_settings {
    int members; /* members of the embedded cluster: 1 (default) or 3 */
};

/* The rows of backends.etcd (backend_etcd.settings). */
extern const struct opt etcd_settings_rows[];

struct scenario;

/* Scenario s's etcd settings (never NULL). */
const struct etcd_settings *etcd_settings_of(const struct scenario *s);

#endif
