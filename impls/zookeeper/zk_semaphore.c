/*
 * zk_semaphore.c - Curator's InterProcessSemaphoreMutex: a semaphore of one
 * lease (InterProcessSemaphoreV2 with maxLeases = 1), not reentrant.
 *
 * The lock's node /locklab/<key> has two persistent children. locks/ holds
 * an internal mutex, the sequential queue of zk-sequential (zk_queue.c),
 * which admits one client at a time to the leases; leases/ holds one
 * ephemeral-sequential lease node per client that holds or wants the lock.
 * Acquire takes the internal mutex, creates its lease node (named after the
 * client and attempt, so a create whose reply was lost is found again),
 * and lists leases/ with a children watch: at most one lease there means
 * it holds the lock; otherwise it sleeps until the watch fires and lists
 * again. Then, granted or not, it takes its watch back (a check-watches
 * round trip, as Curator's removeWatchers), deletes its lease if it gave
 * up, and releases the internal mutex. Release deletes the lease.
 *
 * So a release wakes the one client waiting on leases/ (it holds the
 * internal mutex), and that client's release of the mutex wakes the next
 * in the locks/ queue, which creates its lease and waits in turn: about
 * two watch events per release, four writes and seven round trips per
 * lock and unlock, where zk-sequential needs one event, two writes and
 * three round trips. The waiter watches the whole leases/ directory, so
 * every change of it (another lease created or given up) wakes it too.
 * The server counts one more per cycle, which no callback sees: check-
 * watches only asks whether the watch is there, so the watch set by the
 * listing that granted stays on the server until the next change of
 * leases/ fires it. Whether a waiter waits on leases/ at all is a race:
 * it does when its listing comes before the holder's release. Curator
 * does all of this the same way, request for request (docs/benchmarks.md, "What
 * differs, and why").
 * People reach for this lock when it must be released by another thread
 * than the one that took it, which a per-thread hold count forbids.
 *
 * How it breaks: recursion. A nested acquire by the holder takes the
 * internal mutex, creates a second lease and finds two: it waits on its
 * own first lease, which only goes when the outer hold is released, after
 * the nested acquire returns. It waits out its whole budget holding the
 * internal mutex, so every other waiter waits with it, then times out
 * (blocked), deleting its lease and releasing the mutex on the way out.
 * Like every session lock, a holder paused past the session timeout loses
 * its lease while it still believes it holds the lock: two holders.
 *
 * Fencing token: the sequence number of the lease node. It is sound here
 * only because the semaphore has one lease: a client creates its lease
 * while it holds the internal mutex and keeps the mutex until the lease is
 * granted, so leases are granted in creation order and tokens rise. A
 * semaphore of N > 1 leases hands out N holds at once, which no token can
 * make exclusive.
 */
#include "zk_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define SEM_LOCKS "locks"   /* the internal mutex's queue, under the lock's node */
#define SEM_LEASES "leases" /* the lease nodes */
#define SEM_MAX_LEASES 1    /* a semaphore of one lease is a mutex */

static const char *const sem_dirs[] = {SEM_LOCKS, SEM_LEASES, NULL};

static int sem_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    if (zk_lock_open(out, env, err) != 0)
        return -1;
    (*out)->subdirs = sem_dirs;
    return 0;
}

/* Whether the listing holds our lease node. */
static bool sem_listed(const struct String_vector *sv, const char *base)
{
    for (int i = 0; i < sv->count; i++)
        if (strcmp(sv->data[i], base) == 0)
            return true;
    return false;
}

/* With the internal mutex held (in session gen): create our lease node
 * into lease and wait until it is one of at most SEM_MAX_LEASES, watching
 * leases/. A lease not granted is deleted. The children watch is taken
 * back before returning. */
