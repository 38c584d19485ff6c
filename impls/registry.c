/*
 * registry.c - the explicit list of every lock implementation.
 *
 * No link-time self-registration: adding a design means writing its file
 * and adding one line here, and `locklab list` shows them in this order
 * (from no lock at all to the designs that hold).
 */
#include <string.h>

#include "lock.h"

extern const struct lock_ops lock_none;
extern const struct lock_ops lock_local_mutex;
extern const struct lock_ops lock_redis_check_then_set;
extern const struct lock_ops lock_redis_setnx_expire;
extern const struct lock_ops lock_redis_set_del;
extern const struct lock_ops lock_redis_get_del;
extern const struct lock_ops lock_redis_lua;
extern const struct lock_ops lock_redlock;
extern const struct lock_ops lock_redisson;
extern const struct lock_ops lock_redis_watchdog;
extern const struct lock_ops lock_redis_reentrant;
extern const struct lock_ops lock_redis_script;
extern const struct lock_ops lock_redis_wait;
extern const struct lock_ops lock_zk_ephemeral;
extern const struct lock_ops lock_zk_sequential;
extern const struct lock_ops lock_zk_semaphore;
extern const struct lock_ops lock_etcd_lease;
extern const struct lock_ops lock_etcd_mutex;
extern const struct lock_ops lock_etcd_lock_api;
extern const struct lock_ops lock_mysql_unique;
extern const struct lock_ops lock_mysql_for_update;
extern const struct lock_ops lock_mysql_get_lock;
extern const struct lock_ops lock_mysql_optimistic;
extern const struct lock_ops lock_pg_advisory;
extern const struct lock_ops lock_pg_for_update;

const struct lock_ops *const lock_registry[] = {
    &lock_none,          &lock_local_mutex,   &lock_redis_check_then_set,
    &lock_redis_setnx_expire, &lock_redis_set_del, &lock_redis_get_del,
    &lock_redis_lua,
    &lock_redisson,
    &lock_redis_watchdog,
    &lock_redis_reentrant,
    &lock_redlock,
    &lock_redis_script,
    &lock_redis_wait,
    &lock_zk_ephemeral,
    &lock_zk_sequential,
    &lock_zk_semaphore,
    &lock_etcd_lease,
    &lock_etcd_mutex,
    &lock_etcd_lock_api,
    &lock_mysql_unique,
    &lock_mysql_for_update,
    &lock_mysql_get_lock,
    &lock_mysql_optimistic,
    &lock_pg_advisory,
    &lock_pg_for_update,
};

const int lock_registry_count = (int)(sizeof lock_registry / sizeof lock_registry[0]);

const struct lock_ops *lock_find(const char *name)
{
    for (int i = 0; i < lock_registry_count; i++)
        if (strcmp(lock_registry[i]->name, name) == 0)
            return lock_registry[i];
    return NULL;
}
