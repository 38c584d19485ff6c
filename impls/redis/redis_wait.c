/*
 * redis_wait.c - redis-lua plus WAIT: the grant counts only once enough
 * replicas have acknowledged it.
 *
 * SET NX PX on the master, then `WAIT numreplicas timeout` on the same
 * connection (WAIT counts the writes of its own connection only). When
 * fewer replicas than asked have the lock within the timeout, the client
 * deletes its key again (compare-and-delete) and tries later, as if the
 * lock had been taken. This is what people reach for after a failover lost
 * a lock; Redis's own documentation warns that WAIT does not make Redis
 * strongly consistent (a failover may still promote a replica that had not
 * acknowledged), and the lab measures both the cost (acquire latency) and
 * what it buys under the failover fault. Release is redis-lua's.
 *
 * The protocol is redis_machine.c's (REDIS_SM_WAIT), in either mode.
 */
#include <stdio.h>

#include "redis_drive.h"

/* redis-wait's own settings (lock.wait_replicas, lock.wait_timeout). */
struct rwait_options {
    int64_t replicas;   /* replicas that must acknowledge a grant */
    int64_t timeout_ns; /* how long WAIT may block */
};

static const struct opt rwait_option_rows[] = {
    { .name = "wait_replicas", .type = OPT_INT, OPT_FIELD(struct rwait_options, replicas),
      .min = 1, .max = 8, .def = "1",
      .help = "redis-wait: replicas that must acknowledge a grant (WAIT numreplicas)" },
    { .name = "wait_timeout", .type = OPT_DUR, OPT_FIELD(struct rwait_options, timeout_ns),
      .min = 1000000, .def = "100ms",
      .help = "redis-wait: how long WAIT may block before the grant is given back" },
    { .name = NULL }
};

static void rwait_setup(struct redis_sm *m)
{
    const struct rwait_options *o = m->env->options;
    m->wait_replicas = o->replicas;
    snprintf(m->wait_n, sizeof m->wait_n, "%lld", (long long)o->replicas);
    snprintf(m->wait_ms, sizeof m->wait_ms, "%lld", (long long)(o->timeout_ns / 1000000));
}

static const struct redis_sm_design rwait = {.kind = REDIS_SM_WAIT, .name = "redis-wait",
                                             .setup = rwait_setup};

REDIS_SM_HOOKS(rwait, rwait);

const struct lock_ops lock_redis_wait = {
    .name = "redis-wait",
    .backend = "redis",
    .summary = "redis-lua plus WAIT for replicas before a grant counts: costs a replica round trip",
    .caps = LOCK_CAP_TTL,
    .no_fencing = "not built: it would be redis-lua's token, WAITed for",
    .open = rwait_open,
    .acquire = redis_block_acquire,
    .release = redis_block_release,
    .close = redis_block_close,
    .async = &rwait_async,
    .options = rwait_option_rows,
    .options_size = sizeof(struct rwait_options),
};