static enum lock_status sem_lease(struct lock_client *c, const char *key, uint64_t gen,
                                  char *lease, size_t len, int64_t deadline, struct lab_err *err)
{
    char name[96], dir[ZK_PATH_MAX];
    snprintf(name, sizeof name, "lease-%s-%llu-", c->id, (unsigned long long)++c->creates);
    int r = zk_enter(c, key, SEM_LEASES, name, lease, len, deadline, err);
    if (r <= 0)
        return r < 0 ? LOCK_ERROR : LOCK_TIMEOUT;
    if (c->session_gen != gen) { /* the internal mutex went with the old session */
        zk_leave(c, lease, c->session_gen);
        lab_err_set(err, ZSESSIONEXPIRED, "zookeeper: the session expired while holding %s",
                    SEM_LOCKS);
        return LOCK_ERROR;
    }
    snprintf(dir, sizeof dir, "%s/%s", c->parent, SEM_LEASES);
    const char *base = lease + strlen(dir) + 1;

    enum lock_status st = LOCK_TIMEOUT;
    for (;;) {
        struct String_vector sv = {0, NULL};
        uint64_t seen = zk_wakes(c);
        int rc = zk_children_watch(c, dir, &sv);
        if (rc == ZOK) {
            bool listed = sem_listed(&sv, base);
            int n = sv.count;
            deallocate_String_vector(&sv);
            if (!listed) {
                lab_err_set(err, ZNONODE, "zookeeper: our lease %s vanished", base);
                st = LOCK_ERROR;
                break;
            }
            if (n <= SEM_MAX_LEASES) {
                st = LOCK_GRANTED;
                break;
            }
            if (lab_now_ns() >= deadline || *c->env->stop || !zk_wait(c, seen, deadline))
                break;
            continue;
        }
        if (zk_session_gone(rc)) {
            zk_session_drop(c); /* the lease went with the session */
            zk_fail(err, rc, "leases", base);
            return LOCK_ERROR;
        }
        if (!zk_transient(rc)) {
            zk_fail(err, rc, "leases", base);
            st = LOCK_ERROR;
            break;
        }
        r = zk_recover(c, gen, deadline, err);
        if (r < 0)
            return LOCK_ERROR; /* the session is gone, and the lease with it */
        if (r == 0)
            break;
    }
    if (st != LOCK_GRANTED)
        zk_leave(c, lease, gen);
    zk_unwatch_children(c, dir);
    return st;
}

static enum lock_status sem_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err)
{
    int64_t deadline = lab_now_ns() + wait_ns;
    if (c->n_held >= ZK_MAX_HOLDS) {
        lab_err_set(err, ENOSPC, "zookeeper: more than %d locks held at once", ZK_MAX_HOLDS);
        return LOCK_ERROR;
    }
    char lock[ZK_PATH_MAX], lease[ZK_PATH_MAX];
    int r = zk_queue_lock(c, key, SEM_LOCKS, lock, sizeof lock, deadline, err);
    if (r <= 0)
        return r < 0 ? LOCK_ERROR : LOCK_TIMEOUT;
    uint64_t gen = c->session_gen;
    enum lock_status st = sem_lease(c, key, gen, lease, sizeof lease, deadline, err);

    /* granted or not, the internal mutex goes now; when ZooKeeper cannot be
     * reached, zk_delete_ours closes the session and the mutex goes with it */
    struct lab_err uerr = {0};
    zk_delete_ours(c, lock, gen, &uerr);
    if (st != LOCK_GRANTED)
        return st;
    if (c->session_gen != gen) { /* the session ended: our lease went with it */
        lab_err_set(err, ZSESSIONEXPIRED, "zookeeper: the session ended while taking a lease%s%s",
                    uerr.code ? ": " : "", uerr.msg);
        return LOCK_ERROR;
    }
    if (zk_hold_push(c, key, lease, zk_sequence_of(lease), err) != 0) {
        zk_leave(c, lease, gen);
        return LOCK_ERROR;
    }
    return LOCK_GRANTED;
}

const struct lock_ops lock_zk_semaphore = {
    .name = "zk-semaphore",
    .backend = "zookeeper",
    .summary = "Curator InterProcessSemaphoreMutex: a one-lease semaphore (internal mutex under "
               "locks/, lease nodes under leases/), not reentrant: recursion waits on itself",
    .caps = LOCK_CAP_NOTIFIES | LOCK_CAP_FENCING,
    .options = zk_option_rows,
    .options_size = sizeof(struct zk_options),
    .open = sem_open,
    .acquire = sem_acquire,
    .release = zk_hold_release, /* delete the lease */
    .close = zk_lock_close,
};
