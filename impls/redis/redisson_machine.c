/*
 * redisson_machine.c - the Redisson RLock protocol without I/O (see
 * redisson_machine.h): its Lua scripts, an open that loads them, an
 * acquire that tries, subscribes, tries again and sleeps between tries
 * until a message, the holder's PTTL or the budget, a release that
 * decrements the hold count and publishes the unlock. One command is in
 * flight at a time; what a reply means is read in on_answer(), what a
 * failure means is the lane's (redis_lane.h, as for the simple designs).
 * The machine reads no clock: the time comes with every event.
 */
#include "redisson_machine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "handoff_split.h"

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
 * outer one; {0, PTTL} when someone else holds it. */
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
const char rsn_renew_lua[] =
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then\n"
    "  redis.call('pexpire', KEYS[1], ARGV[1])\n"
    "  return 1\n"
    "end\n"
    "return 0\n";

int rsn_channel(char *out, size_t len, const char *key, struct lab_err *err)
{
    int n = snprintf(out, len, "redisson_lock__channel:{%s}", key);
    if (n < 0 || (size_t)n >= len) {
        lab_err_set(err, ENAMETOOLONG, "redisson: lock key too long for a channel name");
        return -1;
    }
    return 0;
}

void rsn_sm_init(struct rsn_sm *m, const struct lock_env *env, const char *owner)
{
    const struct rsn_options *opt = env->options;
    memset(m, 0, sizeof *m);
    m->env = env;
    snprintf(m->owner, sizeof m->owner, "%s", owner);
    m->watchdog = opt->lease_ns <= 0;
    long long ms = (m->watchdog ? opt->watchdog_lease_ns : opt->lease_ns) / 1000000;
    if (ms < 1)
        ms = 1;
    snprintf(m->lease, sizeof m->lease, "%lld", ms);
    m->lease_ns = ms * 1000000;
    m->fencing = env->fencing;
    m->ttl = -1;
    redis_lane_init(&m->lane); /* no connection yet */
}

/* ---------------------------------------------------------------- sending */

static void build(struct rsn_sm *m)
{
    const char **v = m->argv;
    int n = 0;
    switch (m->step) {
    case RS_LOAD_ACQUIRE:
    case RS_LOAD_RELEASE:
        v[n++] = "SCRIPT", v[n++] = "LOAD";
        v[n++] = m->step == RS_LOAD_RELEASE ? rsn_release_lua
                 : m->fencing               ? rsn_fenced_acquire_lua
                                            : rsn_acquire_lua;
        break;
    case RS_TRY:
        v[n++] = "EVALSHA", v[n++] = m->acquire_sha, v[n++] = m->fencing ? "2" : "1";
        v[n++] = m->key;
        if (m->fencing)
            v[n++] = m->fence_key;
        v[n++] = m->lease, v[n++] = m->owner;
        break;
    case RS_RELEASE:
        v[n++] = "EVALSHA", v[n++] = m->release_sha, v[n++] = "2", v[n++] = m->key;
        v[n++] = m->channel, v[n++] = m->message, v[n++] = m->lease, v[n++] = m->owner;
        break;
    case RS_LOAD_RENEW:
        v[n++] = "SCRIPT", v[n++] = "LOAD", v[n++] = rsn_renew_lua;
        break;
    case RS_RENEW:
        v[n++] = "EVALSHA", v[n++] = m->renew_sha, v[n++] = "1", v[n++] = m->key;
        v[n++] = m->lease, v[n++] = m->owner;
        break;
    case RS_IDLE:
    case RS_SUBSCRIBING:
    case RS_WAITING:
        break;
    }
    m->argc = n;
}

/* Send m->step, on a new connection first when the last one broke. The
 * scripts' calls count as round trips, their loading does not. */
static enum rsn_act sm_send(struct rsn_sm *m)
{
    if (m->lane.broken)
        return RSN_RECONNECT;
    build(m);
    if (m->step == RS_TRY || m->step == RS_RELEASE)
        m->env->stats->round_trips++;
    return RSN_SEND;
}

static enum rsn_act send_step(struct rsn_sm *m, enum rsn_step step)
{
    m->step = step;
    redis_lane_cmd(&m->lane);
    return sm_send(m);
}

/* ---------------------------------------------------------------- outcomes */

