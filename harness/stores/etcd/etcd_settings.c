/*
 * etcd_settings.c - the rows of backends.etcd (see etcd_settings.h): each
 * key once, with its range, default and help, for the loader, its messages
 * and `locklab list --options`.
 */
#include "etcd_settings.h"

#include "backend.h"
#include "scenario.h"

extern const struct backend_ops backend_etcd;

const struct opt etcd_settings_rows[] = {
    { .name = "members", .type = OPT_INT, OPT_FIELD(struct etcd_settings, members), .min = 1,
      .max = 3, .def = "1", .flags = OPT_ODD, .help = "number of etcd members (1 or 3)" },
    { .name = NULL }
};

const struct etcd_settings *etcd_settings_of(const struct scenario *s)
{
    return backend_settings(s, &backend_etcd);
}
