/*
 * zk_machine.c - the ZooKeeper designs' state machine (zk_machine.h):
 * the session wait, the persistent parents, zk-sequential's queue (our
 * ephemeral-sequential node, list, watch the predecessor with getData),
 * zk-ephemeral's one node (create, exists-watch it when taken),
 * zk-semaphore's lease under its internal mutex, the release (delete, and
 * after a connection loss find out whether it went through), and the
 * give-ups that take their node with them through a lost connection, so
 * that none outlives its attempt. No I/O, no clock.
 */
#include "zk_machine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define SEQ_DIGITS 10          /* ZooKeeper's sequence suffix: %010d */
#define QUEUE_PREFIX "lock-"   /* the queue's nodes */
#define LEASE_PREFIX "lease-"  /* zk-semaphore's lease nodes */
#define EPH_NODE "lock"        /* zk-ephemeral's node under the parent */
#define SEM_LOCKS "locks"      /* zk-semaphore's internal mutex */
#define SEM_LEASES "leases"    /* zk-semaphore's leases */
#define SEM_MAX_LEASES 1

/* dir/name into out (n bytes); false, out empty, when it does not fit
 * (the designs' paths are built within their buffers from a key of at
 * most ZK_KEY_MAX, so ZooKeeper would refuse an empty path loudly). */
static bool join(char *out, size_t n, const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    if (a + 1 + b >= n) {
        out[0] = '\0';
        return false;
    }
    memmove(out, dir, a);
    out[a] = '/';
    memcpy(out + a + 1, name, b + 1);
    return true;
}

static const char *const sem_dirs[] = {SEM_LOCKS, SEM_LEASES, NULL};

enum step {
    ZSM_IDLE,
    ZSM_SESSION, /* a session wait; then m->resume */
    ZSM_OPEN,    /* open: the first session */
    ZSM_ROOT,    /* create ZK_ROOT, then the parent, then the subdirectories */
    ZSM_PARENT,
    ZSM_SUBDIR,
    ZSM_AGAIN,   /* after a failed create: the next turn of the enter loop */
    ZSM_FIND,    /* list, to find our node whose create's reply was lost */
    ZSM_CREATE,  /* our ephemeral-sequential node */
    ZSM_LIST,    /* list the queue */
    ZSM_WATCH,   /* read the predecessor with a watch */
    ZSM_WAIT,    /* until an event or the deadline */
    ZSM_QUEUE_BACK,
    ZSM_ECREATE, /* zk-ephemeral: create the node */
    ZSM_EWATCH,  /* zk-ephemeral: exists-watch it */
    ZSM_EWAIT,
    ZSM_LEASES,  /* zk-semaphore: list leases/ with a watch */
    ZSM_LWAIT,
    ZSM_LEASE_BACK,
    ZSM_UNWATCH,
    ZSM_LEAVE,   /* a give-up: delete our node */
    ZSM_CLEAN_FIND,   /* a give-up: list, to find the node a lost create made */
    ZSM_CLEAN_EXISTS, /* a give-up: is zk-ephemeral's node our session's? */
    ZSM_CLEAN_BACK,   /* a give-up: the same session is back (or not) */
    ZSM_DELETE,  /* delete a node we hold */
    ZSM_DEL_BACK,
    ZSM_EXISTS   /* is it still our session's? */
};

/* ------------------------------------------------------------ helpers */

static bool transient(int rc)
{
    return rc == ZK_CONNECTIONLOSS || rc == ZK_OPERATIONTIMEOUT || rc == ZK_SESSIONMOVED;
}

static bool gone(int rc)
{
    return rc == ZK_SESSIONEXPIRED || rc == ZK_INVALIDSTATE || rc == ZK_AUTHFAILED;
}

static const char *code_text(int rc)
{
    switch (rc) {
    case ZK_CONNECTIONLOSS: return "connection loss";
    case ZK_OPERATIONTIMEOUT: return "operation timeout";
    case ZK_BADARGUMENTS: return "bad arguments";
    case ZK_INVALIDSTATE: return "invalid zhandle state";
    case ZK_NONODE: return "no node";
    case ZK_NODEEXISTS: return "node exists";
    case ZK_SESSIONEXPIRED: return "session expired";
    case ZK_AUTHFAILED: return "authentication failed";
    case ZK_SESSIONMOVED: return "session moved";
    default: return "error";
    }
}

static void fail(struct zk_sm *m, int rc, const char *what, const char *path)
{
    lab_err_set(&m->err, rc, "zookeeper %s %s: %s (%d)", what, path, code_text(rc), rc);
}

static bool stopped(const struct zk_sm *m, int64_t now)
{
    return now >= m->deadline || *m->env->stop;
}

