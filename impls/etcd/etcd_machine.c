/*
 * etcd_machine.c - the etcd designs' protocol, without I/O (see
 * etcd_machine.h).
 *
 * An acquire is a short walk through enum etcd_sm_step: etcd-lease grants
 * a lease and tries its transaction, watching the key's deletion while it
 * is taken; etcd-mutex and etcd-lock-api make sure of their session, then
 * enter the queue (a transaction, the lower key's range, its watch, our
 * own key read again) or make the Lock call. One request is in flight at
 * a time. What an answer means is read in etcd_sm_reply and
 * etcd_sm_stream_end; what a failure means (a new session, a watch on the
 * next member, a timeout, an error) in the helpers above them. The
 * keep-alive lane is at the end.
 */
#include "etcd_machine.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int64_t ttl_ns(const struct etcd_sm *m)
{
    return m->ttl_s * 1000000000LL;
}

static bool stopping(const struct etcd_sm *m)
{
    return m->env->stop && *m->env->stop;
}

bool etcd_sm_has_session(const struct etcd_sm *m)
{
    return m->design->kind != ETCD_SM_LEASE;
}

int64_t etcd_sm_lease_s(int64_t ttl_ns)
{
    int64_t s = (ttl_ns + 999999999) / 1000000000;
    return s < 1 ? 1 : s;
}

void etcd_sm_init(struct etcd_sm *m, const struct etcd_sm_design *d, const struct lock_env *env,
                  const char *ident, bool keepalive)
{
    memset(m, 0, sizeof *m);
    m->design = d;
    m->env = env;
    snprintf(m->ident, sizeof m->ident, "%s", ident);
    m->ttl_s = etcd_sm_lease_s(env->ttl_ns);
    m->keepalive = etcd_sm_has_session(m) || keepalive;
}

void etcd_sm_free(struct etcd_sm *m)
{
    json_decref(m->body);
    json_decref(m->ka.body);
    m->body = m->ka.body = NULL;
}

json_t *etcd_sm_take(struct etcd_sm *m)
{
    json_t *b = m->body;
    m->body = NULL;
    return b;
}

/* ------------------------------------------------------------ the keep-alive lane */

static void ka_arm(struct etcd_sm *m, int64_t id, int64_t now)
{
    if (!m->keepalive)
        return;
    m->ka.armed = true;
    m->ka.retry = false;
    m->ka.id = id;
    m->ka.gen++;
    m->ka.wake_at = now + ttl_ns(m) / 3;
}

static void ka_disarm(struct etcd_sm *m)
{
    m->ka.armed = false;
    m->ka.retry = false;
    m->ka.gen++;
}

enum etcd_ka_act etcd_sm_ka_state(const struct etcd_sm *m)
{
    return m->ka.armed && !m->ka.inflight ? ETCD_KA_WAIT : ETCD_KA_IDLE;
}

enum etcd_ka_act etcd_sm_ka_timer(struct etcd_sm *m, int64_t now)
{
    struct etcd_ka *k = &m->ka;
    if (!k->armed || k->inflight || now < k->wake_at)
        return etcd_sm_ka_state(m);
    if (!k->retry) /* a renewal may be sent again for as long as the lease may run */
        k->give_up = now + ttl_ns(m);
    k->inflight = true;
    k->gen_sent = k->gen;
    k->sent_id = k->id;
    json_decref(k->body);
    k->body = etcd_req_lease_id(k->id);
    return ETCD_KA_SEND;
}

enum etcd_ka_act etcd_sm_ka_reply(struct etcd_sm *m, const json_t *resp, int64_t now)
{
    struct etcd_ka *k = &m->ka;
    if (!k->inflight)
        return etcd_sm_ka_state(m);
    k->inflight = false;
    bool current = k->armed && k->gen == k->gen_sent;
    if (!resp && current && now < k->give_up && !stopping(m)) {
        k->retry = true; /* no member answered: again, over the next one */
        k->wake_at = now + ETCD_KA_RETRY_NS;
        return ETCD_KA_WAIT;
    }
    int64_t ttl = resp ? etcd_num(resp, "result", "TTL", NULL) : 0;
    if (ttl > 0) {
        m->env->stats->renewals++;
    } else {
        m->env->stats->renewal_failures++;
        if (etcd_sm_has_session(m) && k->sent_id == m->lease)
            m->lease_lost = true; /* the session is over (a stale answer ends nothing) */
        if (current)
            k->armed = false;
    }
    if (current) {
        k->retry = false;
        if (k->armed)
            k->wake_at = now + ttl_ns(m) / 3;
    }
    return etcd_sm_ka_state(m);
}

