/*
 * etcd_lock_api.h - what etcd-lock-api's blocking hooks (etcd_lock_api.c)
 * share with its grouped ones (etcd_async_lock_api.c): its requests and
 * how their answers are read, so a grouped client sends exactly what a
 * blocking one does.
 */
#ifndef LOCKLAB_ETCD_LOCK_API_H
#define LOCKLAB_ETCD_LOCK_API_H

#include "etcd_common.h"

/* The Lock call: {name: "locklab/<key>", lease}. */
json_t *etcd_lock_api_req(const char *key, int64_t lease);
/* Its answer: the owner key into owner; 1, or -1 with err. */
int etcd_lock_api_owner(const json_t *msg, char owner[ETCD_KEY_MAX + 32], struct lab_err *err);
/* The fencing token from the range of the owner key: its create
 * revision, or 0 with err when the key was gone. */
int64_t etcd_lock_api_token(const json_t *range, struct lab_err *err);

/* Its hooks in client groups (etcd_async_lock_api.c). */
extern const struct lock_async_ops etcd_lock_api_async;

#endif
