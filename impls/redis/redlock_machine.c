/*
 * redlock_machine.c - the Redlock algorithm without I/O (see
 * redlock_machine.h): an open that loads the unlock script on a quorum of
 * masters, attempts of SETs to every master judged by quorum and
 * validity, the unlock of a failed attempt, the jittered pause, the
 * best-effort release. The time comes with every event; the attempt's
 * token from new_token.
 */
#include "redlock_machine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lock_poll.h"

int rl_sm_init(struct rl_sm *m, const struct lock_env *env, rl_token_fn new_token,
               struct lab_err *err)
{
    memset(m, 0, sizeof *m);
    m->env = env;
    m->new_token = new_token ? new_token : redlock_new_token;
    if (env->servers->sentinel_master[0]) {
        lab_err_set(err, ENOTSUP, "redlock runs on independent masters, not on a master "
                    "behind sentinels: give backends.redis.masters");
        return -1;
    }
    return redlock_params_init(&m->p, env, err);
}

void rl_sm_master_failed(struct rl_sm *m, int i, const char *why)
{
    const struct lock_endpoint *ep = &m->env->servers->node[i];
    lab_err_set(&m->last, EIO, "redlock master %d (%s:%d): %s", i, ep->host, ep->port,
                why && why[0] ? why : "no reply");
}

/* A new fan-out of argv to every master. */
static enum rl_act fanout(struct rl_sm *m, enum rl_kind kind, int argc, const char *const *argv)
{
    m->kind = kind;
    m->argc = argc;
    for (int i = 0; i < argc; i++)
        m->argv[i] = argv[i];
    m->answered = m->yes = 0;
    m->again = 0;
    m->round = 0;
    m->mask = redlock_all_masters(&m->p);
    m->timeout_ns = kind == RL_OPEN ? 2 * REDLOCK_OPEN_TIMEOUT_MS * 1000000LL
                                    : REDLOCK_TIMEOUT_MS * 1000000LL;
    return RL_FANOUT;
}

static enum rl_act done(struct rl_sm *m)
{
    m->op = RL_OP_NONE;
    return RL_DONE;
}

static enum rl_act acquired(struct rl_sm *m, enum lock_status st)
{
    m->status = st;
    return done(m);
}

/* A new attempt with a fresh token (a failed attempt must not overwrite
 * the token of a lock this client holds). */
static enum rl_act attempt(struct rl_sm *m, int64_t now)
{
    if (m->new_token(m->try_token, &m->err) != 0)
        return acquired(m, LOCK_ERROR);
    m->t0 = now;
    const char *argv[] = {"SET", m->key, m->try_token, "NX", "PX", m->p.ttl_arg};
    return fanout(m, RL_SET, 6, argv);
}

enum rl_act rl_sm_open(struct rl_sm *m, int64_t now)
{
    (void)now;
    m->op = RL_OP_OPEN;
    const char *argv[] = {"SCRIPT", "LOAD", redlock_unlock_lua};
    return fanout(m, RL_OPEN, 3, argv);
}

enum rl_act rl_sm_acquire(struct rl_sm *m, const char *key, int64_t wait_ns, int64_t now)
{
    m->op = RL_OP_ACQUIRE;
    m->key = key;
    m->attempt = 0;
    m->most = 0;
    m->wait_deadline = now + wait_ns;
    return attempt(m, now);
}

enum rl_act rl_sm_release(struct rl_sm *m, const char *key, int64_t now)
{
    (void)now;
    m->op = RL_OP_RELEASE;
    m->key = key;
    const char *argv[] = {"EVALSHA", m->sha, "1", key, m->token};
    return fanout(m, RL_RELEASE, 5, argv);
}

static bool sha_of(struct rl_sm *m, const struct redis_sm_reply *r)
{
    if (!(r->type == RSM_STRING && r->len == 40))
        return false;
    if (m->sha[0] == '\0') {
        memcpy(m->sha, r->str, 40);
        m->sha[40] = '\0';
    }
    return true;
}

bool rl_sm_loaded(struct rl_sm *m, int i, const struct redis_sm_reply *r, const char *why)
{
    if (r && sha_of(m, r))
        return true;
    rl_sm_master_failed(m, i, !r                      ? why
                              : r->type == RSM_ERROR ? r->str
                                                     : "SCRIPT LOAD returned no SHA1");
    return false;
}

bool rl_sm_master(struct rl_sm *m, int i, enum rl_result res, const struct redis_sm_reply *r,
                  const char *why)
{
    if (res != RL_ANSWERED) {
        if (res == RL_BROKEN && m->round == 0)
            m->again |= 1u << i;
        rl_sm_master_failed(m, i, why);
        return true;
    }
    if (r->type == RSM_ERROR) { /* NOSCRIPT included: the reconnect reloads */
        rl_sm_master_failed(m, i, r->str);
        return true;
    }
    if (m->kind == RL_OPEN) {
        if (!sha_of(m, r)) {
            rl_sm_master_failed(m, i, "SCRIPT LOAD returned no SHA1");
            return true;
        }
        m->yes++;
    } else if (m->kind == RL_SET) {
        m->yes += r->type == RSM_STATUS;
    } else {
        m->yes += r->type == RSM_INTEGER && r->integer == 1;
    }
    m->answered++;
    return false;
}

enum rl_act rl_sm_round_done(struct rl_sm *m, int64_t now)
{
    if (m->again && m->round == 0) { /* restarted masters: once more, on new connections */
        m->round = 1;
        m->mask = m->again;
        m->again = 0;
        m->timeout_ns = REDLOCK_TIMEOUT_MS * 1000000LL;
        return RL_FANOUT;
    }
    switch (m->kind) {
    case RL_OPEN:
        m->open_rc = redlock_open_outcome(&m->p, m->yes, m->last.msg, &m->err);
        return done(m);
    case RL_SET: {
        if (redlock_granted(&m->p, m->yes, m->t0, now)) {
            memcpy(m->token, m->try_token, sizeof m->token);
            m->env->stats->lease_floor_ns = redlock_lease_floor(&m->p, m->t0);
            return acquired(m, LOCK_GRANTED);
        }
        m->set_answered = m->answered; /* reachability is judged on the SETs */
        const char *argv[] = {"EVALSHA", m->sha, "1", m->key, m->try_token};
        return fanout(m, RL_UNLOCK, 5, argv);
    }
    case RL_UNLOCK: {
        if (m->set_answered > m->most)
            m->most = m->set_answered;
        m->env->stats->polls++;
        /* a random pause, so that clients that split the votes do not collide again */
        int64_t next = lock_poll_next_at(m->env, m->attempt++, m->wait_deadline, now, true);
        if (next > 0) {
            m->wake_at = now + next;
            return RL_SLEEP;
        }
        return acquired(m, redlock_gave_up(&m->p, next, m->most, m->last.msg, &m->err));
    }
    case RL_RELEASE:
        m->release = redlock_release_outcome(&m->p, m->yes, m->answered);
        return done(m);
    }
    return done(m);
}

enum rl_act rl_sm_timer(struct rl_sm *m, int64_t now)
{
    if (*m->env->stop)
        return acquired(m, LOCK_TIMEOUT);
    return attempt(m, now);
}