json_t *etcd_sm_ka_take(struct etcd_sm *m)
{
    json_t *b = m->ka.body;
    m->ka.body = NULL;
    return b;
}

/* ------------------------------------------------------------ acts and outcomes */

static enum etcd_sm_act call(struct etcd_sm *m, enum etcd_sm_step step, const char *path,
                             json_t *body)
{
    m->step = step;
    m->path = path;
    json_decref(m->body);
    m->body = body;
    return ETCD_SM_CALL;
}

static enum etcd_sm_act stream(struct etcd_sm *m, enum etcd_sm_step step, const char *path,
                               json_t *body)
{
    call(m, step, path, body);
    return ETCD_SM_STREAM;
}

static enum etcd_sm_act done(struct etcd_sm *m)
{
    m->op = ESM_OP_NONE;
    m->step = ESM_IDLE;
    return ETCD_SM_DONE;
}

static enum etcd_sm_act acquired(struct etcd_sm *m, enum lock_status st)
{
    m->status = st;
    return done(m);
}

static enum etcd_sm_act released(struct etcd_sm *m, enum release_status rs)
{
    m->release = rs;
    return done(m);
}

static void set_err(struct etcd_sm *m, const struct lab_err *err)
{
    if (err)
        m->err = *err;
    else
        lab_err_set(&m->err, EIO, "etcd: no answer");
}

/* etcd no longer knows the lease the request carried. */
static bool lease_gone(const struct lab_err *err)
{
    return err && strstr(err->msg, "lease not found");
}

static int hold_push(struct etcd_sm *m, int64_t rev)
{
    if (m->n_held == ETCD_MAX_HOLDS || strlen(m->key) >= ETCD_KEY_MAX) {
        lab_err_set(&m->err, ENOSPC, "too many locks held at once (or key too long)");
        return -1;
    }
    struct etcd_hold *h = &m->held[m->n_held++];
    snprintf(h->key, sizeof h->key, "%s", m->key);
    snprintf(h->ekey, sizeof h->ekey, "%s", m->ekey);
    snprintf(h->value, sizeof h->value, "%s", m->value);
    h->rev = rev;
    if (m->env->fencing)
        m->env->stats->fence_token = rev;
    return 0;
}

static bool hold_pop(struct etcd_sm *m, const char *key, struct etcd_hold *out)
{
    for (int i = m->n_held - 1; i >= 0; i--)
        if (strcmp(m->held[i].key, key) == 0) {
            *out = m->held[i];
            memmove(&m->held[i], &m->held[i + 1], (size_t)(m->n_held - i - 1) * sizeof *out);
            m->n_held--;
            return true;
        }
    return false;
}

static enum etcd_sm_act granted(struct etcd_sm *m, int64_t rev)
{
    return acquired(m, hold_push(m, rev) == 0 ? LOCK_GRANTED : LOCK_ERROR);
}

/* etcd-lease's acquire ends: its lease (not a hold's) revoked first. */
static enum etcd_sm_act lease_end(struct etcd_sm *m, enum lock_status st)
{
    m->outcome = st;
    if (!m->op_lease)
        return acquired(m, st);
    int64_t id = m->op_lease;
    m->op_lease = 0;
    return call(m, ESM_END_REVOKE, ETCD_REVOKE, etcd_req_lease_id(id));
}

/* A session design's acquire failed (m->err): a lease etcd no longer
 * knows ends the session. */
static enum etcd_sm_act session_failed(struct etcd_sm *m)
{
    if (lease_gone(&m->err))
        m->lease_lost = true;
    return acquired(m, LOCK_ERROR);
}

static enum etcd_sm_act failed(struct etcd_sm *m, const struct lab_err *err)
{
    set_err(m, err);
    return m->design->kind == ETCD_SM_LEASE ? lease_end(m, LOCK_ERROR) : session_failed(m);
}

