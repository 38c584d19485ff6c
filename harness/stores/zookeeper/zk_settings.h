/*
 * zk_settings.h - the ZooKeeper store's own settings: the keys under
 * backends.zookeeper in a scenario (ensemble, session_timeout, force_sync),
 * as rows (common/opt.h) the loader reads into a struct zk_settings kept
 * with the scenario (backend_ops.settings). The store's files, and tests,
 * read them with zk_settings_of().
 */
#ifndef LOCKLAB_ZK_SETTINGS_H
#define LOCKLAB_ZK_SETTINGS_H

#include <stdint.h>

#include "opt.h"

struct zk_settings {
    int ensemble;               /* servers: 1 (default) or 3 */
    int64_t session_timeout_ns; /* each client's session timeout, default 10s */
    int force_sync;             /* fsync before answering: true (default, as in production) */
};

/* The rows of backends.zookeeper (backend_zookeeper.settings). */
extern const struct opt zk_settings_rows[];

struct scenario;

/* Scenario s's ZooKeeper settings (never NULL). */
const struct zk_settings *zk_settings_of(const struct scenario *s);

#endif
