/*
 * redis_machine.c - the simple Redis designs' protocol, without I/O (see
 * redis_machine.h).
 *
 * Every operation is a short walk through enum redis_sm_step: an open
 * loads the scripts its design calls (or PINGs), an acquire attempts until
 * granted, an error, or the wait budget spent (pausing as lock_poll does,
 * counting polls and the lease floor the same way), a release sends one
 * command or two (redis-get-del's GET, then DEL), a renewal one script.
 * One command is in flight at a time. What a reply means is read in
 * on_answer(); what a failure means (resend, reload, give up) is the
 * lane's (redis_lane.h), but for WAIT's own rule. The machine reads no
 * clock: the time comes with every event.
 */
#include "redis_machine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lock_poll.h"

const char redis_compare_and_delete_lua[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('del', KEYS[1])\n"
    "end\n"
    "return 0\n";

const char redis_compare_and_pexpire_lua[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('pexpire', KEYS[1], ARGV[2])\n"
    "end\n"
    "return 0\n";

const char redis_fenced_set_nx_px_lua[] =
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
    "  return redis.call('incr', KEYS[2])\n"
    "end\n"
    "return 0\n";

int redis_fence_key(char *out, size_t len, const char *key, struct lab_err *err)
{
    int n = snprintf(out, len, "%s" REDIS_FENCE_SUFFIX, key);
    if (n < 0 || (size_t)n >= len) {
        lab_err_set(err, ENAMETOOLONG, "lock key too long for its fence counter");
        return -1;
    }
    return 0;
}

void redis_sm_init(struct redis_sm *m, const struct redis_sm_design *d,
                   const struct lock_env *env, const char *token)
{
    memset(m, 0, sizeof *m);
    m->design = d;
    m->env = env;
    snprintf(m->token, sizeof m->token, "%s", token);
    long long ms = env->ttl_ns / 1000000;
    snprintf(m->ttl, sizeof m->ttl, "%lld", ms > 0 ? ms : 1);
    bool lua = d->kind == REDIS_SM_LUA || d->kind == REDIS_SM_WATCHDOG;
    m->fencing = lua && env->fencing;
    if (lua || d->kind == REDIS_SM_WAIT)
        m->script[RSM_SC_RELEASE].src = redis_compare_and_delete_lua;
    if (m->fencing)
        m->script[RSM_SC_ACQUIRE].src = redis_fenced_set_nx_px_lua;
    if (d->kind == REDIS_SM_WATCHDOG)
        m->script[RSM_SC_RENEW].src = redis_compare_and_pexpire_lua;
    if (d->kind == REDIS_SM_SETNX_EXPIRE)
        m->fp_armed = failpoint_find(d->name, "after-setnx");
    if (d->kind == REDIS_SM_GET_DEL)
        m->fp_armed = failpoint_find(d->name, "before-del");
    if (d->setup)
        d->setup(m);
    redis_lane_init(&m->lane); /* no connection yet */
}

void redis_sm_init_renewal(struct redis_sm *w, const struct redis_sm *m)
{
    *w = *m;
    w->op = RSM_OP_NONE;
    w->step = RSM_IDLE;
    w->script[RSM_SC_RELEASE].src = w->script[RSM_SC_ACQUIRE].src = NULL; /* its open: renew */
    redis_lane_init(&w->lane); /* a connection of its own */
}

bool redis_sm_renews(const struct redis_sm *m)
{
    return m->script[RSM_SC_RENEW].src != NULL;
}

/* ------------------------------------------------------------ sending */

/* The script step s calls. */
static enum redis_sm_script script_of(enum redis_sm_step s)
{
    return s == RSM_EVAL_ACQUIRE ? RSM_SC_ACQUIRE : s == RSM_EVAL_RENEW ? RSM_SC_RENEW
                                                                        : RSM_SC_RELEASE;
}

/* The command of m->step into argv. */
static void build(struct redis_sm *m)
{
    const char **v = m->argv;
    const char *val = m->design->kind == REDIS_SM_SET_DEL ? "locked" : m->token;
    int n = 0;
    switch (m->step) {
    case RSM_IDLE:
        break;
    case RSM_PING:
    case RSM_SLOW_PING:
        v[n++] = "PING";
        break;
    case RSM_LOAD:
        v[n++] = "SCRIPT", v[n++] = "LOAD", v[n++] = m->script[m->loading].src;
        break;
    case RSM_SET:
        v[n++] = "SET", v[n++] = m->key, v[n++] = val, v[n++] = "NX", v[n++] = "PX";
        v[n++] = m->ttl;
        break;
    case RSM_EVAL_ACQUIRE:
    case RSM_EVAL_RENEW:
    case RSM_EVAL_RELEASE:
    case RSM_GIVE_BACK: /* KEYS[1] key (KEYS[2] its fence counter), ARGV token, ttl */
        v[n++] = "EVALSHA", v[n++] = m->script[script_of(m->step)].sha;
        v[n++] = m->fencing && m->step == RSM_EVAL_ACQUIRE ? "2" : "1", v[n++] = m->key;
        if (m->fencing && m->step == RSM_EVAL_ACQUIRE)
            v[n++] = m->fence_key;
        v[n++] = m->token, v[n++] = m->ttl;
        break;
    case RSM_SETNX:
        v[n++] = "SETNX", v[n++] = m->key, v[n++] = m->token;
        break;
    case RSM_EXISTS:
        v[n++] = "EXISTS", v[n++] = m->key;
        break;
    case RSM_SET_PLAIN:
        v[n++] = "SET", v[n++] = m->key, v[n++] = m->token;
        break;
    case RSM_PEXPIRE:
        v[n++] = "PEXPIRE", v[n++] = m->key, v[n++] = m->ttl;
        break;
    case RSM_WAIT:
        v[n++] = "WAIT", v[n++] = m->wait_n, v[n++] = m->wait_ms;
        break;
    case RSM_GET:
        v[n++] = "GET", v[n++] = m->key;
        break;
    case RSM_DEL:
        v[n++] = "DEL", v[n++] = m->key;
        break;
    }
    m->argc = n;
}

/* Send m->step: on a new connection first when the last one broke. The
 * operation's commands count as round trips, the open's and a reload's
 * SCRIPT LOAD and a renewal do not (as the blocking client always counted
 * them). */
static enum redis_sm_act sm_send(struct redis_sm *m)
{
    if (m->lane.broken)
        return REDIS_SM_RECONNECT;
    build(m);
    if (m->step >= RSM_SET)
        m->env->stats->round_trips++;
    return REDIS_SM_SEND;
}

/* A new command (not a resend of the last one). */
static enum redis_sm_act send_step(struct redis_sm *m, enum redis_sm_step step)
{
    m->step = step;
    redis_lane_cmd(&m->lane);
    return sm_send(m);
}

/* Send step, after the design's failpoint when it is armed. */
static enum redis_sm_act past_failpoint(struct redis_sm *m, enum redis_sm_step step)
{
    m->step = step;
    if (!m->fp_armed)
        return send_step(m, step);
    m->fp = m->fp_armed;
    return REDIS_SM_FAILPOINT;
}

/* ------------------------------------------------------------ outcomes */

static enum redis_sm_act done(struct redis_sm *m)
{
    m->op = RSM_OP_NONE;
    m->step = RSM_IDLE;
    m->after_load = RSM_IDLE;
    return REDIS_SM_DONE;
}

static enum redis_sm_act opened(struct redis_sm *m, int rc)
{
    m->open_rc = rc;
    return done(m);
}

static enum redis_sm_act acquired(struct redis_sm *m, enum lock_status st)
{
    if (st == LOCK_GRANTED) { /* the TTL starts at or after sent, in whole ms */
        m->env->stats->lease_floor_ns = m->sent + m->env->ttl_ns / 1000000 * 1000000;
        if (redis_sm_renews(m))
            m->watch = RSM_WATCH_ARM;
        if (m->design->reentrant && m->holds == 0) {
            m->holds = 1;
            snprintf(m->held_key, sizeof m->held_key, "%s", m->key);
        }
    }
    /* what lifetime a user's script gives the lock, and what its release
     * returns 0 for, is the script's business: claim no lease floor, so a
     * "not ours" from it is never read as someone else taking the lock */
    if (m->design->kind == REDIS_SM_SCRIPT)
        m->env->stats->lease_floor_ns = 0;
    m->status = st;
    return done(m);
}

static enum redis_sm_act released(struct redis_sm *m, enum release_status rs)
{
    m->release = rs;
    return done(m);
}

static enum redis_sm_act taken(struct redis_sm *m, int64_t now);

/* The operation under way failed; m->err says how. */
static enum redis_sm_act failed(struct redis_sm *m, int64_t now)
{
    if (m->step == RSM_GIVE_BACK || m->after_load == RSM_GIVE_BACK) /* best effort */
        return taken(m, now);
    switch (m->op) {
    case RSM_OP_OPEN:
        return opened(m, -1);
    case RSM_OP_ACQUIRE:
        return acquired(m, LOCK_ERROR);
    case RSM_OP_RENEW:
        m->renewed = -1;
        return done(m);
    case RSM_OP_RELEASE:
    case RSM_OP_NONE:
        break;
    }
    return released(m, RELEASE_ERROR);
}

/* ------------------------------------------------------------ steps */

static enum redis_sm_act attempt(struct redis_sm *m, int64_t now)
{
    m->sent = now;
    m->unacked = false;
    if (m->slow_ping)
        return send_step(m, RSM_SLOW_PING);
    switch (m->design->kind) {
    case REDIS_SM_SETNX_EXPIRE:
        return send_step(m, RSM_SETNX);
    case REDIS_SM_CHECK_THEN_SET:
        return send_step(m, RSM_EXISTS);
    default:
        return send_step(m, m->script[RSM_SC_ACQUIRE].src ? RSM_EVAL_ACQUIRE : RSM_SET);
    }
}

/* The lock was taken (or an unreplicated grant given back): pause, or
 * give up when the budget is spent; an attempt that failed is an error. */
static enum redis_sm_act taken(struct redis_sm *m, int64_t now)
{
    if (m->unacked) {
        m->err = m->wait_err;
        return acquired(m, LOCK_ERROR);
    }
    m->env->stats->polls++;
    int64_t pause = lock_poll_next_at(m->env, m->attempt++, m->deadline, now, false);
    if (pause <= 0)
        return acquired(m, LOCK_TIMEOUT);
    m->wake_at = now + pause;
    return REDIS_SM_SLEEP;
}

/* redis-wait: acked replicas have the SET (-1: WAIT failed, err says why).
 * Too few: give the grant back and try later, as if it had been taken. */
static enum redis_sm_act waited(struct redis_sm *m, long long acked)
{
    if (acked >= m->wait_replicas)
        return acquired(m, LOCK_GRANTED);
    if (acked >= 0)
        m->env->stats->unreplicated++;
    m->unacked = acked < 0;
    m->wait_err = m->err;
    return send_step(m, RSM_GIVE_BACK);
}

/* The open loads every script its design calls, or PINGs when none. */
static enum redis_sm_act open_next(struct redis_sm *m)
{
    while (m->open_next < RSM_SCRIPTS && !m->script[m->open_next].src)
        m->open_next++;
    if (m->open_next < RSM_SCRIPTS) {
        m->loading = m->open_next++;
        return send_step(m, RSM_LOAD);
    }
    if (m->step == RSM_IDLE)
        return send_step(m, RSM_PING);
    return opened(m, 0);
}

/* A SCRIPT LOAD answered: keep the SHA1, then go on. */
static enum redis_sm_act script_loaded(struct redis_sm *m, const struct redis_sm_reply *r,
                                       int64_t now)
{
    if (r->type != RSM_STRING || r->len != 40) {
        lab_err_set(&m->err, EPROTO, "SCRIPT LOAD returned no SHA1");
        return failed(m, now);
    }
    memcpy(m->script[m->loading].sha, r->str, 40);
    m->script[m->loading].sha[40] = '\0';
    if (m->after_load != RSM_IDLE) { /* a reload after NOSCRIPT: the script again */
        enum redis_sm_step again = m->after_load;
        m->after_load = RSM_IDLE;
        return send_step(m, again);
    }
    return open_next(m);
}

static bool is_one(const struct redis_sm_reply *r)
{
    return r->type == RSM_INTEGER && r->integer > 0;
}

/* A reply that is not an error: what it means at m->step. */
static enum redis_sm_act on_answer(struct redis_sm *m, const struct redis_sm_reply *r,
                                   int64_t now)
{
    switch (m->step) {
    case RSM_IDLE:
        break;
    case RSM_PING:
        return opened(m, 0);
    case RSM_LOAD:
        return script_loaded(m, r, now);
    case RSM_SLOW_PING:
        m->slow_ping = false; /* this attempt's real command now */
        enum redis_sm_act act = attempt(m, m->sent);
        m->slow_ping = true;
        return act;
    case RSM_SET:
        if (r->type != RSM_STATUS)
            return taken(m, now);
        if (m->design->kind != REDIS_SM_WAIT)
            return acquired(m, LOCK_GRANTED);
        return send_step(m, RSM_WAIT);
    case RSM_EVAL_ACQUIRE:
        if (m->design->kind == REDIS_SM_SCRIPT) /* the user's script: 1 is a grant */
            return r->type == RSM_INTEGER && r->integer == 1 ? acquired(m, LOCK_GRANTED)
                                                            : taken(m, now);
        if (!is_one(r))
            return taken(m, now);
        m->env->stats->fence_token = r->integer; /* the fenced grant: the counter */
        return acquired(m, LOCK_GRANTED);
    case RSM_SETNX:
        if (!(r->type == RSM_INTEGER && r->integer == 1))
            return taken(m, now);
        return past_failpoint(m, RSM_PEXPIRE);
    case RSM_EXISTS: /* the race: another client may pass this EXISTS too */
        return is_one(r) ? taken(m, now) : send_step(m, RSM_SET_PLAIN);
    case RSM_SET_PLAIN:
        return send_step(m, RSM_PEXPIRE);
    case RSM_PEXPIRE:
        return acquired(m, LOCK_GRANTED);
    case RSM_WAIT:
        if (r->type != RSM_INTEGER)
            lab_err_set(&m->err, EPROTO, "redis: WAIT returned no count");
        return waited(m, r->type == RSM_INTEGER ? r->integer : -1);
    case RSM_GIVE_BACK:
        return taken(m, now);
    case RSM_GET:
        if (r->type != RSM_STRING || strcmp(r->str, m->token) != 0)
            return released(m, RELEASE_NOT_OWNER);
        return past_failpoint(m, RSM_DEL);
    case RSM_EVAL_RELEASE:
    case RSM_DEL:
        return released(m, is_one(r) ? RELEASE_OK : RELEASE_NOT_OWNER);
    case RSM_EVAL_RENEW:
        m->renewed = is_one(r);
        return done(m);
    }
    lab_err_set(&m->err, EPROTO, "redis: a reply with no command in flight");
    return failed(m, now);
}

static bool is_script(enum redis_sm_step s)
{
    return s == RSM_EVAL_ACQUIRE || s == RSM_EVAL_RELEASE || s == RSM_EVAL_RENEW ||
           s == RSM_GIVE_BACK;
}

/* What the lane says next. */
static enum redis_sm_act next(struct redis_sm *m, enum redis_lane_next n, int64_t now)
{
    if (n == REDIS_LANE_RESEND)
        return sm_send(m);
    if (n == REDIS_LANE_FAIL)
        return failed(m, now);
    m->after_load = m->step;
    m->loading = script_of(m->step);
    return send_step(m, RSM_LOAD);
}

/* An error reply at m->step. */
static enum redis_sm_act on_error_reply(struct redis_sm *m, const char *msg, int64_t now)
{
    if (m->step == RSM_WAIT) { /* not acknowledged: give the grant back, then fail */
        lab_err_set(&m->err, EPROTO, "redis: %s", msg);
        return waited(m, -1);
    }
    return next(m, redis_lane_error(&m->lane, msg, is_script(m->step), &m->err), now);
}

/* ------------------------------------------------------------ events */

static void start(struct redis_sm *m, enum redis_sm_op op, const char *key)
{
    m->op = op;
    m->key = key;
    redis_lane_op(&m->lane);
    m->after_load = RSM_IDLE;
    m->step = RSM_IDLE;
}

enum redis_sm_act redis_sm_open(struct redis_sm *m, int64_t now)
{
    (void)now;
    start(m, RSM_OP_OPEN, NULL);
    m->open_next = 0;
    return open_next(m);
}

enum redis_sm_act redis_sm_acquire(struct redis_sm *m, const char *key, int64_t wait_ns,
                                   int64_t now)
{
    start(m, RSM_OP_ACQUIRE, key);
    if (m->holds > 0 && strcmp(m->held_key, key) == 0) { /* reentrant: nested */
        m->holds++;
        m->status = LOCK_GRANTED;
        return done(m);
    }
    m->attempt = 0;
    m->deadline = now + wait_ns;
    if (m->fencing && redis_fence_key(m->fence_key, sizeof m->fence_key, key, &m->err) != 0)
        return failed(m, now);
    return attempt(m, now);
}

enum redis_sm_act redis_sm_release(struct redis_sm *m, const char *key, int64_t now)
{
    (void)now;
    start(m, RSM_OP_RELEASE, key);
    if (m->holds > 1 && strcmp(m->held_key, key) == 0) { /* reentrant: not the last */
        m->holds--;
        return released(m, RELEASE_OK);
    }
    m->holds = 0;
    if (redis_sm_renews(m))
        m->watch = RSM_WATCH_DISARM;
    switch (m->design->kind) {
    case REDIS_SM_GET_DEL:
        return send_step(m, RSM_GET);
    case REDIS_SM_SET_DEL:
    case REDIS_SM_SETNX_EXPIRE:
    case REDIS_SM_CHECK_THEN_SET:
        return send_step(m, RSM_DEL);
    default:
        return send_step(m, RSM_EVAL_RELEASE);
    }
}

enum redis_sm_act redis_sm_renew(struct redis_sm *w, const char *key, int64_t now)
{
    (void)now;
    start(w, RSM_OP_RENEW, key);
    w->renewed = -1;
    return send_step(w, RSM_EVAL_RENEW);
}

enum redis_sm_act redis_sm_reply(struct redis_sm *m, const struct redis_sm_reply *r,
                                 int64_t now)
{
    if (m->op == RSM_OP_NONE)
        return REDIS_SM_DONE; /* no command of ours in flight: nothing it could answer */
    if (r->type == RSM_ERROR)
        return on_error_reply(m, r->str ? r->str : "error", now);
    return on_answer(m, r, now);
}

enum redis_sm_act redis_sm_lost(struct redis_sm *m, const char *why, int64_t now)
{
    enum redis_lane_next n = redis_lane_lost(&m->lane, why, &m->err);
    if (m->step == RSM_WAIT) /* WAIT counts its own connection's writes: not resent */
        return waited(m, 0);
    return next(m, n, now);
}

enum redis_sm_act redis_sm_reconnected(struct redis_sm *m, bool ok, const struct lab_err *err,
                                       int64_t now)
{
    if (!ok) {
        if (err)
            m->err = *err;
        return failed(m, now);
    }
    m->lane.broken = false;
    return sm_send(m);
}

enum redis_sm_act redis_sm_timer(struct redis_sm *m, int64_t now)
{
    if (*m->env->stop)
        return acquired(m, LOCK_TIMEOUT);
    return attempt(m, now);
}

enum redis_sm_act redis_sm_resume(struct redis_sm *m, int64_t now)
{
    (void)now;
    m->fp = NULL;
    return send_step(m, m->step);
}