/* The wait ran out or the run stops. */
static enum etcd_sm_act timed_out(struct etcd_sm *m)
{
    switch (m->design->kind) {
    case ETCD_SM_LEASE:
        return lease_end(m, LOCK_TIMEOUT);
    case ETCD_SM_MUTEX: /* Lock's clean-up on a cancelled wait */
        return call(m, ESM_GIVE_UP, ETCD_DELETE, etcd_req_key(m->ekey));
    case ETCD_SM_LOCK_API: /* the abandoned call: the member deletes the waiter's key */
        break;
    }
    return acquired(m, LOCK_TIMEOUT);
}

/* ------------------------------------------------------------ steps */

static enum etcd_sm_act watch(struct etcd_sm *m, int64_t now)
{
    if (stopping(m) || now >= m->deadline)
        return timed_out(m);
    m->canceled = false;
    return stream(m, ESM_WATCH, ETCD_WATCH, etcd_req_watch_delete(m->wkey, m->rev));
}

/* etcd-lease: a fresh lease when the one we have is half gone, then the
 * transaction. */
static enum etcd_sm_act lease_top(struct etcd_sm *m, int64_t now)
{
    if (m->op_lease && now - m->granted > m->ttl_s * 500000000LL) {
        int64_t id = m->op_lease;
        m->op_lease = 0;
        return call(m, ESM_REVOKE_STALE, ETCD_REVOKE, etcd_req_lease_id(id));
    }
    if (!m->op_lease) {
        m->granted = now;
        return call(m, ESM_GRANT, ETCD_GRANT, etcd_req_grant(m->ttl_s));
    }
    return call(m, ESM_TRY, ETCD_TXN, etcd_req_lease_try(m->ekey, m->value, m->op_lease));
}

/* The session is there: enter the queue, or make the Lock call. */
static enum etcd_sm_act session_ready(struct etcd_sm *m, int64_t now)
{
    if (m->design->kind == ETCD_SM_MUTEX) {
        snprintf(m->pfx, sizeof m->pfx, ETCD_KEY_PREFIX "%s/", m->key);
        snprintf(m->ekey, sizeof m->ekey, "%s%" PRIx64, m->pfx, (uint64_t)m->lease);
        return call(m, ESM_ENTER, ETCD_TXN, etcd_req_mutex_enter(m->pfx, m->ekey, m->lease));
    }
    if (stopping(m) || now >= m->deadline)
        return acquired(m, LOCK_TIMEOUT);
    return stream(m, ESM_LOCK, ETCD_LOCK, etcd_req_lock(m->key, m->lease));
}

/* The session's lease, granted anew when there is none or it is over. */
static enum etcd_sm_act session(struct etcd_sm *m, int64_t now)
{
    if (m->lease && !m->lease_lost)
        return session_ready(m, now);
    ka_disarm(m);
    return call(m, ESM_GRANT, ETCD_GRANT, etcd_req_grant(m->ttl_s));
}

/* A request with the session's lease failed (err): etcd no longer knows
 * the lease: a new session and the same step again, once an acquire. */
static enum etcd_sm_act session_step_failed(struct etcd_sm *m, const struct lab_err *err,
                                            int64_t now)
{
    if (lease_gone(err) && !m->renewed) {
        m->renewed = true;
        m->lease_lost = true;
        return session(m, now);
    }
    set_err(m, err);
    return session_failed(m);
}

static enum etcd_sm_act lease_granted(struct etcd_sm *m, const json_t *resp,
                                      const struct lab_err *err, int64_t now)
{
    int64_t id = resp ? etcd_num(resp, "ID", NULL) : 0;
    if (!resp)
        set_err(m, err);
    else if (!id)
        lab_err_set(&m->err, EIO, "etcd granted no lease");
    if (!id)
        return acquired(m, LOCK_ERROR); /* no lease to revoke */
    if (m->design->kind == ETCD_SM_LEASE) {
        m->op_lease = id;
        return call(m, ESM_TRY, ETCD_TXN, etcd_req_lease_try(m->ekey, m->value, id));
    }
    m->lease = id;
    m->lease_lost = false;
    ka_arm(m, id, now);
    return session_ready(m, now);
}