static enum rsn_act done(struct rsn_sm *m)
{
    m->op = RS_OP_NONE;
    m->step = RS_IDLE;
    m->after_load = RS_IDLE;
    return RSN_DONE;
}

static enum rsn_act acquired(struct rsn_sm *m, enum lock_status st)
{
    if (st == LOCK_GRANTED && m->holds++ == 0) {
        snprintf(m->held_key, sizeof m->held_key, "%s", m->key);
        if (m->watchdog)
            m->watch = RS_WATCH_ARM;
    }
    m->woken = false;
    m->status = st;
    return done(m);
}

/* The release ended (rs): a hold of ours is given up, all of them when
 * the lock is gone from Redis (released at last, or expired). */
static enum rsn_act released(struct rsn_sm *m, enum release_status rs, bool gone)
{
    if (m->ours) {
        m->holds--;
        if (gone)
            m->holds = 0;
        if (m->holds == 0 && m->watchdog)
            m->watch = RS_WATCH_DISARM;
    }
    m->release = rs;
    return done(m);
}

static enum rsn_act failed(struct rsn_sm *m)
{
    switch (m->op) {
    case RS_OP_OPEN:
        m->open_rc = -1;
        return done(m);
    case RS_OP_ACQUIRE:
        return acquired(m, LOCK_ERROR);
    case RS_OP_RELEASE:
        return released(m, RELEASE_ERROR, false);
    case RS_OP_RENEW:
        m->renewed = -1;
        break;
    case RS_OP_NONE:
        break;
    }
    return done(m);
}

/* ---------------------------------------------------------------- acquire */

static enum rsn_act attempt(struct rsn_sm *m, int64_t now)
{
    m->sent = now;
    return send_step(m, RS_TRY);
}

/* The lock is someone else's: give up, subscribe, or sleep until a
 * message, the holder's PTTL or the budget, whichever comes first. */
static enum rsn_act taken(struct rsn_sm *m, int64_t now)
{
    if (now >= m->deadline || *m->env->stop)
        return acquired(m, LOCK_TIMEOUT);
    m->wake_at = m->deadline;
    if (!m->subscribed) {
        m->asked = true;
        m->step = RS_SUBSCRIBING;
        return RSN_SUBSCRIBE;
    }
    if (m->ttl >= 0 && m->ttl < (m->deadline - now) / 1000000)
        m->wake_at = now + (m->ttl > 0 ? m->ttl : 1) * 1000000;
    m->step = RS_WAITING;
    return RSN_WAIT;
}

/* The acquire script's answer: nil granted or the PTTL; fenced, {1, token}
 * or {0, PTTL}. */
static enum rsn_act on_try(struct rsn_sm *m, const struct redis_sm_reply *r, int64_t now)
{
    bool granted = r->type == RSM_NIL;
    bool pttl = r->type == RSM_INTEGER;
    long long v = r->integer;
    if (m->fencing) {
        granted = r->pair && r->first == 1;
        pttl = r->pair && r->first == 0;
        v = r->second;
    }
    if (!granted && !pttl) {
        lab_err_set(&m->err, EPROTO, "redisson: acquire script returned reply type %d",
                    (int)r->type);
        return acquired(m, LOCK_ERROR);
    }
    if (m->woken)
        handoff_split_note(m->env->stats, granted, m->msg_exit_ns, m->msg_arrive_ns, m->sent,
                           now);
    m->woken = false;
    if (granted) {
        if (m->fencing)
            m->env->stats->fence_token = v;
        m->env->stats->lease_floor_ns = m->sent + m->lease_ns; /* PEXPIRE ran after sent */
        return acquired(m, LOCK_GRANTED);
    }
    m->ttl = v;
    return taken(m, now);
}

/* ---------------------------------------------------------------- replies */

static enum rsn_act script_loaded(struct rsn_sm *m, const struct redis_sm_reply *r,
                                  int64_t now)
{
    if (r->type != RSM_STRING || r->len != 40) {
        lab_err_set(&m->err, EPROTO, "SCRIPT LOAD returned no SHA1");
        return failed(m);
    }
    char *sha = m->step == RS_LOAD_ACQUIRE   ? m->acquire_sha
                : m->step == RS_LOAD_RENEW ? m->renew_sha
                                           : m->release_sha;
    memcpy(sha, r->str, 40);
    sha[40] = '\0';
    if (m->after_load != RS_IDLE) { /* a reload after NOSCRIPT: the script again */
        enum rsn_step again = m->after_load;
        m->after_load = RS_IDLE;
        if (again == RS_TRY)
            return attempt(m, now);
        return send_step(m, again);
    }
    if (m->step == RS_LOAD_ACQUIRE)
        return send_step(m, RS_LOAD_RELEASE);
    if (m->step == RS_LOAD_RELEASE && m->watchdog)
        return send_step(m, RS_LOAD_RENEW);
    m->open_rc = 0;
    return done(m);
}

