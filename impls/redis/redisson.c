/*
 * redisson.c - the Redisson RLock protocol: a hash of hold counts, pub/sub
 * wakeups, and a watchdog when no lease is given.
 *
 * The lock is a Redis hash at the key whose single field is the owner id
 * "<client-uuid>:<thread-id>" and whose value is the hold count, so the
 * same owner may take it again (reentrancy lives in Redis, not in the
 * client). Acquire, release and renew are each one Lua script: acquire
 * increments the owner's count and sets the lease, or returns the key's
 * remaining PTTL when someone else holds it; release decrements and, at
 * zero, deletes the key and PUBLISHes on the lock's channel; renew extends
 * the lease if the owner's field is still there.
 *
 * What sets the design apart is how it waits: a loser SUBSCRIBEs to the
 * lock's channel on a second connection, tries once more (the release may
 * have come before the subscription took effect), and then sleeps until an
 * unlock message arrives or the returned TTL runs out, whichever is first,
 * and tries again; after the grant it UNSUBSCRIBEs. Every waiter gets every
 * message, so a release wakes the whole herd (notifications per release
 * approaches the number of waiters), but the handoff costs a few round
 * trips instead of a polling interval. Nor is it fair, as RLock is not: a
 * holder that asks again at once after its release usually beats the
 * waiters its message woke, so in a loop with no pause between holds a
 * waiter can be passed over for its whole wait (woken hundreds of times)
 * and time out with the lock free between holds: `blocked`, by design.
 * Where a woken handoff's time goes is measured on the way (handoff_split.h):
 * the unlock message carries the release's send time instead of Redisson's
 * "0", the pub/sub socket is stamped by the kernel on arrival, and the woken
 * attempt's send and answer are noted.
 *
 * The pub/sub connection can break like any other (a server that closed
 * it, CLIENT KILL, a timeout). As Redisson resubscribes its listeners
 * after a reconnect, a broken pub/sub connection is dropped and a new one
 * opened at its next use: a SUBSCRIBE that fails on the old connection is
 * sent once more on a new one, and a waiter whose connection broke under
 * it subscribes again on a new one and then tries the lock again before it
 * sleeps, because the unlock message it waited for may have been published
 * while nothing listened. A connection cut again as soon as it was opened
 * is opened again, as long as the wait lasts (Redisson reconnects until it
 * can resubscribe). Only an error reply, or a connection that cannot be
 * made at all, makes the acquire an error; an UNSUBSCRIBE that fails simply
 * drops the connection, whose subscriptions the server drops with it.
 *
 * With a lease, as Redisson's lock(leaseTime), the lock simply expires
 * after it: the scenario's lock.ttl, when it gives one, is that lease.
 * Without one (no lock.ttl, or lock.watchdog_lease given to ask for the
 * watchdog: rsn_finish_options resolves this into the design's own
 * settings, struct rsn_options, when the scenario is loaded), the lease is
 * lock.watchdog_lease (30 s, Redisson's lockWatchdogTimeout) and a
 * watchdog thread renews it every lease/3 while the lock is held, retrying
 * a failed renewal and giving the hold up as Redisson does (watchdog.c).
 * How it breaks: a lease shorter than the business time gives two holders,
 * a paused process loses it to its own lease, and, above all, Redis
 * replicates asynchronously: a master that granted the lock and failed
 * before the write reached a replica leaves a promoted replica with no
 * lock, which it grants to the next client.
 *
 * With fencing (lock_env.fencing), acquire runs a variant of its script
 * that also INCRs "<key>:fence" on a first hold and returns the counter as
 * the grant's token, as Redisson's RFencedLock hands out a token; a nested
 * hold keeps the outer one's.
 */
#include "redisson.h"

#include "redis_common.h"
#include "redis_conn.h"
#include "handoff_split.h"