static enum etcd_sm_act lease_tried(struct etcd_sm *m, const json_t *resp, int64_t now)
{
    m->rev = etcd_num(resp, "header", "revision", NULL);
    if (!json_is_true(json_object_get(resp, "succeeded"))) {
        snprintf(m->wkey, sizeof m->wkey, "%s", m->ekey);
        return watch(m, now);
    }
    if (hold_push(m, m->rev) != 0)
        return lease_end(m, LOCK_ERROR);
    m->env->stats->lease_floor_ns = m->granted + ttl_ns(m);
    ka_arm(m, m->op_lease, now); /* with etcd_keepalive only */
    m->op_lease = 0;             /* the hold's now */
    return acquired(m, LOCK_GRANTED);
}

/* A release that could not be sent: the session ends with its keys. */
static enum etcd_sm_act drop(struct etcd_sm *m, const struct lab_err *err)
{
    set_err(m, err);
    ka_disarm(m);
    m->lease_lost = true;
    if (!m->lease)
        return released(m, RELEASE_ERROR);
    return call(m, ESM_DROP, ETCD_REVOKE, etcd_req_lease_id(m->lease));
}

static enum etcd_sm_act release_answered(struct etcd_sm *m, const json_t *resp,
                                         const struct lab_err *err)
{
    if (!resp && m->design->kind == ETCD_SM_LEASE) {
        set_err(m, err);
        return released(m, RELEASE_ERROR);
    }
    if (!resp)
        return drop(m, err);
    switch (m->design->kind) {
    case ETCD_SM_LEASE:
        return released(m, json_is_true(json_object_get(resp, "succeeded")) ? RELEASE_OK
                                                                            : RELEASE_NOT_OWNER);
    case ETCD_SM_MUTEX:
        return released(m, etcd_num(resp, "deleted", NULL) > 0 ? RELEASE_OK : RELEASE_NOT_OWNER);
    case ETCD_SM_LOCK_API:
        break;
    }
    return released(m, RELEASE_UNCHECKED); /* Unlock deletes whatever is there, and says nothing */
}

/* ------------------------------------------------------------ events */

enum etcd_sm_act etcd_sm_acquire(struct etcd_sm *m, const char *key, int64_t wait_ns,
                                 int64_t now)
{
    m->op = ESM_OP_ACQUIRE;
    m->key = key;
    m->deadline = now + wait_ns;
    m->renewed = false;
    m->canceled = false;
    m->value[0] = '\0';
    if (m->design->kind != ETCD_SM_LEASE)
        return session(m, now);
    snprintf(m->ekey, sizeof m->ekey, ETCD_KEY_PREFIX "%s", key);
    snprintf(m->value, sizeof m->value, "%s.%" PRIu64, m->ident, ++m->grants);
    m->op_lease = 0;
    return lease_top(m, now);
}

enum etcd_sm_act etcd_sm_release(struct etcd_sm *m, const char *key, int64_t now)
{
    (void)now;
    struct etcd_hold h;
    m->op = ESM_OP_RELEASE;
    m->key = key;
    if (m->design->kind == ETCD_SM_LEASE)
        ka_disarm(m);
    if (!hold_pop(m, key, &h))
        return released(m, RELEASE_NOT_OWNER);
    switch (m->design->kind) {
    case ETCD_SM_LEASE:
        return call(m, ESM_RELEASE, ETCD_TXN, etcd_req_lease_release(h.ekey, h.value));
    case ETCD_SM_MUTEX:
        return call(m, ESM_RELEASE, ETCD_DELETE, etcd_req_key(h.ekey));
    case ETCD_SM_LOCK_API:
        break;
    }
    return call(m, ESM_RELEASE, ETCD_UNLOCK, etcd_req_key(h.ekey));
}

enum etcd_sm_act etcd_sm_close(struct etcd_sm *m, int64_t now)
{
    (void)now;
    m->op = ESM_OP_CLOSE;
    ka_disarm(m);
    if (!etcd_sm_has_session(m) || !m->lease)
        return done(m);
    int64_t id = m->lease; /* Session.Close: its keys go with it */
    m->lease = 0;
    m->lease_lost = true;
    return call(m, ESM_CLOSE, ETCD_REVOKE, etcd_req_lease_id(id));
}

