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
 */
#include "redis_common.h"

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

static int rwait_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    int granted = redis_set_nx_px(c, key, c->token, err);
    if (granted != 1)
        return granted;
    const struct rwait_options *o = c->env->options;
    unsigned conn = c->reconnects;
    redisReply *r = redis_cmd(c, err, "WAIT %lld %lld", (long long)o->replicas,
                              (long long)(o->timeout_ns / 1000000));
    long long acked = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r)
        freeReplyObject(r);
    /* WAIT counts the writes of its own connection: one sent again on a
     * new connection (the master died under it) says nothing of our SET */
    if (c->reconnects != conn)
        acked = 0;
    if (acked >= o->replicas)
        return 1;
    /* not replicated enough: give the grant back and try again later */
    if (acked >= 0)
        c->env->stats->unreplicated++;
    struct lab_err ignored = {0};
    redis_release_script(c, key, &ignored);
    return acked < 0 ? -1 : 0;
}

/* redis-lua's open with this attempt: the compare-and-delete release
 * loaded (no fencing: see no_fencing). */
static int rwait_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    if (redis_lock_open(out, env, rwait_try, err) != 0)
        return -1;
    (*out)->release.src = redis_compare_and_delete_lua;
    if (redis_script_load((*out)->rc, &(*out)->release, err) != 0) {
        redis_lock_close(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

const struct lock_ops lock_redis_wait = {
    .name = "redis-wait",
    .backend = "redis",
    .summary = "redis-lua plus WAIT for replicas before a grant counts: costs a replica round trip",
    .caps = LOCK_CAP_TTL,
    .no_fencing = "not built: it would be redis-lua's token, WAITed for",
    .open = rwait_open,
    .acquire = redis_poll_acquire,
    .release = redis_release_script,
    .close = redis_lock_close,
    .options = rwait_option_rows,
    .options_size = sizeof(struct rwait_options),
};