/* Close the session: every ephemeral node of it goes. */
static void drop(struct zk_sm *m)
{
    m->drop = true;
    m->gen++;
    m->session_id = 0;
    m->parent_key[0] = '\0';
}

static enum zk_sm_act send(struct zk_sm *m, int step, enum zk_sm_req req, const char *path)
{
    m->step = step;
    m->req = req;
    m->want_stat = req == ZK_REQ_CREATE_EPH && m->env->fencing;
    m->inflight = true;
    if (req == ZK_REQ_GET_WATCH || req == ZK_REQ_EXISTS_WATCH || req == ZK_REQ_CHILDREN_WATCH)
        m->seen = m->wakes;
    size_t n = strnlen(path, sizeof m->path - 1); /* (the paths are built within it) */
    memcpy(m->path, path, n);
    m->path[n] = '\0';
    return ZK_SM_SEND;
}

static enum zk_sm_act done(struct zk_sm *m)
{
    m->step = ZSM_IDLE;
    m->op = ZSM_OP_NONE;
    return ZK_SM_DONE;
}

/* Wait for a connected session (same: the session of my_gen only), then
 * go on with next, m->ready set. */
static enum zk_sm_act session_then(struct zk_sm *m, int next, bool same, int64_t now);
static enum zk_sm_act resume(struct zk_sm *m, int64_t now);

static enum zk_sm_act session_then(struct zk_sm *m, int next, bool same, int64_t now)
{
    m->resume = next;
    m->same = same;
    if (same && m->gen != m->my_gen) {
        lab_err_set(&m->err, ZK_SESSIONEXPIRED,
                    "zookeeper: the session expired while disconnected; its nodes are gone");
        m->ready = -1;
        return resume(m, now);
    }
    m->step = ZSM_SESSION;
    return ZK_SM_SESSION;
}

