/*
 * redis_machine.c - the simple Redis designs' protocol, without I/O (see
 * redis_machine.h).
 *
 * Every operation is a short walk through enum redis_sm_step: an open
 * loads the scripts its design calls (or PINGs), an acquire attempts until
 * granted, an error, or the wait budget spent (pausing as lock_poll does,
 * counting polls and the lease floor the same way), a release sends one
 * command. One command is in flight at a time. What a reply means is read
 * in on_answer(); what a failure means (resend, reload, give up) in
 * on_error_reply() and redis_sm_lost(). The machine reads no clock: the
 * time comes with every event.
 */
#include "redis_machine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lock_poll.h"
#include "redis_common.h"

void redis_sm_init(struct redis_sm *m, const struct redis_sm_design *d,
                   const struct lock_env *env, const char *token)
{
    memset(m, 0, sizeof *m);
    m->design = d;
    m->env = env;
    snprintf(m->token, sizeof m->token, "%s", token);
    long long ms = env->ttl_ns / 1000000;
    snprintf(m->ttl, sizeof m->ttl, "%lld", ms > 0 ? ms : 1);
    m->fencing = d->kind == REDIS_SM_LUA && env->fencing;
    if (d->kind == REDIS_SM_SETNX_EXPIRE)
        m->fp_after_setnx = failpoint_find(d->name, "after-setnx");
    m->broken = true; /* no connection yet */
}

/* ------------------------------------------------------------ sending */

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
    case RSM_LOAD_RELEASE:
    case RSM_LOAD_FENCE:
        v[n++] = "SCRIPT", v[n++] = "LOAD";
        v[n++] = m->step == RSM_LOAD_FENCE ? redis_fenced_set_nx_px_lua
                                           : redis_compare_and_delete_lua;
        break;
    case RSM_SET:
        v[n++] = "SET", v[n++] = m->key, v[n++] = val, v[n++] = "NX", v[n++] = "PX";
        v[n++] = m->ttl;
        break;
    case RSM_FENCED:
        v[n++] = "EVALSHA", v[n++] = m->fence_sha, v[n++] = "2", v[n++] = m->key;
        v[n++] = m->fence_key, v[n++] = m->token, v[n++] = m->ttl;
        break;
    case RSM_SETNX:
        v[n++] = "SETNX", v[n++] = m->key, v[n++] = m->token;
        break;
    case RSM_PEXPIRE:
        v[n++] = "PEXPIRE", v[n++] = m->key, v[n++] = m->ttl;
        break;
    case RSM_RELEASE_SCRIPT:
        v[n++] = "EVALSHA", v[n++] = m->release_sha, v[n++] = "1", v[n++] = m->key;
        v[n++] = m->token, v[n++] = m->ttl;
        break;
    case RSM_DEL:
        v[n++] = "DEL", v[n++] = m->key;
        break;
    }
    m->argc = n;
}

/* Send m->step: on a new connection first when the last one broke. The
 * operation's commands count as round trips, the open's and a reload's
 * SCRIPT LOAD do not (as the blocking client always counted them). */
static enum redis_sm_act sm_send(struct redis_sm *m)
{
    if (m->broken)
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
    m->resends = 0;
    return sm_send(m);
}

/* ------------------------------------------------------------ outcomes */

static enum redis_sm_act done(struct redis_sm *m)
{
    m->op = RSM_OP_NONE;
    m->step = RSM_IDLE;
    return REDIS_SM_DONE;
}

static enum redis_sm_act opened(struct redis_sm *m, int rc)
{
    m->open_rc = rc;
    return done(m);
}

static enum redis_sm_act acquired(struct redis_sm *m, enum lock_status st)
{
    if (st == LOCK_GRANTED) /* the TTL starts at or after sent, in whole ms */
        m->env->stats->lease_floor_ns = m->sent + m->env->ttl_ns / 1000000 * 1000000;
    m->status = st;
    return done(m);
}

static enum redis_sm_act released(struct redis_sm *m, enum release_status rs)
{
    m->release = rs;
    return done(m);
}

