/*
 * etcd_lease.h - what etcd-lease's blocking hooks (etcd_lease.c) share
 * with its grouped ones (etcd_async_lease.c): its option and its
 * requests, so a grouped client sends exactly what a blocking one does.
 */
#ifndef LOCKLAB_ETCD_LEASE_H
#define LOCKLAB_ETCD_LEASE_H

#include "etcd_common.h"

struct el_options {
    int keepalive; /* renew the lease while held */
};

/* The etcd key of key and this grant's unique value (counts the grant). */
void etcd_lease_names(struct lock_client *c, const char *key, char ekey[ETCD_KEY_MAX + 32],
                      char value[64]);
/* The acquiring transaction: put value with lease if ekey's create
 * revision is 0, else read it. */
json_t *etcd_lease_try_req(const char *ekey, const char *value, int64_t lease);
/* Its answer: 1 created, 0 taken; *rev the transaction's revision. */
int etcd_lease_try_answer(const json_t *resp, int64_t *rev);
/* The releasing transaction: delete ekey only if it still holds value. */
json_t *etcd_lease_release_req(const char *ekey, const char *value);
/* A hold is older than half its lease: a fresh one before the next try. */
bool etcd_lease_stale(const struct lock_client *c, int64_t granted);

/* Its hooks in client groups (etcd_async_lease.c). */
extern const struct lock_async_ops etcd_lease_async;

#endif
