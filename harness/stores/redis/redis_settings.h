/*
 * redis_settings.h - the Redis store's own settings: the keys under
 * backends.redis in a scenario (topology, replicas, masters, persistence,
 * the master's min-replicas-to-write and min-replicas-max-lag),
 * as rows (common/opt.h) the loader reads into a struct redis_settings
 * kept with the scenario (backend_ops.settings), the way a design's own
 * settings are kept. The store's files, and tests, read them with
 * redis_settings_of().
 */
#ifndef LOCKLAB_REDIS_SETTINGS_H
#define LOCKLAB_REDIS_SETTINGS_H

#include "opt.h"

#define REDIS_MAX_MASTERS 9  /* backends.redis.masters, at most */
#define REDIS_MAX_REPLICAS 4 /* backends.redis.replicas, at most */

/* backends.redis.persistence: what an embedded Redis keeps across a restart */
enum redis_persistence {
    PERSIST_NONE = 0,     /* nothing (no RDB, no AOF): a restart comes back empty */
    PERSIST_AOF_EVERYSEC, /* AOF, fsync once a second */
    PERSIST_AOF_ALWAYS    /* AOF, fsync before every reply */
};

struct redis_settings {
    char topology[16]; /* "single" (default) | "independent" | "sentinel" (a master,
                        * its replicas and 3 sentinels) */
    int replicas;      /* replicas in the sentinel topology, default 2 */
    int masters;       /* independent masters (redlock), default 5 */
    int persistence;   /* enum redis_persistence, default none */
    int min_replicas_to_write; /* sentinel topology: the master refuses writes with fewer
                                * replicas than this acknowledging (0: off, Redis's default) */
    int min_replicas_max_lag;  /* ... within this many seconds (Redis's default 10) */
};

/* The rows of backends.redis (backend_redis.settings). */
extern const struct opt redis_settings_rows[];

struct scenario;

/* Scenario s's Redis settings (never NULL). */
const struct redis_settings *redis_settings_of(const struct scenario *s);

#endif