/* The operation under way failed; m->err says how. */
static enum redis_sm_act failed(struct redis_sm *m)
{
    switch (m->op) {
    case RSM_OP_OPEN:
        return opened(m, -1);
    case RSM_OP_ACQUIRE:
        return acquired(m, LOCK_ERROR);
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
    if (m->slow_ping)
        return send_step(m, RSM_SLOW_PING);
    return send_step(m, m->design->kind == REDIS_SM_SETNX_EXPIRE ? RSM_SETNX
                        : m->fencing                             ? RSM_FENCED
                                                                 : RSM_SET);
}

/* The lock was taken: pause, or give up when the budget is spent. */
static enum redis_sm_act taken(struct redis_sm *m, int64_t now)
{
    m->env->stats->polls++;
    int64_t pause = lock_poll_next_at(m->env, m->attempt++, m->deadline, now, false);
    if (pause <= 0)
        return acquired(m, LOCK_TIMEOUT);
    m->wake_at = now + pause;
    return REDIS_SM_SLEEP;
}

/* The steps of an open, in order; RSM_IDLE ends them. */
static enum redis_sm_step open_step(const struct redis_sm *m, int i)
{
    enum redis_sm_step steps[3];
    int n = 0;
    if (m->design->kind == REDIS_SM_LUA)
        steps[n++] = RSM_LOAD_RELEASE;
    if (m->fencing)
        steps[n++] = RSM_LOAD_FENCE;
    if (n == 0)
        steps[n++] = RSM_PING;
    return i < n ? steps[i] : RSM_IDLE;
}

static enum redis_sm_act open_next(struct redis_sm *m)
{
    enum redis_sm_step s = open_step(m, m->open_next++);
    return s == RSM_IDLE ? opened(m, 0) : send_step(m, s);
}

/* A SCRIPT LOAD answered: keep the SHA1, then go on. */
static enum redis_sm_act script_loaded(struct redis_sm *m, const struct redis_sm_reply *r)
{
    if (r->type != RSM_STRING || r->len != 40) {
        lab_err_set(&m->err, EPROTO, "SCRIPT LOAD returned no SHA1");
        return failed(m);
    }
    memcpy(m->step == RSM_LOAD_FENCE ? m->fence_sha : m->release_sha, r->str, 40);
    (m->step == RSM_LOAD_FENCE ? m->fence_sha : m->release_sha)[40] = '\0';
    if (m->after_load != RSM_IDLE) { /* a reload after NOSCRIPT: the script again */
        enum redis_sm_step again = m->after_load;
        m->after_load = RSM_IDLE;
        return send_step(m, again);
    }
    return open_next(m);
}

/* A reply that is not an error: what it means at m->step. */
static enum redis_sm_act on_answer(struct redis_sm *m, const struct redis_sm_reply *r,
                                   int64_t now)
{
    switch (m->step) {
    case RSM_IDLE:
        break;
    case RSM_PING:
        return open_next(m);
    case RSM_LOAD_RELEASE:
    case RSM_LOAD_FENCE:
        return script_loaded(m, r);
    case RSM_SLOW_PING:
        m->slow_ping = false; /* this attempt's real command now */
        enum redis_sm_act act = attempt(m, m->sent);
        m->slow_ping = true;
        return act;
    case RSM_SET:
        return r->type == RSM_STATUS ? acquired(m, LOCK_GRANTED) : taken(m, now);
    case RSM_FENCED:
        if (r->type == RSM_INTEGER && r->integer > 0) {
            m->env->stats->fence_token = r->integer;
            return acquired(m, LOCK_GRANTED);
        }
        return taken(m, now);
    case RSM_SETNX:
        if (!(r->type == RSM_INTEGER && r->integer == 1))
            return taken(m, now);
        m->step = RSM_PEXPIRE;
        if (m->fp_after_setnx) {
            m->fp = m->fp_after_setnx;
            return REDIS_SM_FAILPOINT;
        }
        return send_step(m, RSM_PEXPIRE);
    case RSM_PEXPIRE:
        return acquired(m, LOCK_GRANTED);
    case RSM_RELEASE_SCRIPT:
    case RSM_DEL:
        return released(m, r->type == RSM_INTEGER && r->integer > 0 ? RELEASE_OK
                                                                    : RELEASE_NOT_OWNER);
    }
    lab_err_set(&m->err, EPROTO, "redis: a reply with no command in flight");
    return failed(m);
}

static bool starts(const char *s, const char *word)
{
    return strncmp(s, word, strlen(word)) == 0;
}

/* An error reply at m->step. */
static enum redis_sm_act on_error_reply(struct redis_sm *m, const char *msg)
{
    lab_err_set(&m->err, EPROTO, "redis: %s", msg);
    bool script = m->step == RSM_FENCED || m->step == RSM_RELEASE_SCRIPT;
    if (script && starts(msg, "NOSCRIPT") && !m->reloaded) {
        m->reloaded = true; /* once an operation: lost again at once is an error */
        m->after_load = m->step;
        return send_step(m, m->step == RSM_FENCED ? RSM_LOAD_FENCE : RSM_LOAD_RELEASE);
    }
    if ((starts(msg, "READONLY") || starts(msg, "NOREPLICAS")) && m->resends == 0) {
        m->resends++;
        m->broken = true; /* the wrong server: find the master anew */
        return sm_send(m);
    }
    if (starts(msg, "READONLY") || starts(msg, "NOREPLICAS"))
        m->broken = true; /* still the wrong server: the next operation looks again */
    m->after_load = RSM_IDLE;
    return failed(m);
}

/* ------------------------------------------------------------ events */

enum redis_sm_act redis_sm_open(struct redis_sm *m, int64_t now)
{
    (void)now;
    m->op = RSM_OP_OPEN;
    m->open_next = 0;
    return open_next(m);
}

enum redis_sm_act redis_sm_acquire(struct redis_sm *m, const char *key, int64_t wait_ns,
                                   int64_t now)
{
    m->op = RSM_OP_ACQUIRE;
    m->key = key;
    m->reloaded = false;
    m->attempt = 0;
    m->deadline = now + wait_ns;
    m->after_load = RSM_IDLE;
    if (m->fencing && redis_fence_key(m->fence_key, sizeof m->fence_key, key, &m->err) != 0)
        return failed(m);
    return attempt(m, now);
}

enum redis_sm_act redis_sm_release(struct redis_sm *m, const char *key, int64_t now)
{
    (void)now;
    m->op = RSM_OP_RELEASE;
    m->key = key;
    m->reloaded = false;
    m->after_load = RSM_IDLE;
    return send_step(m, m->design->kind == REDIS_SM_LUA ? RSM_RELEASE_SCRIPT : RSM_DEL);
}

enum redis_sm_act redis_sm_reply(struct redis_sm *m, const struct redis_sm_reply *r,
                                 int64_t now)
{
    if (m->op == RSM_OP_NONE)
        return REDIS_SM_DONE; /* no command of ours in flight: nothing it could answer */
    if (r->type == RSM_ERROR)
        return on_error_reply(m, r->str ? r->str : "error");
    return on_answer(m, r, now);
}

enum redis_sm_act redis_sm_lost(struct redis_sm *m, const char *why, int64_t now)
{
    (void)now;
    m->broken = true;
    lab_err_set(&m->err, EIO, "redis: %s", why && why[0] ? why : "connection lost");
    if (m->resends == 0) { /* once more, on a new connection */
        m->resends++;
        return sm_send(m);
    }
    m->after_load = RSM_IDLE;
    return failed(m);
}

enum redis_sm_act redis_sm_reconnected(struct redis_sm *m, bool ok, const struct lab_err *err,
                                       int64_t now)
{
    (void)now;
    if (!ok) {
        if (err)
            m->err = *err;
        m->after_load = RSM_IDLE;
        return failed(m);
    }
    m->broken = false;
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
