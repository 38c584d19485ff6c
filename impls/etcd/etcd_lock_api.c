/*
 * etcd_lock_api.c - etcd's own Lock service (v3lock, the gRPC Lock call;
 * etcdctl 3.4's `lock` runs the recipe itself instead, as etcd-mutex): the
 * server runs the concurrency recipe for the client.
 *
 * The client's session is a lease of lock.ttl kept alive every ttl/3 and
 * revoked on close, as etcdctl's. Acquire is one blocking call,
 * /v3/lock/lock {name: "locklab/<key>", lease}: the member puts
 * "<name>/<lease in hex>" and answers only once every key created before
 * it under that prefix is deleted, with the owner key. A budget that runs
 * out abandons the call; the member then deletes the waiter's key. With
 * fencing, one range of the owner key reads its create revision (the Lock
 * answer's header revision is the revision of the last wait, not the
 * key's). Release is /v3/lock/unlock {key}, a plain delete that says
 * nothing of whether the key was still ours: RELEASE_UNCHECKED.
 *
 * How it breaks, as etcd-mutex: a holder paused past its TTL loses its
 * lease and key, the next waiter is answered, and the paused one resumes
 * inside its critical section. Asking again with the same lease for a
 * lock the session holds answers at once (the key exists): no count, the
 * inner unlock frees the outer hold; not reentrant.
 *
 * Fencing token: the owner key's create revision, rising from holder to
 * holder since keys are granted in create revision order.
 *
 * A leader killed: the member runs the recipe with a client of its own,
 * whose writes are raft proposals; one it forwarded to the leader just
 * before that leader died is lost, and the member answers the Lock call
 * only when its request timeout runs out (5 s + 2 election timeouts: 6 s
 * embedded), "etcdserver: request timed out, possibly due to previous
 * leader failure". A budget shorter than that times out (blocked). The
 * call is not sent again to another member: from the client a lost call
 * looks like a long wait, and abandoning a call gives up the waiter's
 * place in the queue (docs/benchmarks.md, the leader killed on 3 members).
 *
 * The protocol is etcd_machine.c's (ETCD_SM_LOCK_API), in either mode: one process per
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
 *   - with the run stopping or the budget spent before the call, no Lock
 *     call is sent (the blocking form sent one and abandoned it at once).
 */
#include "etcd_drive.h"

static const struct etcd_sm_design ela = {.kind = ETCD_SM_LOCK_API, .name = "etcd-lock-api"};

static int ela_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return etcd_block_open(out, env, &ela, true, err);
}

static int ela_group_open(struct lock_client **out, const struct lock_env *env,
                         struct evloop *loop, lock_opened_fn opened, void *arg,
                         struct lab_err *err)
{
    return etcd_group_open(out, env, loop, &ela, true, opened, arg, err);
}

static const struct lock_async_ops ela_async = {
    .open = ela_group_open,
    .acquire = etcd_group_acquire,
    .release = etcd_group_release,
    .close = etcd_group_close,
    .crash = etcd_group_crash,
    .client_faults = true, /* its timers and transfers its own (etcd_drive_group.c) */
};

const struct lock_ops lock_etcd_lock_api = {
    .name = "etcd-lock-api",
    .backend = "etcd",
    .summary = "etcd's Lock service (v3lock): one blocking call per grant with the "
               "session's lease; a paused holder's lease expires",
    .caps = LOCK_CAP_FENCING | LOCK_CAP_NOTIFIES,
    .open = ela_open,
    .acquire = etcd_block_acquire,
    .release = etcd_block_release,
    .close = etcd_block_close,
    .async = &ela_async,
};