static enum rsn_act on_answer(struct rsn_sm *m, const struct redis_sm_reply *r, int64_t now)
{
    switch (m->step) {
    case RS_LOAD_ACQUIRE:
    case RS_LOAD_RELEASE:
    case RS_LOAD_RENEW:
        return script_loaded(m, r, now);
    case RS_RENEW:
        m->renewed = r->type == RSM_INTEGER ? r->integer == 1 : -1;
        return done(m);
    case RS_TRY:
        return on_try(m, r, now);
    case RS_RELEASE:
        if (r->type == RSM_NIL)
            return released(m, RELEASE_NOT_OWNER, true);
        if (r->type == RSM_INTEGER)
            return released(m, RELEASE_OK, r->integer == 1);
        lab_err_set(&m->err, EPROTO, "redisson: release script returned reply type %d",
                    (int)r->type);
        return released(m, RELEASE_ERROR, false);
    case RS_IDLE:
    case RS_SUBSCRIBING:
    case RS_WAITING:
        break;
    }
    lab_err_set(&m->err, EPROTO, "redis: a reply with no command in flight");
    return failed(m);
}

/* What the lane says next. */
static enum rsn_act next(struct rsn_sm *m, enum redis_lane_next n)
{
    if (n == REDIS_LANE_RESEND)
        return sm_send(m);
    if (n == REDIS_LANE_FAIL)
        return failed(m);
    m->after_load = m->step;
    return send_step(m, m->step == RS_TRY     ? RS_LOAD_ACQUIRE
                        : m->step == RS_RENEW ? RS_LOAD_RENEW
                                              : RS_LOAD_RELEASE);
}

/* ---------------------------------------------------------------- events */

enum rsn_act rsn_sm_open(struct rsn_sm *m, int64_t now)
{
    (void)now;
    m->op = RS_OP_OPEN;
    m->after_load = RS_IDLE;
    return send_step(m, RS_LOAD_ACQUIRE);
}

enum rsn_act rsn_sm_acquire(struct rsn_sm *m, const char *key, int64_t wait_ns, int64_t now)
{
    m->op = RS_OP_ACQUIRE;
    m->key = key;
    redis_lane_op(&m->lane);
    m->after_load = RS_IDLE;
    m->deadline = now + wait_ns;
    m->ttl = -1;
    m->subscribed = m->asked = m->woken = false;
    if (m->holds > 0 && strcmp(key, m->held_key) != 0) {
        lab_err_set(&m->err, EINVAL, "redisson: this client holds '%s'; one key at a time",
                    m->held_key);
        return acquired(m, LOCK_ERROR);
    }
    if (rsn_channel(m->channel, sizeof m->channel, key, &m->err) != 0 ||
        (m->fencing && redis_fence_key(m->fence_key, sizeof m->fence_key, key, &m->err) != 0))
        return acquired(m, LOCK_ERROR);
    return attempt(m, now);
}

enum rsn_act rsn_sm_release(struct rsn_sm *m, const char *key, int64_t now)
{
    m->op = RS_OP_RELEASE;
    m->key = key;
    redis_lane_op(&m->lane);
    m->after_load = RS_IDLE;
    m->ours = m->holds > 0 && strcmp(key, m->held_key) == 0;
    if (m->ours && m->holds == 1 && m->watchdog)
        m->watch = RS_WATCH_DISARM; /* before the last release: never renew a lock given up */
    if (rsn_channel(m->channel, sizeof m->channel, key, &m->err) != 0)
        return released(m, RELEASE_ERROR, false);
    /* the unlock message carries the release's send time (Redisson's is
     * "0"; the waiters read only the channel): the handoff's split */
    snprintf(m->message, sizeof m->message, "%lld", (long long)now);
    return send_step(m, RS_RELEASE);
}

