/*
 * backend.c - the registry of store tables (see backend.h): the one place
 * where a backend's name is compared. A new store is one file with its
 * table and one line here.
 */
#include "backend.h"

#include <stdio.h>
#include <string.h>

extern const struct backend_ops backend_redis;
extern const struct backend_ops backend_zookeeper;
extern const struct backend_ops backend_mysql;
extern const struct backend_ops backend_postgres;

const struct backend_ops *const backend_registry[] = {
    &backend_redis,
    &backend_zookeeper,
    &backend_mysql,
    &backend_postgres,
};
_Static_assert(sizeof backend_registry / sizeof backend_registry[0] <= BACKEND_MAX,
               "raise BACKEND_MAX");
const int backend_count = (int)(sizeof backend_registry / sizeof backend_registry[0]);

const struct backend_ops *backend_find(const char *name)
{
    for (int i = 0; i < backend_count; i++)
        if (strcmp(name, backend_registry[i]->name) == 0)
            return backend_registry[i];
    return NULL;
}

const struct backend_ops *backend_of(const struct lock_ops *ops)
{
    return backend_find(ops->backend);
}

int backend_index(const struct backend_ops *be)
{
    for (int i = 0; i < backend_count; i++)
        if (backend_registry[i] == be)
            return i;
    return -1;
}

void backend_fill_conn(struct lock_servers *sv)
{
    size_t used = 0;
    sv->conn[0] = '\0';
    for (int i = 0; i < sv->n && used < sizeof sv->conn; i++) {
        int w = snprintf(sv->conn + used, sizeof sv->conn - used, "%s%s:%d", i ? "," : "",
                         sv->node[i].host, sv->node[i].port);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}
