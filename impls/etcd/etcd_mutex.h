/*
 * etcd_mutex.h - what etcd-mutex's blocking hooks (etcd_mutex.c) share
 * with its grouped ones (etcd_async_mutex.c): its names and its requests,
 * so a grouped client sends exactly what a blocking one does.
 */
#ifndef LOCKLAB_ETCD_MUTEX_H
#define LOCKLAB_ETCD_MUTEX_H

#include "etcd_common.h"

/* The lock's prefix ("locklab/<key>/") and our key under it (the
 * session's lease in hex). */
void etcd_mutex_names(const char *key, int64_t lease, char pfx[ETCD_KEY_MAX + 16],
                      char mine[ETCD_KEY_MAX + 32]);
/* The entering transaction: put mine with lease if it does not exist,
 * else read it; either way read the first key under pfx by create
 * revision (the holder). */
json_t *etcd_mutex_enter_req(const char *pfx, const char *mine, int64_t lease);
/* Its answer: 1 ours holds, 0 another does; *my_rev our key's create
 * revision. */
int etcd_mutex_enter_answer(const json_t *resp, int64_t *my_rev);
/* The range of the last key under pfx created before my_rev. */
json_t *etcd_mutex_lower_req(const char *pfx, int64_t my_rev);
/* Its answer: 1 such a key is left (its name in last, *rev the revision
 * read), 0 none. */
int etcd_mutex_lower_answer(const json_t *resp, char last[ETCD_KEY_MAX + 32], int64_t *rev);

/* Its hooks in client groups (etcd_async_mutex.c). */
extern const struct lock_async_ops etcd_mutex_async;

#endif