enum rsn_act rsn_sm_reply(struct rsn_sm *m, const struct redis_sm_reply *r, int64_t now)
{
    if (m->op == RS_OP_NONE || m->step == RS_SUBSCRIBING || m->step == RS_WAITING)
        return RSN_DONE; /* no command of ours in flight: nothing it could answer */
    if (r->type == RSM_ERROR) {
        bool script = m->step == RS_TRY || m->step == RS_RELEASE || m->step == RS_RENEW;
        return next(m, redis_lane_error(&m->lane, r->str ? r->str : "error", script, &m->err));
    }
    return on_answer(m, r, now);
}

enum rsn_act rsn_sm_lost(struct rsn_sm *m, const char *why, int64_t now)
{
    (void)now;
    return next(m, redis_lane_lost(&m->lane, why, &m->err));
}

enum rsn_act rsn_sm_reconnected(struct rsn_sm *m, bool ok, const struct lab_err *err,
                                int64_t now)
{
    (void)now;
    if (!ok) {
        if (err)
            m->err = *err;
        return failed(m);
    }
    m->lane.broken = false;
    return sm_send(m);
}

enum rsn_act rsn_sm_subscribed(struct rsn_sm *m, int64_t now)
{
    if (m->step != RS_SUBSCRIBING)
        return RSN_DONE;
    m->subscribed = true;
    return attempt(m, now); /* the release may have come before the subscription */
}

enum rsn_act rsn_sm_message(struct rsn_sm *m, int64_t exit_ns, int64_t arrive_ns, int64_t now)
{
    if (m->step != RS_WAITING)
        return RSN_DONE;
    m->woken = true;
    m->msg_exit_ns = exit_ns;
    m->msg_arrive_ns = arrive_ns;
    return attempt(m, now);
}

enum rsn_act rsn_sm_timer(struct rsn_sm *m, int64_t now)
{
    if (m->step != RS_SUBSCRIBING && m->step != RS_WAITING)
        return RSN_DONE;
    if (*m->env->stop || now >= m->deadline || m->step == RS_SUBSCRIBING)
        return acquired(m, LOCK_TIMEOUT);
    return attempt(m, now); /* the holder's lease ran out: try again */
}

enum rsn_act rsn_sm_ps_lost(struct rsn_sm *m, const char *why, int64_t now)
{
    (void)why;
    if (m->step != RS_SUBSCRIBING && m->step != RS_WAITING)
        return RSN_DONE;
    m->subscribed = false;
    if (*m->env->stop || now >= m->deadline)
        return acquired(m, LOCK_TIMEOUT);
    m->wake_at = m->deadline;
    m->step = RS_SUBSCRIBING; /* on a new connection; then the lock is tried again */
    return RSN_SUBSCRIBE;
}

enum rsn_act rsn_sm_ps_error(struct rsn_sm *m, const char *msg, int64_t now)
{
    (void)now;
    if (m->step != RS_SUBSCRIBING && m->step != RS_WAITING)
        return RSN_DONE;
    m->subscribed = false;
    lab_err_set(&m->err, EPROTO, "redis pub/sub: %s", msg && msg[0] ? msg : "error");
    return acquired(m, LOCK_ERROR);
}

enum rsn_act rsn_sm_ps_failed(struct rsn_sm *m, const struct lab_err *err, int64_t now)
{
    (void)now;
    if (m->step != RS_SUBSCRIBING && m->step != RS_WAITING)
        return RSN_DONE;
    m->subscribed = false;
    if (err && err->msg[0])
        m->err = *err;
    else
        lab_err_set(&m->err, EIO, "redis pub/sub: no connection");
    return acquired(m, LOCK_ERROR);
}

/* ---------------------------------------------------------------- renewal */

void rsn_sm_init_renewal(struct rsn_sm *w, const struct rsn_sm *m)
{
    *w = *m;
    w->op = RS_OP_NONE;
    w->step = RS_IDLE;
    w->watch = RS_WATCH_NONE;
    redis_lane_init(&w->lane); /* a connection of its own */
}

enum rsn_act rsn_sm_renew(struct rsn_sm *w, const char *key, int64_t now)
{
    (void)now;
    w->op = RS_OP_RENEW;
    w->key = key;
    redis_lane_op(&w->lane);
    w->after_load = RS_IDLE;
    w->renewed = -1;
    return send_step(w, RS_RENEW);
}
