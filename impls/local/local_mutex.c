/*
 * local_mutex.c - a pthread mutex local to one process.
 *
 * This is the "synchronized in a cluster" mistake from the seeds: a lock
 * that is perfectly correct between the threads of one process and does
 * nothing between processes. Every locklab client is its own process with
 * its own copy of this mutex, exactly like every JVM of a cluster has its
 * own monitor, so it grants every request and cannot exclude anyone.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lock.h"

struct lock_client {
    pthread_mutex_t mutex; /* this process's mutex: invisible to the others */
};

static int local_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    (void)env;
    *out = calloc(1, sizeof **out);
    if (!*out) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    pthread_mutex_init(&(*out)->mutex, NULL);
    return 0;
}

static enum lock_status local_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                      struct lab_err *err)
{
    (void)key;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += wait_ns / 1000000000 + (until.tv_nsec + wait_ns % 1000000000) / 1000000000;
    until.tv_nsec = (until.tv_nsec + wait_ns % 1000000000) % 1000000000;
    int rc = pthread_mutex_timedlock(&c->mutex, &until);
    if (rc == ETIMEDOUT)
        return LOCK_TIMEOUT; /* only a nested acquire can find it taken: not reentrant */
    if (rc) {
        lab_err_set(err, rc, "pthread_mutex_lock: %s", strerror(rc));
        return LOCK_ERROR;
    }
    return LOCK_GRANTED;
}

static enum release_status local_release(struct lock_client *c, const char *key, struct lab_err *err)
{
    (void)key;
    int rc = pthread_mutex_unlock(&c->mutex);
    if (rc) {
        lab_err_set(err, rc, "pthread_mutex_unlock: %s", strerror(rc));
        return RELEASE_ERROR;
    }
    return RELEASE_OK;
}

static void local_close(struct lock_client *c)
{
    pthread_mutex_destroy(&c->mutex);
    free(c);
}

const struct lock_ops lock_local_mutex = {
    .name = "local-mutex",
    .backend = "none",
    .summary = "a pthread mutex private to each process: no exclusion across processes",
    .caps = 0,
    .open = local_open,
    .acquire = local_acquire,
    .release = local_release,
    .close = local_close,
};
