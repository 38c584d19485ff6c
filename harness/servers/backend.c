/*
 * backend.c - the registry of store tables (see backend.h): the one place
 * where a backend's name is compared.
 */
#include "backend.h"

#include <string.h>

static const struct backend_ops *const backend_registry[] = {&backend_redis, &backend_zookeeper};

const struct backend_ops *backend_of(const struct lock_ops *ops)
{
    for (size_t i = 0; i < sizeof backend_registry / sizeof backend_registry[0]; i++)
        if (strcmp(ops->backend, backend_registry[i]->name) == 0)
            return backend_registry[i];
    return NULL;
}
