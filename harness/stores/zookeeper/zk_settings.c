/*
 * zk_settings.c - the rows of backends.zookeeper (see zk_settings.h): each
 * key once, with its range, default and help, for the loader, its messages
 * and `locklab list --options`.
 */
#include "zk_settings.h"

#include "backend.h"
#include "scenario.h"

extern const struct backend_ops backend_zookeeper;

#define FIELD(f) OPT_FIELD(struct zk_settings, f)

static const char *const bool_words[] = {"false", "true", NULL}; /* index = value */

const struct opt zk_settings_rows[] = {
    { .name = "ensemble", .type = OPT_INT, FIELD(ensemble), .min = 1, .max = 3, .def = "1",
      .flags = OPT_ODD, .help = "number of ZooKeeper servers" },
    { .name = "session_timeout", .type = OPT_DUR, FIELD(session_timeout_ns), .min = 1,
      .def = "10s", .help = "ZooKeeper session timeout of each client" },
    { .name = "force_sync", .type = OPT_CHOICE, FIELD(force_sync), .choices = bool_words,
      .def = "true", .help = "fsync the transaction log before answering" },
    { .name = NULL }
};

const struct zk_settings *zk_settings_of(const struct scenario *s)
{
    return backend_settings(s, &backend_zookeeper);
}