int zk_sm_session_ms(const struct lock_env *env)
{
    int64_t ms = env->servers->session_timeout_ns / 1000000;
    if (ms <= 0)
        return 10000;
    return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

/* Sequence number of a queue node ("lock-...-0000000042"), or -1. */
static long queue_seq(const char *name)
{
    size_t n = strlen(name), p = sizeof QUEUE_PREFIX - 1;
    if (n < p + SEQ_DIGITS + 1 || strncmp(name, QUEUE_PREFIX, p) != 0 ||
        name[n - SEQ_DIGITS - 1] != '-')
        return -1;
    long v = 0;
    for (const char *s = name + n - SEQ_DIGITS; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

int64_t zk_sm_sequence_of(const char *path)
{
    size_t n = strlen(path);
    if (n < SEQ_DIGITS)
        return 0;
    int64_t v = 0;
    for (const char *p = path + n - SEQ_DIGITS; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (*p - '0');
    }
    return v + 1;
}

/* Our node's name (its last component). */
static const char *base_of(const struct zk_sm *m) { return m->mine + strlen(m->dir) + 1; }

static void hold_push(struct zk_sm *m, const char *path, int64_t token)
{
    struct zk_sm_hold *h = &m->held[m->n_held++];
    snprintf(h->key, sizeof h->key, "%s", m->key);
    snprintf(h->path, sizeof h->path, "%s", path);
    h->gen = m->gen;
    h->count = 1;
    if (m->env->fencing)
        m->env->stats->fence_token = token;
}

static int hold_index(const struct zk_sm *m, const char *key)
{
    for (int i = m->n_held - 1; i >= 0; i--)
        if (strcmp(m->held[i].key, key) == 0)
            return i;
    return -1;
}

/* ------------------------------------------------------------ the delete */

static enum zk_sm_act deleted(struct zk_sm *m, enum release_status rs, int64_t now);

/* Delete our node path of session gen: through connection losses for two
 * session timeouts, deleting again only a node still our session's. */
static enum zk_sm_act delete_start(struct zk_sm *m, const char *path, uint64_t gen, int64_t now)
{
    if (gen != m->gen)
        return deleted(m, RELEASE_NOT_OWNER, now); /* its session is gone, and the node */
    snprintf(m->mine, sizeof m->mine, "%s", path);
    m->my_gen = gen;
    m->retried = false;
    m->deadline = now + 2 * (int64_t)zk_sm_session_ms(m->env) * 1000000;
    return send(m, ZSM_DELETE, ZK_REQ_DELETE, m->mine);
}

static enum zk_sm_act on_delete(struct zk_sm *m, const struct zk_sm_reply *r, int64_t now)
{
    if (m->step == ZSM_EXISTS) {
        if (r->rc == ZK_NONODE || (r->rc == ZK_OK && r->owner != m->session_id))
            return deleted(m, RELEASE_OK, now); /* our delete went through */
        return send(m, ZSM_DELETE, ZK_REQ_DELETE, m->mine);
    }
    int rc = m->last_rc = r->rc;
    if (rc == ZK_OK)
        return deleted(m, RELEASE_OK, now);
    if (rc == ZK_NONODE) /* after a lost reply: our own delete went through */
        return deleted(m, m->retried ? RELEASE_OK : RELEASE_NOT_OWNER, now);
    if (gone(rc)) {
        drop(m);
        return deleted(m, RELEASE_NOT_OWNER, now); /* the lock went with the session */
    }
    if (!transient(rc)) {
        fail(m, rc, "delete", m->mine);
        return deleted(m, RELEASE_ERROR, now);
    }
    return session_then(m, ZSM_DEL_BACK, true, now);
}

static enum zk_sm_act del_back(struct zk_sm *m, int64_t now)
{
    if (m->ready < 0 && m->gen != m->my_gen)
        return deleted(m, RELEASE_NOT_OWNER, now);
    if (m->ready <= 0) {
        if (m->ready == 0 && *m->env->stop) /* cut short, not failed */
            lab_err_set(&m->err, ECANCELED,
                        "zookeeper: the run stopped before the delete of %s got through",
                        m->mine);
        else
            fail(m, m->last_rc, "delete", m->mine);
        drop(m); /* the node must not outlive us */
        return deleted(m, RELEASE_ERROR, now);
    }
    m->retried = true;
    return send(m, ZSM_EXISTS, ZK_REQ_EXISTS, m->mine);
}

/* ------------------------------------------------------------ the acquire's ends */

/* What a give-up has to take with it (m->clean): our node, the node a
 * create of unknown outcome may have made (found by its unique name), or
 * zk-ephemeral's node if our session owns it. */
enum { CLEAN_DELETE, CLEAN_FIND, CLEAN_EXISTS };

static enum zk_sm_act unwatch_leases(struct zk_sm *m);
static enum zk_sm_act clean_up(struct zk_sm *m, int what, enum lock_status st, int64_t now);

/* The acquire ends with st; zk-semaphore's lease phase first deletes its
 * internal mutex. */
static enum zk_sm_act finish(struct zk_sm *m, enum lock_status st, int64_t now)
{
    if (m->phase == ZSM_LEASE) {
        m->st = st;
        m->phase = ZSM_UNLOCK;
        m->acq_err = m->err; /* the outcome's, whatever the delete says */
        snprintf(m->lease, sizeof m->lease, "%s", m->mine);
        return delete_start(m, m->lock, m->lock_gen, now);
    }
    /* zk-ephemeral giving up right after a create whose outcome is unknown:
     * the node may exist, held by nobody (unless we hold it already) */
    if (m->phase == ZSM_EPHEMERAL && st != LOCK_GRANTED && m->maybe_created && !m->nested)
        return clean_up(m, CLEAN_EXISTS, st, now);
    m->status = st;
    return done(m);
}

/* zk-semaphore: the internal mutex is deleted (or gone). */
static enum zk_sm_act unlocked(struct zk_sm *m)
{
    m->phase = ZSM_QUEUE;
    m->err = m->acq_err;
    if (m->st != LOCK_GRANTED) {
        m->status = m->st;
        return done(m);
    }
    if (m->gen != m->lock_gen) { /* the session ended: our lease went with it */
        lab_err_set(&m->err, ZK_SESSIONEXPIRED,
                    "zookeeper: the session ended while taking a lease");
        m->status = LOCK_ERROR;
        return done(m);
    }
    hold_push(m, m->lease, zk_sm_sequence_of(m->lease));
    m->status = LOCK_GRANTED;
    return done(m);
}

static enum zk_sm_act deleted(struct zk_sm *m, enum release_status rs, int64_t now)
{
    (void)now;
    if (m->op == ZSM_OP_ACQUIRE)
        return unlocked(m);
    m->release = rs;
    return done(m);
}

/* ------------------------------------------------------------ the give-ups */

/* Our node among the listed children r (the attempt's unique name, as
 * Curator's protected mode finds a create whose reply was lost): into
 * m->mine, true; false when it is not there. */
static bool find_ours(struct zk_sm *m, const struct zk_sm_reply *r)
{
    for (int i = 0; i < r->n; i++)
        if (strncmp(r->names[i], m->name, strlen(m->name)) == 0) {
            (void)join(m->mine, sizeof m->mine, m->dir, r->names[i]);
            return true;
        }
    return false;
}

/* The give-up's node is gone (or its session is): end with m->st, the
 * error of the give-up itself kept. */
static enum zk_sm_act cleaned(struct zk_sm *m, int64_t now)
{
    m->err = m->clean_err;
    return m->watching ? unwatch_leases(m) : finish(m, m->st, now);
}

static enum zk_sm_act clean_send(struct zk_sm *m)
{
    char path[ZK_NODE_MAX];
    switch (m->clean) {
    case CLEAN_FIND:
        return send(m, ZSM_CLEAN_FIND, ZK_REQ_CHILDREN, m->dir);
    case CLEAN_EXISTS:
        (void)join(path, sizeof path, m->dir, EPH_NODE);
        return send(m, ZSM_CLEAN_EXISTS, ZK_REQ_EXISTS, path);
    default:
        return send(m, ZSM_LEAVE, ZK_REQ_DELETE, m->mine);
    }
}

/* Curator's guaranteed delete: a give-up takes with it our node (what),
 * through a lost connection: it waits for the same session, up to one
 * session timeout, and deletes then. A session that is not back by then
 * has expired on the server, its nodes with it, and is closed. Closing
 * it at once instead cannot reach an unreachable server: a waiter's node
 * then heads the queue until the session expires, and every client
 * waits a session timeout for a lock nobody holds. */
static enum zk_sm_act clean_up(struct zk_sm *m, int what, enum lock_status st, int64_t now)
{
    m->st = st;
    m->clean_err = m->err;
    m->unknown = m->maybe_created = false;
    if (m->gen != m->my_gen)
        return cleaned(m, now); /* its session is gone, and the node */
    m->clean = what;
    m->deadline = now + (int64_t)zk_sm_session_ms(m->env) * 1000000;
    return clean_send(m);
}

/* Delete our node after a give-up, then end with st. */
static enum zk_sm_act leave(struct zk_sm *m, enum lock_status st, int64_t now)
{
    return clean_up(m, CLEAN_DELETE, st, now);
}

/* A give-up's request answered rc: the next step of the clean-up. */
static enum zk_sm_act on_clean(struct zk_sm *m, const struct zk_sm_reply *r, int64_t now)
{
    int rc = r->rc;
    if (transient(rc))
        return session_then(m, ZSM_CLEAN_BACK, true, now);
    if (rc == ZK_OK && m->step == ZSM_CLEAN_FIND) {
        if (!find_ours(m, r))
            return cleaned(m, now);
        m->clean = CLEAN_DELETE; /* the lost create made it */
        return clean_send(m);
    }
    if (rc == ZK_OK && m->step == ZSM_CLEAN_EXISTS) {
        if (!m->session_id || r->owner != m->session_id)
            return cleaned(m, now); /* somebody else's */
        /* m->clean stays CLEAN_EXISTS: after a lost reply the node is asked
         * for again, since another client may have made it anew since our
         * delete went through (its name is not ours alone) */
        (void)join(m->mine, sizeof m->mine, m->dir, EPH_NODE);
        return send(m, ZSM_LEAVE, ZK_REQ_DELETE, m->mine);
    }
    if (rc != ZK_OK && rc != ZK_NONODE)
        drop(m); /* gone with its session, or it must go with it */
    return cleaned(m, now);
}

static enum zk_sm_act unwatch_leases(struct zk_sm *m)
{
    m->watching = false;
    char dir[ZK_NODE_MAX];
    memcpy(dir, m->dir, sizeof dir);
    return send(m, ZSM_UNWATCH, ZK_REQ_UNWATCH_CHILDREN, dir);
}

/* ------------------------------------------------------------ the enter loop */

/* The top of the enter loop: the deadline, then a prepared session. */
static enum zk_sm_act enter_turn(struct zk_sm *m, int64_t now)
{
    if (!m->first && stopped(m, now)) {
        if (m->unknown) /* it may exist: it must not outlive the attempt */
            return clean_up(m, CLEAN_FIND, LOCK_TIMEOUT, now);
        return finish(m, LOCK_TIMEOUT, now);
    }
    m->first = false;
    return session_then(m, ZSM_ROOT, false, now);
}

/* The parents could not be made: give up (ready 0: timeout). */
static enum zk_sm_act prep_fail(struct zk_sm *m, enum lock_status st, int64_t now)
{
    if (m->unknown)
        return clean_up(m, CLEAN_FIND, st, now);
    return finish(m, st, now);
}

/* Start an attempt in phase ph: its unique name, then the enter loop. */
static enum zk_sm_act attempt(struct zk_sm *m, enum zk_sm_phase ph, int64_t now)
{
    m->phase = ph;
    m->unknown = m->maybe_created = false;
    m->first = true;
    snprintf(m->name, sizeof m->name, "%s%s-%llu-", ph == ZSM_LEASE ? LEASE_PREFIX : QUEUE_PREFIX,
             m->id, (unsigned long long)++m->creates);
    return enter_turn(m, now);
}

/* Prepared: create our node (or find our lost create). */
static enum zk_sm_act create(struct zk_sm *m)
{
    char path[ZK_PATH_MAX + 100];
    const char *sub = m->phase == ZSM_LEASE ? SEM_LEASES
                      : m->design->kind == ZK_SM_SEMAPHORE ? SEM_LOCKS : NULL;
    snprintf(m->dir, sizeof m->dir, "%s%s%s", m->parent, sub ? "/" : "", sub ? sub : "");
    m->my_gen = m->gen;
    if (m->phase == ZSM_EPHEMERAL) { /* a nested acquire: its own node is in the way */
        int i = hold_index(m, m->key);
        m->nested = i >= 0 && m->held[i].gen == m->gen;
        (void)join(path, sizeof path, m->dir, EPH_NODE);
        return send(m, ZSM_ECREATE, ZK_REQ_CREATE_EPH, path);
    }
    if (m->unknown)
        return send(m, ZSM_FIND, ZK_REQ_CHILDREN, m->dir);
    (void)join(path, sizeof path, m->dir, m->name);
    return send(m, ZSM_CREATE, ZK_REQ_CREATE_SEQ, path);
}

/* A create (or the search for it) failed with rc. */
static enum zk_sm_act create_failed(struct zk_sm *m, int rc, const char *path, int64_t now)
{
    if (!transient(rc) && !gone(rc)) {
        fail(m, rc, "create", path);
        return finish(m, LOCK_ERROR, now);
    }
    /* The session may still be there (and the create applied: the next
     * turn finds it), or it is gone and the next turn opens a new one. */
    return session_then(m, ZSM_AGAIN, false, now);
}

static enum zk_sm_act list_queue(struct zk_sm *m)
{
    return send(m, ZSM_LIST, ZK_REQ_CHILDREN, m->dir);
}

static enum zk_sm_act list_leases(struct zk_sm *m)
{
    m->watching = true;
    return send(m, ZSM_LEASES, ZK_REQ_CHILDREN_WATCH, m->dir);
}

/* Our node exists (m->mine, in session my_gen). */
static enum zk_sm_act created(struct zk_sm *m, int64_t now)
{
    if (m->phase != ZSM_LEASE)
        return list_queue(m);
    if (m->gen != m->lock_gen) { /* the internal mutex went with the old session */
        lab_err_set(&m->err, ZK_SESSIONEXPIRED,
                    "zookeeper: the session expired while holding " SEM_LOCKS);
        return leave(m, LOCK_ERROR, now);
    }
    return list_leases(m);
}

/* A failure while queued or leased: rc of the queue's or leases' request. */
static enum zk_sm_act wait_error(struct zk_sm *m, int rc, int back, int64_t now)
{
    const char *what = m->phase == ZSM_LEASE ? "leases" : "queue";
    if (gone(rc)) {
        drop(m);
        fail(m, rc, what, base_of(m));
        return finish(m, LOCK_ERROR, now);
    }
    if (!transient(rc)) {
        fail(m, rc, what, base_of(m));
        return leave(m, LOCK_ERROR, now);
    }
    return session_then(m, back, true, now);
}

/* Where our node stands in the queue: 1 lowest, 0 not (pred set), -1 gone. */
static int position(const struct zk_sm_reply *r, const char *mine, char *pred, size_t len)
{
    long my = queue_seq(mine), best = -1;
    const char *best_name = NULL;
    bool found = false;
    for (int i = 0; i < r->n; i++) {
        const char *name = r->names[i];
        if (strcmp(name, mine) == 0) {
            found = true;
            continue;
        }
        long s = queue_seq(name);
        if (s >= 0 && s < my && s > best) {
            best = s;
            best_name = name;
        }
    }
    if (!found || my < 0)
        return -1;
    if (!best_name)
        return 1;
    snprintf(pred, len, "%s", best_name);
    return 0;
}

/* The queue's lowest node is ours. */
static enum zk_sm_act queue_granted(struct zk_sm *m, int64_t now)
{
    if (m->design->kind == ZK_SM_SEMAPHORE) {
        snprintf(m->lock, sizeof m->lock, "%s", m->mine);
        m->lock_gen = m->my_gen;
        return attempt(m, ZSM_LEASE, now);
    }
    hold_push(m, m->mine, zk_sm_sequence_of(m->mine));
    m->status = LOCK_GRANTED;
    return done(m);
}

/* ------------------------------------------------------------ replies */

static enum zk_sm_act on_prepare(struct zk_sm *m, int rc, int64_t now)
{
    if (rc != ZK_OK && rc != ZK_NODEEXISTS) {
        if (!transient(rc) && !gone(rc)) {
            fail(m, rc, "create", m->path);
            return prep_fail(m, LOCK_ERROR, now);
        }
        return session_then(m, m->step, false, now); /* any session will do: the same node */
    }
    const char *const *subs = m->design->kind == ZK_SM_SEMAPHORE ? sem_dirs : NULL;
    char path[ZK_PATH_MAX + 100];
    if (m->step == ZSM_ROOT) {
        (void)join(path, sizeof path, ZK_ROOT, m->key);
        return send(m, ZSM_PARENT, ZK_REQ_CREATE, path);
    }
    m->sub_i = m->step == ZSM_PARENT ? 0 : m->sub_i + 1;
    (void)join(m->parent, sizeof m->parent, ZK_ROOT, m->key);
    if (subs && subs[m->sub_i]) {
        (void)join(path, sizeof path, m->parent, subs[m->sub_i]);
        return send(m, ZSM_SUBDIR, ZK_REQ_CREATE, path);
    }
    snprintf(m->parent_key, sizeof m->parent_key, "%s", m->key);
    return create(m);
}

static enum zk_sm_act on_reply(struct zk_sm *m, const struct zk_sm_reply *r, int64_t now)
{
    int rc = r->rc;
    char path[2 * ZK_PATH_MAX];
    switch (m->step) {
    case ZSM_ROOT:
    case ZSM_PARENT:
    case ZSM_SUBDIR:
        return on_prepare(m, rc, now);
    case ZSM_FIND:
        if (rc == ZK_OK) {
            if (find_ours(m, r))
                return created(m, now);
            m->unknown = false; /* it never happened: create again */
            return create(m);
        }
        (void)join(path, sizeof path, m->dir, m->name);
        return create_failed(m, rc, path, now);
    case ZSM_CREATE:
        if (rc == ZK_OK) {
            snprintf(m->mine, sizeof m->mine, "%s", r->path);
            return created(m, now);
        }
        if (rc == ZK_NONODE) { /* someone removed the parent: make it again */
            m->parent_key[0] = '\0';
            return enter_turn(m, now);
        }
        if (transient(rc))
            m->unknown = true;
        (void)join(path, sizeof path, m->dir, m->name);
        return create_failed(m, rc, path, now);
    case ZSM_LIST: {
        if (rc != ZK_OK)
            return wait_error(m, rc, ZSM_QUEUE_BACK, now);
        char pred[ZK_PATH_MAX];
        int pos = position(r, base_of(m), pred, sizeof pred);
        if (pos > 0)
            return queue_granted(m, now);
        if (pos < 0) {
            lab_err_set(&m->err, ZK_NONODE, "zookeeper: our node %s vanished while queued",
                        base_of(m));
            return finish(m, LOCK_ERROR, now);
        }
        if (stopped(m, now))
            return leave(m, LOCK_TIMEOUT, now);
        (void)join(path, sizeof path, m->dir, pred);
        return send(m, ZSM_WATCH, ZK_REQ_GET_WATCH, path);
    }
    case ZSM_WATCH:
        if (rc == ZK_NONODE || (rc == ZK_OK && m->wakes != m->seen))
            return list_queue(m); /* gone already, or an event came meanwhile */
        if (rc == ZK_OK) {
            m->step = ZSM_WAIT;
            return ZK_SM_WAIT;
        }
        return wait_error(m, rc, ZSM_QUEUE_BACK, now);
    case ZSM_ECREATE:
        (void)join(path, sizeof path, m->dir, EPH_NODE);
        m->maybe_created = transient(rc);
        if (rc == ZK_OK) {
            hold_push(m, path, r->czxid);
            return finish(m, LOCK_GRANTED, now);
        }
        if (rc == ZK_NODEEXISTS)
            return send(m, ZSM_EWATCH, ZK_REQ_EXISTS_WATCH, path);
        return create_failed(m, rc, path, now);
    case ZSM_EWATCH:
        if (rc == ZK_OK && !m->nested && m->session_id && r->owner == m->session_id) {
            hold_push(m, m->path, r->czxid); /* our own create, whose reply was lost */
            return finish(m, LOCK_GRANTED, now);
        }
        if (rc == ZK_NONODE || (rc == ZK_OK && m->wakes != m->seen))
            return enter_turn(m, now); /* deleted meanwhile, or an event came: again */
        if (rc == ZK_OK) {
            m->step = ZSM_EWAIT;
            return ZK_SM_WAIT;
        }
        return create_failed(m, rc, m->path, now);
    case ZSM_LEASES: {
        if (rc != ZK_OK)
            return wait_error(m, rc, ZSM_LEASE_BACK, now);
        bool listed = false;
        for (int i = 0; i < r->n && !listed; i++)
            listed = strcmp(r->names[i], base_of(m)) == 0;
        if (!listed) {
            lab_err_set(&m->err, ZK_NONODE, "zookeeper: our lease %s vanished", base_of(m));
            return leave(m, LOCK_ERROR, now);
        }
        if (r->n <= SEM_MAX_LEASES) {
            m->st = LOCK_GRANTED;
            return unwatch_leases(m);
        }
        if (stopped(m, now))
            return leave(m, LOCK_TIMEOUT, now);
        if (m->wakes != m->seen)
            return list_leases(m);
        m->step = ZSM_LWAIT;
        return ZK_SM_WAIT;
    }
    case ZSM_UNWATCH:
        return finish(m, m->st, now);
    case ZSM_LEAVE:
    case ZSM_CLEAN_FIND:
    case ZSM_CLEAN_EXISTS:
        return on_clean(m, r, now);
    case ZSM_DELETE:
    case ZSM_EXISTS:
        return on_delete(m, r, now);
    default:
        return ZK_SM_IGNORED;
    }
}

enum zk_sm_act zk_sm_reply(struct zk_sm *m, const struct zk_sm_reply *r, int64_t now)
{
    if (!m->inflight)
        return ZK_SM_IGNORED; /* a late reply: nothing of ours awaits it */
    m->inflight = false;
    return on_reply(m, r, now);
}

/* ------------------------------------------------------------ after a session wait */

static enum zk_sm_act resume(struct zk_sm *m, int64_t now)
{
    int next = m->resume;
    m->step = ZSM_IDLE;
    switch (next) {
    case ZSM_OPEN:
        if (m->ready == 0)
            lab_err_set(&m->err, ETIMEDOUT, "zookeeper: no session with %s within %lld s",
                        m->env->servers->conn, ZK_CONNECT_NS / 1000000000);
        m->open_rc = m->ready > 0 ? 0 : -1;
        return done(m);
    case ZSM_ROOT: {
        if (m->ready <= 0)
            return prep_fail(m, m->ready == 0 ? LOCK_TIMEOUT : LOCK_ERROR, now);
        if (m->parent_key[0] && strcmp(m->parent_key, m->key) == 0)
            return create(m);
        size_t n = strlen(m->key);
        if (n == 0 || n >= ZK_KEY_MAX || strchr(m->key, '/') || strcmp(m->key, ".") == 0 ||
            strcmp(m->key, "..") == 0) {
            lab_err_set(&m->err, EINVAL, "zookeeper: lock key '%.60s' is not a valid node name",
                        m->key);
            return prep_fail(m, LOCK_ERROR, now);
        }
        return send(m, ZSM_ROOT, ZK_REQ_CREATE, ZK_ROOT);
    }
    case ZSM_PARENT:
    case ZSM_SUBDIR: {
        if (m->ready <= 0)
            return prep_fail(m, m->ready == 0 ? LOCK_TIMEOUT : LOCK_ERROR, now);
        char path[sizeof m->path];
        snprintf(path, sizeof path, "%s", m->path);
        return send(m, next, ZK_REQ_CREATE, path);
    }
    case ZSM_AGAIN:
        if (m->phase == ZSM_EPHEMERAL && m->ready <= 0)
            return finish(m, m->ready == 0 ? LOCK_TIMEOUT : LOCK_ERROR, now);
        if (m->ready < 0) {
            drop(m);
            return finish(m, LOCK_ERROR, now);
        }
        if (m->gen != m->my_gen)
            m->unknown = false; /* whatever it created went with the old session */
        return enter_turn(m, now);
    case ZSM_QUEUE_BACK:
    case ZSM_LEASE_BACK:
        if (m->ready < 0)
            return finish(m, LOCK_ERROR, now);
        if (m->ready == 0)
            return leave(m, LOCK_TIMEOUT, now);
        return next == ZSM_QUEUE_BACK ? list_queue(m) : list_leases(m);
    case ZSM_DEL_BACK:
        return del_back(m, now);
    case ZSM_CLEAN_BACK:
        if (m->ready > 0)
            return clean_send(m);
        if (m->ready == 0)
            drop(m); /* not back within its timeout (or the run stops): expired */
        return cleaned(m, now);
    default:
        return ZK_SM_IGNORED;
    }
}

enum zk_sm_act zk_sm_session(struct zk_sm *m, enum zk_sm_state st, int64_t id,
                             const struct lab_err *err, int64_t now)
{
    if (m->step != ZSM_SESSION)
        return ZK_SM_IGNORED;
    switch (st) {
    case ZK_SM_CONNECTED:
        m->session_id = id;
        m->ready = 1;
        break;
    case ZK_SM_EXPIRED:
        drop(m); /* its nodes are gone */
        if (!m->same)
            return ZK_SM_SESSION; /* a new one */
        return session_then(m, m->resume, true, now); /* not ours any more: -1 */
    case ZK_SM_NOT_YET:
        lab_err_set(&m->err, ETIMEDOUT, "zookeeper: not connected to %s",
                    m->env->servers->conn);
        m->ready = 0;
        break;
    case ZK_SM_FAILED:
        if (err)
            m->err = *err;
        m->ready = -1;
        break;
    }
    return resume(m, now);
}

/* ------------------------------------------------------------ waits */

enum zk_sm_act zk_sm_event(struct zk_sm *m, int64_t now)
{
    m->wakes++;
    switch (m->step) {
    case ZSM_WAIT:
        return list_queue(m); /* whatever woke us: list again */
    case ZSM_EWAIT:
        return enter_turn(m, now); /* whatever woke us: try to create again */
    case ZSM_LWAIT:
        return list_leases(m);
    default:
        return ZK_SM_IGNORED;
    }
}

enum zk_sm_act zk_sm_timer(struct zk_sm *m, int64_t now)
{
    switch (m->step) {
    case ZSM_WAIT:
    case ZSM_LWAIT:
        return leave(m, LOCK_TIMEOUT, now); /* the deadline, or the run stops */
    case ZSM_EWAIT:
        return finish(m, LOCK_TIMEOUT, now);
    default:
        return ZK_SM_IGNORED;
    }
}

/* ------------------------------------------------------------ operations */

void zk_sm_init(struct zk_sm *m, const struct zk_sm_design *d, const struct lock_env *env,
                const char *id)
{
    memset(m, 0, sizeof *m);
    m->design = d;
    m->env = env;
    snprintf(m->id, sizeof m->id, "%s", id);
    const struct zk_options *o = env->options;
    m->abort_on_disconnect = o && o->on_disconnect == ZK_DISCONNECT_ABORT;
}

enum zk_sm_act zk_sm_open(struct zk_sm *m, int64_t now)
{
    m->op = ZSM_OP_OPEN;
    m->deadline = now + ZK_CONNECT_NS;
    return session_then(m, ZSM_OPEN, false, now);
}

enum zk_sm_act zk_sm_acquire(struct zk_sm *m, const char *key, int64_t wait_ns, int64_t now)
{
    m->op = ZSM_OP_ACQUIRE;
    m->key = key;
    m->err = (struct lab_err){0};
    int i = hold_index(m, key);
    if (i >= 0 && m->design->kind == ZK_SM_SEQUENTIAL) {
        m->held[i].count++; /* reentrant: InterProcessMutex's lockCount, local only */
        m->status = LOCK_GRANTED;
        return done(m);
    }
    if (m->n_held >= ZK_MAX_HOLDS) {
        lab_err_set(&m->err, ENOSPC, "zookeeper: more than %d locks held at once",
                    ZK_MAX_HOLDS);
        m->status = LOCK_ERROR;
        return done(m);
    }
    m->deadline = now + wait_ns;
    m->watching = false;
    return attempt(m, m->design->kind == ZK_SM_EPHEMERAL ? ZSM_EPHEMERAL : ZSM_QUEUE, now);
}

enum zk_sm_act zk_sm_release(struct zk_sm *m, const char *key, int64_t now)
{
    m->op = ZSM_OP_RELEASE;
    m->err = (struct lab_err){0};
    int i = hold_index(m, key);
    if (i < 0) {
        m->release = RELEASE_NOT_OWNER; /* nothing of ours to delete: never delete blindly */
        return done(m);
    }
    if (m->held[i].count > 1) {
        m->held[i].count--; /* an inner hold: the node stays */
        m->release = RELEASE_OK;
        return done(m);
    }
    struct zk_sm_hold h = m->held[i];
    memmove(&m->held[i], &m->held[i + 1], (size_t)(m->n_held - i - 1) * sizeof h);
    m->n_held--;
    if (m->abort_on_disconnect && m->env->lost && __atomic_load_n(m->env->lost, __ATOMIC_SEQ_CST)) {
        /* given up at the disconnect: the session closes, the node with it */
        drop(m);
        m->release = RELEASE_NOT_OWNER;
        return done(m);
    }
    return delete_start(m, h.path, h.gen, now);
}