#include <errno.h>
#include <sys/poll.h> /* not <poll.h>: impls/poll.h shadows it on the include path */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RSN_TIMEOUT_MS 10000              /* connect/command timeout, as redis_common's */
#define RSN_STOP_CHECK_NS (50LL * 1000000) /* longest sleep between looks at env->stop */
#define RSN_THREAD_ID "1"                 /* a client process is one thread */

/* ---------------------------------------------------------------- scripts */

/* KEYS[1] lock; ARGV[1] lease ms, ARGV[2] owner. nil when granted (first
 * or nested hold), else the PTTL of the holder's lock. */
const char rsn_acquire_lua[] =
    "if redis.call('exists', KEYS[1]) == 0 then\n"
    "  redis.call('hincrby', KEYS[1], ARGV[2], 1)\n"
    "  redis.call('pexpire', KEYS[1], ARGV[1])\n"
    "  return nil\n"
    "end\n"
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then\n"
    "  redis.call('hincrby', KEYS[1], ARGV[2], 1)\n"
    "  redis.call('pexpire', KEYS[1], ARGV[1])\n"
    "  return nil\n"
    "end\n"
    "return redis.call('pttl', KEYS[1])\n";

/* With fencing (as Redisson's RFencedLock, though not its script): the
 * same, plus KEYS[2] the lock's fence counter. {1, token} when granted:
 * a first hold INCRs the counter, a nested hold keeps the token of the
 * outer one (the counter's value, which only a grant moves and nobody can
 * move while we hold the lock); {0, PTTL} when someone else holds it. */
const char rsn_fenced_acquire_lua[] =
    "if redis.call('exists', KEYS[1]) == 0 then\n"
    "  redis.call('hincrby', KEYS[1], ARGV[2], 1)\n"
    "  redis.call('pexpire', KEYS[1], ARGV[1])\n"
    "  return {1, redis.call('incr', KEYS[2])}\n"
    "end\n"
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then\n"
    "  redis.call('hincrby', KEYS[1], ARGV[2], 1)\n"
    "  redis.call('pexpire', KEYS[1], ARGV[1])\n"
    "  return {1, tonumber(redis.call('get', KEYS[2]) or '0')}\n"
    "end\n"
    "return {0, redis.call('pttl', KEYS[1])}\n";

/* KEYS[1] lock, KEYS[2] channel; ARGV[1] unlock message, ARGV[2] lease ms,
 * ARGV[3] owner. nil: not ours; 0: still held (nested); 1: released. */
const char rsn_release_lua[] =
    "if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then\n"
    "  return nil\n"
    "end\n"
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)\n"
    "if counter > 0 then\n"
    "  redis.call('pexpire', KEYS[1], ARGV[2])\n"
    "  return 0\n"
    "end\n"
    "redis.call('del', KEYS[1])\n"
    "redis.call('publish', KEYS[2], ARGV[1])\n"
    "return 1\n";

/* KEYS[1] lock; ARGV[1] lease ms, ARGV[2] owner. 1 extended, 0 not ours. */
static const char rsn_renew_lua[] =
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then\n"
    "  redis.call('pexpire', KEYS[1], ARGV[1])\n"
    "  return 1\n"
    "end\n"
    "return 0\n";

/* ---------------------------------------------------------------- state */

/* The design's state, in lock_client.ext. */
struct redisson {
    redisContext *ps;      /* pub/sub connection; NULL or failed: a new one at the next use */
    char owner[80];        /* hash field: "<client token>:<thread id>" */
    char lease[24];        /* lease in ms, as sent to the scripts */
    int64_t lease_ns;      /* the same lease in ns (the grant's lease floor) */
    bool watchdog;         /* no leaseTime (rsn_options.lease_ns 0): the watchdog renews */
    int pending_sub;       /* SUBSCRIBEs sent whose confirmation is not read yet */
    char channel[300];     /* channel of the key being waited for */
    /* the handoff's split (handoff_split.h): when the latest bytes reached
     * the pub/sub socket, the latest unlock message's release time and
     * arrival, the latest attempt's send time, and whether a message woke
     * the attempt being made */
    int64_t read_arrival_ns, msg_exit_ns, msg_arrive_ns, try_sent_ns;
    bool woken;
};