enum etcd_sm_act etcd_sm_reply(struct etcd_sm *m, const json_t *resp, const struct lab_err *err,
                               int64_t now)
{
    bool ok = resp != NULL;
    switch (m->step) {
    case ESM_IDLE:
    case ESM_WATCH:
    case ESM_PAUSE:
    case ESM_LOCK:
        break; /* no call of ours in flight: nothing it could answer */
    case ESM_GRANT:
        return lease_granted(m, resp, err, now);
    case ESM_REVOKE_STALE:
        return lease_top(m, now);
    case ESM_TRY:
        return ok ? lease_tried(m, resp, now) : failed(m, err);
    case ESM_ENTER:
        if (!ok)
            return session_step_failed(m, err, now);
        if (etcd_ans_mutex_enter(resp, &m->my_rev))
            return granted(m, m->my_rev);
        return call(m, ESM_LOWER, ETCD_RANGE, etcd_req_mutex_lower(m->pfx, m->my_rev));
    case ESM_LOWER:
        if (!ok)
            return failed(m, err);
        if (etcd_ans_mutex_lower(resp, m->wkey, &m->rev))
            return watch(m, now);
        /* none left before ours: our own key must still be there */
        return call(m, ESM_OWN, ETCD_RANGE, etcd_req_key(m->ekey));
    case ESM_OWN:
        if (!ok)
            return failed(m, err);
        if (etcd_first_kv(resp))
            return granted(m, m->my_rev);
        lab_err_set(&m->err, EIO, "etcd session expired while waiting for %s", m->key);
        m->lease_lost = true;
        return acquired(m, LOCK_ERROR);
    case ESM_GIVE_UP:
        return acquired(m, LOCK_TIMEOUT);
    case ESM_TOKEN: {
        int64_t rev = ok ? etcd_num(etcd_first_kv(resp), "create_revision", NULL) : 0;
        if (!ok)
            set_err(m, err);
        else if (rev <= 0) /* deleted since the answer: not ours to hold */
            lab_err_set(&m->err, EIO,
                        "etcd Lock: the owner key was gone before its token was read");
        return rev > 0 ? granted(m, rev) : acquired(m, LOCK_ERROR);
    }
    case ESM_END_REVOKE:
        return acquired(m, (enum lock_status)m->outcome);
    case ESM_RELEASE:
        return release_answered(m, resp, err);
    case ESM_DROP:
        return released(m, RELEASE_ERROR);
    case ESM_CLOSE:
        return done(m);
    }
    return ETCD_SM_IGNORED;
}

int etcd_sm_msg(struct etcd_sm *m, const json_t *msg, struct lab_err *err)
{
    if (m->step == ESM_WATCH) {
        int r = etcd_ans_watch(msg, &m->canceled, err);
        if (r == 1)
            m->env->stats->notifications++;
        return r;
    }
    if (m->step == ESM_LOCK)
        return etcd_ans_lock(msg, m->ekey, err);
    return 0;
}

enum etcd_sm_act etcd_sm_stream_end(struct etcd_sm *m, int r, const struct lab_err *err,
                                    int64_t now)
{
    if (m->step == ESM_LOCK) {
        if (r == 0)
            return acquired(m, LOCK_TIMEOUT);
        if (r < 0)
            return session_step_failed(m, err, now);
        if (m->env->fencing) /* the Lock answer's revision is not the key's */
            return call(m, ESM_TOKEN, ETCD_RANGE, etcd_req_key(m->ekey));
        return granted(m, 0);
    }
    if (m->step != ESM_WATCH)
        return ETCD_SM_IGNORED; /* no stream of ours: a late end */
    if (r == 1) {
        if (m->design->kind == ETCD_SM_LEASE)
            return lease_top(m, now);
        return call(m, ESM_LOWER, ETCD_RANGE, etcd_req_mutex_lower(m->pfx, m->my_rev));
    }
    if (r == 0)
        return timed_out(m);
    if (m->canceled || now >= m->deadline)
        return failed(m, err);
    /* the member went away under the watch: the next one, from the same
     * revision, after a pause */
    m->step = ESM_PAUSE;
    m->wake_at = now + ETCD_REWATCH_NS;
    m->next_member = true;
    return ETCD_SM_SLEEP;
}

enum etcd_sm_act etcd_sm_timer(struct etcd_sm *m, int64_t now)
{
    if (m->step != ESM_PAUSE)
        return ETCD_SM_IGNORED; /* no pause of ours */
    m->next_member = false;
    return watch(m, now);
}
