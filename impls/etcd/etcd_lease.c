/*
 * etcd_lease.c - the simplest etcd lock: one key, created in a transaction
 * only if it does not exist (its create revision is 0), carrying a lease
 * of lock.ttl; the lock is whoever's value the key holds.
 *
 * Acquire grants a lease, then sends the transaction (compare
 * create_revision == 0, put our unique value with the lease; else read
 * the key). A waiter that finds the key taken watches it from the revision
 * it read and tries again when it is deleted (released, or its lease
 * expired): one watch event per waiter per release, every waiter woken.
 * A lease older than half its TTL is replaced before a try, so the key is
 * never put with a lease about to run out. Release deletes the key in a
 * transaction only if it still holds our value (RELEASE_NOT_OWNER
 * otherwise); the lease, with nothing attached any more, is left to run
 * out. With etcd_keepalive: true a keep-alive thread renews the lease
 * every ttl/3 while the lock is held (Redisson's watchdog, etcd's
 * KeepAlive).
 *
 * How it breaks: without keep-alive, a business longer than the TTL loses
 * the key under its holder; with it, a holder paused longer than the TTL
 * (GC, SIGSTOP: the thread pauses too) does. Either way a second client
 * gets in while the first still works. Not reentrant: a nested acquire
 * finds its own key taken and waits for itself until its budget runs out.
 *
 * Fencing token: the key's create revision, the transaction's revision.
 * etcd's revision grows with every write of the cluster, and a key created
 * later has a higher one, so tokens rise from holder to holder.
 *
 * The protocol is etcd_machine.c's (ETCD_SM_LEASE), in either mode: one
 * process per client (etcd_drive_block.c) or client groups
 * (etcd_drive_group.c). What the two forms once decided differently
 * (issue 31), now one way: with the run stopping, no watch is sent (the
 * blocking form sent one and abandoned it at once; a cancelled context
 * fails before the RPC in Go's client); a keep-alive's late answer for a
 * lease renewed no more changes nothing.
 */
#include "etcd_drive.h"

struct el_options {
    int keepalive; /* renew the lease while held */
};

static const char *const bool_words[] = {"false", "true", NULL}; /* index = value */

static const struct opt el_rows[] = {
    { .name = "etcd_keepalive", .type = OPT_CHOICE, OPT_FIELD(struct el_options, keepalive),
      .choices = bool_words, .def = "false",
      .help = "etcd-lease: renew the lease every ttl/3 while the lock is held" },
    { .name = NULL }
};

static const struct etcd_sm_design el = {.kind = ETCD_SM_LEASE, .name = "etcd-lease"};

static bool el_keepalive(const struct lock_env *env)
{
    const struct el_options *o = env->options;
    return o && o->keepalive;
}

static int el_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    return etcd_block_open(out, env, &el, el_keepalive(env), err);
}

static int el_group_open(struct lock_client **out, const struct lock_env *env,
                         struct evloop *loop, lock_opened_fn opened, void *arg,
                         struct lab_err *err)
{
    return etcd_group_open(out, env, loop, &el, el_keepalive(env), opened, arg, err);
}

static const struct lock_async_ops el_async = {
    .open = el_group_open,
    .acquire = etcd_group_acquire,
    .release = etcd_group_release,
    .close = etcd_group_close,
    .crash = etcd_group_crash,
    .client_faults = true, /* its timers and transfers its own (etcd_drive_group.c) */
};

const struct lock_ops lock_etcd_lease = {
    .name = "etcd-lease",
    .backend = "etcd",
    .summary = "etcd txn: create the key if its create revision is 0, with a lease of ttl; "
               "delete only our value; keep-alive optional; a lease can run out under its holder",
    .caps = LOCK_CAP_TTL | LOCK_CAP_FENCING | LOCK_CAP_NOTIFIES,
    .open = el_open,
    .acquire = etcd_block_acquire,
    .release = etcd_block_release,
    .close = etcd_block_close,
    .options = el_rows,
    .options_size = sizeof(struct el_options),
    .async = &el_async,
};
