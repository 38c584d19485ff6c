/*
 * redis_settings.c - the rows of backends.redis (see redis_settings.h):
 * each key once, with its range, default and help, for the loader, its
 * messages and `locklab list --options`.
 */
#include "redis_settings.h"

#include <stdint.h>

#include "backend.h"
#include "scenario.h"

extern const struct backend_ops backend_redis;

#define FIELD(f) OPT_FIELD(struct redis_settings, f)

static const char *const topology_words[] = {"single", "independent", "sentinel", NULL};
static const char *const persistence_words[] = {"none", "aof-everysec", "aof-always", NULL};

_Static_assert(PERSIST_NONE == 0 && PERSIST_AOF_EVERYSEC == 1 && PERSIST_AOF_ALWAYS == 2,
               "persistence_words order");

const struct opt redis_settings_rows[] = {
    { .name = "topology", .type = OPT_STR, FIELD(topology), .def = "single",
      .choices = topology_words, .n_supported = 3,
      .help = "how the Redis lock store is laid out" },
    { .name = "replicas", .type = OPT_INT, FIELD(replicas), .min = 1, .max = REDIS_MAX_REPLICAS,
      .def = "2", .help = "replicas of the master, in the sentinel topology" },
    { .name = "masters", .type = OPT_INT, FIELD(masters), .min = 1, .max = REDIS_MAX_MASTERS,
      .def = "5", .flags = OPT_ODD, .help = "independent Redis masters, for redlock" },
    { .name = "persistence", .type = OPT_CHOICE, FIELD(persistence),
      .choices = persistence_words, .def = "none",
      .help = "what an embedded lock store or master keeps across a restart fault" },
    { .name = "min_replicas_to_write", .type = OPT_INT, FIELD(min_replicas_to_write), .min = 0,
      .max = REDIS_MAX_REPLICAS, .def = "0",
      .help = "sentinel topology: the master refuses writes unless this many replicas keep up "
              "(Redis's min-replicas-to-write; 0: off)" },
    { .name = "min_replicas_max_lag", .type = OPT_INT, FIELD(min_replicas_max_lag), .min = 1,
      .max = 3600, .def = "10",
      .help = "seconds: a replica whose last acknowledgement is older does not count "
              "(Redis's min-replicas-max-lag)" },
    { .name = NULL }
};

const struct redis_settings *redis_settings_of(const struct scenario *s)
{
    return backend_settings(s, &backend_redis);
}