static struct redisson *rsn(struct lock_client *c)
{
    return c->ext;
}

int rsn_channel(char *out, size_t len, const char *key, struct lab_err *err)
{
    int n = snprintf(out, len, "redisson_lock__channel:{%s}", key);
    if (n < 0 || (size_t)n >= len) {
        lab_err_set(err, ENAMETOOLONG, "redisson: lock key too long for a channel name");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- pub/sub */

/* Forget the pub/sub connection and the confirmations owed on it; the
 * server drops its subscriptions with it. */
static void ps_drop(struct lock_client *c)
{
    struct redisson *st = rsn(c);
    if (st->ps)
        redisFree(st->ps);
    st->ps = NULL;
    st->pending_sub = 0;
}

/* Make the pub/sub connection usable: keep the current one while it has
 * not failed, else open a new one (subscribed to nothing). 0 kept, 1 new,
 * -1 with err filled when no connection could be made. */
static int ps_ready(struct lock_client *c, struct lab_err *err)
{
    struct redisson *st = rsn(c);
    if (st->ps && !st->ps->err)
        return 0;
    ps_drop(c);
    st->ps = redis_store_open("Redis (pub/sub)", c->env, RSN_TIMEOUT_MS, err);
    if (st->ps)
        handoff_split_arm(st->ps->fd);
    return st->ps ? 1 : -1;
}

/* Send one command on the pub/sub connection without reading its
 * confirmation (it arrives in order with the messages). 0 or -1. */
static int ps_send(struct lock_client *c, const char *cmd, const char *channel,
                   struct lab_err *err)
{
    redisContext *ps = rsn(c)->ps;
    const char *argv[] = {cmd, channel};
    int done = 0;
    c->env->stats->round_trips++;
    if (redisAppendCommandArgv(ps, 2, argv, NULL) != REDIS_OK)
        goto fail;
    while (!done)
        if (redisBufferWrite(ps, &done) != REDIS_OK)
            goto fail;
    return 0;
fail:
    lab_err_set(err, ps->err ? ps->err : EIO, "redis pub/sub: %s", ps->errstr);
    return -1;
}

/* Read one reply from the pub/sub connection by deadline (CLOCK_MONOTONIC
 * ns): what the reader holds already first, then poll() the socket in
 * slices of at most RSN_STOP_CHECK_NS so that a stopping run is noticed.
 * (hiredis' own SO_RCVTIMEO would leave the context dead on a timeout.)
 * 1 with *out set, 0 when the deadline passed or the run is stopping,
 * -1 with err filled. */
static int ps_read(struct lock_client *c, int64_t deadline, redisReply **out,
                   struct lab_err *err)
{
    redisContext *ps = rsn(c)->ps;
    for (;;) {
        void *reply = NULL;
        if (redisGetReplyFromReader(ps, &reply) != REDIS_OK)
            break;
        if (reply) {
            *out = reply;
            return 1;
        }
        int64_t left = deadline - lab_now_ns();
        if (left <= 0 || *c->env->stop)
            return 0;
        if (left > RSN_STOP_CHECK_NS)
            left = RSN_STOP_CHECK_NS;
        struct pollfd pfd = {.fd = ps->fd, .events = POLLIN};
        struct timespec ts = {left / 1000000000, left % 1000000000};
        int n = ppoll(&pfd, 1, &ts, NULL);
        if (n < 0 && errno != EINTR) {
            lab_err_set(err, errno, "redis pub/sub: poll: %s", strerror(errno));
            return -1;
        }
        if (n > 0)
            rsn(c)->read_arrival_ns = handoff_split_arrival(ps->fd);
        if (n > 0 && redisBufferRead(ps) != REDIS_OK)
            break;
    }
    lab_err_set(err, ps->err ? ps->err : EIO, "redis pub/sub: %s", ps->errstr);
    return -1;
}

enum ps_kind { PS_OTHER = 0, PS_SUBSCRIBED, PS_MESSAGE };

/* Account for one pub/sub reply and free it: a "subscribe" confirmation
 * settles a pending SUBSCRIBE, a "message" is a notification (PS_MESSAGE
 * only when it is on the channel being waited for), an "unsubscribe"
 * confirmation is nothing. -1 with err filled for an error reply. */
static int ps_note(struct lock_client *c, redisReply *r, struct lab_err *err)
{
    struct redisson *st = rsn(c);
    int kind = PS_OTHER;
    if (r->type == REDIS_REPLY_ERROR) {
        lab_err_set(err, EPROTO, "redis pub/sub: %s", r->str);
        kind = -1;
    } else if (r->type == REDIS_REPLY_ARRAY && r->elements >= 3 &&
               r->element[0]->type == REDIS_REPLY_STRING) {
        const char *what = r->element[0]->str;
        if (strcmp(what, "subscribe") == 0) {
            if (st->pending_sub > 0)
                st->pending_sub--;
            kind = st->pending_sub == 0 ? PS_SUBSCRIBED : PS_OTHER;
        } else if (strcmp(what, "message") == 0) {
            c->env->stats->notifications++;
            const redisReply *ch = r->element[1];
            if (ch->type == REDIS_REPLY_STRING && strcmp(ch->str, st->channel) == 0) {
                kind = PS_MESSAGE;
                st->msg_arrive_ns = st->read_arrival_ns;
                st->msg_exit_ns = r->element[2]->type == REDIS_REPLY_STRING
                                      ? strtoll(r->element[2]->str, NULL, 10)
                                      : 0;
            }
        }
    } else {
        lab_err_set(err, EPROTO, "redis pub/sub: unexpected reply type %d", r->type);
        kind = -1;
    }
    freeReplyObject(r);
    return kind;
}

/* Read pub/sub replies until one of kind `want` or the deadline.
 * 1 found, 0 deadline or stop, -1 error. */
static int ps_wait_for(struct lock_client *c, int want, int64_t deadline, struct lab_err *err)
{
    for (;;) {
        redisReply *r = NULL;
        int got = ps_read(c, deadline, &r, err);
        if (got <= 0)
            return got;
        int kind = ps_note(c, r, err);
        if (kind < 0)
            return -1;
        if (kind == want)
            return 1;
    }
}

/* SUBSCRIBE to the channel of key and wait for the confirmation (every
 * earlier SUBSCRIBE's too, so that the subscription is surely in effect).
 * Messages and confirmations left over from earlier waits are read on the
 * way. A connection that turns out broken (closed or reset: cut) is
 * replaced and the SUBSCRIBE sent again, until the deadline. 1 subscribed,
 * 0 deadline or stop (the confirmation is read later, or the connection
 * is gone), -1 error (the connection is dropped). */
static int ps_subscribe(struct lock_client *c, const char *key, int64_t deadline,
                        struct lab_err *err)
{
    struct redisson *st = rsn(c);
    if (rsn_channel(st->channel, sizeof st->channel, key, err) != 0)
        return -1;
    for (;;) {
        int fresh = ps_ready(c, err);
        if (fresh < 0)
            return -1;
        int got = -1;
        if (ps_send(c, "SUBSCRIBE", st->channel, err) == 0) {
            st->pending_sub++;
            got = ps_wait_for(c, PS_SUBSCRIBED, deadline, err);
        }
        if (got >= 0)
            return got;
        bool broken = st->ps->err != 0;
        ps_drop(c);
        if (!broken)
            return -1;
        if (lab_now_ns() >= deadline || *c->env->stop)
            return 0;
    }
}

/* ---------------------------------------------------------------- lock */

/* One acquire script call: 1 granted, 0 held by another (*ttl_ms = its
 * PTTL, -1 when it has none), -1 error. */
static int rsn_try(struct lock_client *c, const char *key, long long *ttl_ms,
                   struct lab_err *err)
{
    struct redisson *st = rsn(c);
    char fence[300];
    bool fenced = c->env->fencing;
    if (fenced && redis_fence_key(fence, sizeof fence, key, err) != 0)
        return -1;
    const char *argv[] = {key, st->lease, st->owner};
    const char *fenced_argv[] = {key, fence, st->lease, st->owner};
    if (redis_conn_ready(c, err) != 0)
        return -1;
    int64_t sent = lab_now_ns();
    st->try_sent_ns = sent;
    redisReply *r = fenced ? redis_client_script(c, &c->acquire, 2, 4,
                                               fenced_argv, err)
                           : redis_client_script(c, &c->acquire, 1, 3, argv, err);
    if (!r)
        return -1;
    /* the fenced script answers {granted, token or PTTL}: read it as the
     * plain one's nil (granted) or PTTL */
    const redisReply *v = r;
    bool granted = r->type == REDIS_REPLY_NIL;
    if (fenced && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[0]->type == REDIS_REPLY_INTEGER && r->element[1]->type == REDIS_REPLY_INTEGER) {
        v = r->element[1];
        granted = r->element[0]->integer == 1;
        if (granted)
            c->env->stats->fence_token = v->integer;
    }
    int res = -1;
    if (granted) {
        res = 1;
        c->env->stats->lease_floor_ns = sent + st->lease_ns; /* PEXPIRE ran after sent */
    } else if (v->type == REDIS_REPLY_INTEGER) {
        *ttl_ms = v->integer;
        res = 0;
    } else {
        lab_err_set(err, EPROTO, "redisson: acquire script returned reply type %d", r->type);
    }
    freeReplyObject(r);
    return res;
}

/* The lock is ours (once more): count the hold, arm the watchdog on the
 * outermost one. */
static void rsn_granted(struct lock_client *c, const char *key)
{
    if (c->holds++ == 0) {
        snprintf(c->held_key, sizeof c->held_key, "%s", key);
        if (rsn(c)->watchdog)
            watchdog_arm(c->wd, key);
    }
}

static enum lock_status rsn_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err)
{
    struct redisson *st = rsn(c);
    if (c->holds > 0 && strcmp(key, c->held_key) != 0) {
        lab_err_set(err, EINVAL, "redisson: this client holds '%s'; one key at a time",
                    c->held_key);
        return LOCK_ERROR;
    }
    int64_t deadline = lab_now_ns() + wait_ns;
    long long ttl = -1;
    int got = rsn_try(c, key, &ttl, err);
    if (got != 0) {
        if (got > 0)
            rsn_granted(c, key);
        return got > 0 ? LOCK_GRANTED : LOCK_ERROR;
    }
    if (lab_now_ns() >= deadline || *c->env->stop)
        return LOCK_TIMEOUT;

    /* Contended: subscribe first, then try again and sleep between tries;
     * a subscription lost with its connection is made again on a new one,
     * and the lock tried again at once (its unlock message may be lost). */
    enum lock_status res = LOCK_TIMEOUT;
    bool subscribed = false;
    for (;;) {
        if (!subscribed) {
            int sub = ps_subscribe(c, key, deadline, err);
            if (sub < 0)
                return LOCK_ERROR; /* dropped with the connection: nothing to unsubscribe */
            if (sub == 0)
                break;
            subscribed = true;
        }
        got = rsn_try(c, key, &ttl, err);
        if (st->woken && got >= 0)
            handoff_split_note(c->env->stats, got > 0, st->msg_exit_ns, st->msg_arrive_ns,
                               st->try_sent_ns, lab_now_ns());
        st->woken = false;
        if (got != 0) {
            res = got > 0 ? LOCK_GRANTED : LOCK_ERROR;
            break;
        }
        int64_t now = lab_now_ns();
        if (now >= deadline || *c->env->stop)
            break;
        int64_t until = deadline; /* the holder's lease ends first, or the budget */
        if (ttl >= 0 && ttl < (deadline - now) / 1000000)
            until = now + (ttl > 0 ? ttl : 1) * 1000000;
        int woke = ps_wait_for(c, PS_MESSAGE, until, err);
        if (woke < 0) {
            bool broken = st->ps->err != 0;
            ps_drop(c);
            if (!broken)
                return LOCK_ERROR; /* an error reply, not a lost connection */
            subscribed = false;
            continue;
        }
        if (*c->env->stop)
            break;
        st->woken = woke > 0;
    }
    if (res == LOCK_GRANTED)
        rsn_granted(c, key);
    /* As Redisson, stop listening; the confirmation is read with the next
     * wait's replies, so it costs the caller no round trip now. A
     * connection that cannot take the UNSUBSCRIBE is dropped, and its
     * subscription with it. */
    struct lab_err uerr = {0};
    if (st->ps && ps_send(c, "UNSUBSCRIBE", st->channel, &uerr) != 0)
        ps_drop(c);
    return res;
}

static enum release_status rsn_release(struct lock_client *c, const char *key,
                                       struct lab_err *err)
{
    struct redisson *st = rsn(c);
    bool ours = c->holds > 0 && strcmp(key, c->held_key) == 0;
    if (ours && c->holds == 1 && st->watchdog)
        watchdog_disarm(c->wd); /* before the last release: never renew a lock we gave up */
    char channel[sizeof st->channel];
    if (rsn_channel(channel, sizeof channel, key, err) != 0)
        return RELEASE_ERROR;
    /* the unlock message carries the time the release was sent (Redisson's
     * is "0"; the waiters read only the channel): the handoff's split */
    char message[24];
    snprintf(message, sizeof message, "%lld", (long long)lab_now_ns());
    const char *argv[] = {key, channel, message, st->lease, st->owner};
    redisReply *r = redis_conn_ready(c, err) == 0
                        ? redis_client_script(c, &c->release, 2, 5, argv, err)
                        : NULL;
    if (ours)
        c->holds--;
    enum release_status res = RELEASE_ERROR;
    if (!r)
        ;
    else if (r->type == REDIS_REPLY_NIL)
        res = RELEASE_NOT_OWNER;
    else if (r->type == REDIS_REPLY_INTEGER)
        res = RELEASE_OK;
    else
        lab_err_set(err, EPROTO, "redisson: release script returned reply type %d", r->type);
    /* Gone from Redis (released at last, or expired): no hold is left. */
    if (ours && r && (r->type == REDIS_REPLY_NIL ||
                      (r->type == REDIS_REPLY_INTEGER && r->integer == 1)))
        c->holds = 0;
    if (ours && c->holds == 0 && st->watchdog)
        watchdog_disarm(c->wd);
    if (r)
        freeReplyObject(r);
    return res;
}

/* ---------------------------------------------------------------- watchdog */

/* The watchdog's renewal on its own connection (the thread's only user of
 * c->wd_rc and c->renew): 1 extended, 0 no longer ours, -1 error. */
static int rsn_renew(void *arg, const char *key)
{
    struct lock_client *c = arg;
    struct redisson *st = rsn(c);
    struct lab_err err = {0};
    const char *argv[] = {key, st->lease, st->owner};
    if (redis_watchdog_conn_ready(c, &err) != 0)
        return -1;
    redisReply *r = redis_script_argv(c->wd_rc, NULL, &c->renew, 1, 3, argv, &err);
    if (!r)
        return -1;
    int v = r->type == REDIS_REPLY_INTEGER ? r->integer == 1 : -1;
    freeReplyObject(r);
    return v;
}

/* ---------------------------------------------------------------- settings */

static const struct opt rsn_option_rows[] = {
    { .name = "watchdog_lease", .type = OPT_DUR,
      OPT_FIELD(struct rsn_options, watchdog_lease_ns), .min = 1, .def = "30s",
      .help = "lease the redisson watchdog renews; when given, redisson runs the watchdog" },
    { .name = "leaseTime", .type = OPT_DUR, OPT_FIELD(struct rsn_options, lease_ns),
      .flags = OPT_DERIVED,
      .help = "lock.ttl when the file gives it and not lock.watchdog_lease, else 0 (watchdog)" },
    { .name = NULL }
};

/* A ttl the file gives is a lease, as Redisson's lock(leaseTime) takes it
 * (no watchdog), unless the file also gives the watchdog's lease, which asks
 * for the watchdog; without either, lock() with the watchdog and its
 * default lease (docs/scenarios.md, redisson's lease). */
static int rsn_finish_options(void *options, const struct lock_opts_ctx *ctx,
                              struct lab_err *err)
{
    struct rsn_options *o = options;
    bool leased = ctx->ttl_given && !ctx->given(ctx, &o->watchdog_lease_ns);
    o->lease_ns = leased ? ctx->ttl_ns : 0;
    if (ctx->listed && ctx->clients_per_process > 1 && !leased) {
        lab_err_set(err, EINVAL, "redisson's watchdog cannot run in client groups: give "
                    "lock.ttl (its lease) or use run.clients_per_process 1");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- open/close */

static void rsn_close(struct lock_client *c)
{
    if (!c)
        return;
    watchdog_stop(c->wd); /* first: its renewals read c->ext */
    c->wd = NULL;
    if (c->ext) {
        ps_drop(c);
        free(c->ext);
        c->ext = NULL;
    }
    redis_lock_close(c);
}

static int rsn_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    const struct rsn_options *opt = env->options;
    if (redis_lock_open(out, env, NULL, err) != 0)
        return -1;
    struct lock_client *c = *out;
    struct redisson *st = calloc(1, sizeof *st);
    if (!st) {
        lab_err_set(err, ENOMEM, "out of memory");
        goto fail;
    }
    c->ext = st;
    snprintf(st->owner, sizeof st->owner, "%s:%s", c->token, RSN_THREAD_ID);
    st->watchdog = opt->lease_ns <= 0;
    int64_t lease_ns = st->watchdog ? opt->watchdog_lease_ns : opt->lease_ns;
    long long lease_ms = lease_ns / 1000000;
    if (lease_ms < 1)
        lease_ms = 1;
    snprintf(st->lease, sizeof st->lease, "%lld", lease_ms);
    st->lease_ns = lease_ms * 1000000;

    c->acquire.src = env->fencing ? rsn_fenced_acquire_lua : rsn_acquire_lua;
    c->release.src = rsn_release_lua;
    if (redis_script_load(c->rc, &c->acquire, err) != 0 ||
        redis_script_load(c->rc, &c->release, err) != 0)
        goto fail;
    if (ps_ready(c, err) < 0)
        goto fail;
    if (st->watchdog) {
        c->renew.src = rsn_renew_lua;
        c->wd_rc = redis_store_open("Redis (watchdog)", env, RSN_TIMEOUT_MS, err);
        if (!c->wd_rc || redis_script_load(c->wd_rc, &c->renew, err) != 0)
            goto fail;
        c->wd = watchdog_start(lease_ms * 1000000, rsn_renew, c, env->stats, err);
        if (!c->wd)
            goto fail;
    }
    return 0;
fail:
    rsn_close(c);
    *out = NULL;
    return -1;
}

const struct lock_ops lock_redisson = {
    .name = "redisson",
    .backend = "redis",
    .summary = "Redisson RLock: hash of hold counts, pub/sub wakeups, watchdog without a lease; "
               "lost on async failover",
    .caps = LOCK_CAP_TTL | LOCK_CAP_RENEWS | LOCK_CAP_REENTRANT | LOCK_CAP_NOTIFIES |
            LOCK_CAP_FENCING,
    .open = rsn_open,
    .acquire = rsn_acquire,
    .release = rsn_release,
    .close = rsn_close,
    .options = rsn_option_rows,
    .options_size = sizeof(struct rsn_options),
    .finish_options = rsn_finish_options,
    .async = &redisson_async,
};
