/*
 * none.c - no lock at all.
 *
 * The baseline every broken design is measured against: acquire always
 * succeeds at once, so with more than one client the oracle must see
 * overlapping critical sections and the stock workload must oversell.
 * If the lab ever calls this design safe under contention, the lab is
 * broken, not the lock.
 */
#include <errno.h>
#include <stdlib.h>

#include "lock.h"

struct lock_client {
    int unused; /* no state: there is no lock */
};

static int none_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    (void)env;
    *out = calloc(1, sizeof **out);
    if (!*out) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    return 0;
}

static enum lock_status none_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err)
{
    (void)c, (void)key, (void)wait_ns, (void)err;
    return LOCK_GRANTED;
}

static enum release_status none_release(struct lock_client *c, const char *key, struct lab_err *err)
{
    (void)c, (void)key, (void)err;
    return RELEASE_OK;
}

static void none_close(struct lock_client *c)
{
    free(c);
}

const struct lock_ops lock_none = {
    .name = "none",
    .backend = "none",
    .summary = "no lock at all: the baseline that must oversell",
    .caps = 0,
    .open = none_open,
    .acquire = none_acquire,
    .release = none_release,
    .close = none_close,
};
