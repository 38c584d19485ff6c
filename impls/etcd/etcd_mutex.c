/*
 * etcd_mutex.c - the recipe of etcd's Go client (clientv3/concurrency's
 * Mutex over a Session): a key per waiter under the lock's prefix, served
 * in the order of their create revisions.
 *
 * The client's session is a lease of lock.ttl, kept alive every ttl/3 by a
 * thread (Session's keep-alive) and revoked on close. Acquire puts
 * "<prefix><lease in hex>" with that lease in a transaction only if it
 * does not exist yet (compare create_revision == 0), reading in the same
 * transaction the key with the lowest create revision under the prefix
 * (the holder); our create revision is the transaction's revision, or,
 * when the key existed, the one read. When ours is the lowest we hold it.
 * Otherwise we wait for the deletion of the key with the next lower
 * create revision only (a range under the prefix with max_create_revision
 * = ours - 1, the last by create revision), on a watch from the revision
 * read, and look again: one waiter woken per release, as Curator's
 * InterProcessMutex. Once no lower key is left, our own key is read again,
 * as current clients do, so a session that expired while we waited is an
 * error rather than a grant. A waiter whose budget runs out deletes its
 * key. Release deletes our key (Unlock): RELEASE_NOT_OWNER when it was
 * gone already.
 *
 * How it breaks: a holder paused longer than the TTL stops its keep-alive
 * too, the lease expires with the key, the next waiter holds the lock and
 * the paused one resumes inside its critical section (Jepsen's etcd 3.4.3
 * finding). The same session asking again for a lock it holds finds its
 * own key and is granted at once, with no count (as Go's Mutex): the
 * inner release deletes the key and frees the lock under the outer hold,
 * so the design is not reentrant.
 *
 * Fencing token: our key's create revision. Keys are granted in create
 * revision order, so tokens rise from holder to holder.
 *
 * The protocol is etcd_machine.c's (ETCD_SM_MUTEX), in either mode: one process per
 * client (etcd_drive_block.c) or client groups (etcd_drive_group.c). What
 * the two forms once decided differently, or both wrongly (issue 31), now
 * one way, after etcd's concurrency package:
 *   - a request with the session's lease answered "requested lease not
 *     found" (HTTP 404: the lease expired behind a partition or a pause
 *     before the keep-alive said so) no longer ends the acquire in an
 *     error with the dead session reused until the keep-alive noticed:
 *     the session is over (Session.Done), a new one is granted
 *     (NewSession) and the acquire tries again, once, within its budget;
 *   - a keep-alive's late answer (TTL 0, or none) for a session replaced
 *     meanwhile no longer ends the new session (the grouped form compared
 *     the lease being renewed now, not the one the answer was for);
 *   - with the run stopping, no watch is sent (the blocking form sent one
 *     and abandoned it at once; a cancelled context fails before the RPC).
 */
#include "etcd_drive.h"

static const struct etcd_sm_design em = {.kind = ETCD_SM_MUTEX, .name = "etcd-mutex"};

static int em_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return etcd_block_open(out, env, &em, true, err);
}

static int em_group_open(struct lock_client **out, const struct lock_env *env,
                         struct evloop *loop, lock_opened_fn opened, void *arg,
                         struct lab_err *err)
{
    return etcd_group_open(out, env, loop, &em, true, opened, arg, err);
}

static const struct lock_async_ops em_async = {
    .open = em_group_open,
    .acquire = etcd_group_acquire,
    .release = etcd_group_release,
    .close = etcd_group_close,
    .crash = etcd_group_crash,
    .client_faults = true, /* its timers and transfers its own (etcd_drive_group.c) */
};

const struct lock_ops lock_etcd_mutex = {
    .name = "etcd-mutex",
    .backend = "etcd",
    .summary = "etcd concurrency.Mutex: a key per waiter under the prefix with the session's "
               "lease, wait for the next lower create revision; a paused holder's lease expires",
    .caps = LOCK_CAP_FENCING | LOCK_CAP_NOTIFIES,
    .open = em_open,
    .acquire = etcd_block_acquire,
    .release = etcd_block_release,
    .close = etcd_block_close,
    .async = &em_async,
};
