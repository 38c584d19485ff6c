/*
 * zk_async.c - zk-sequential and zk-ephemeral in a client group
 * (lock_async_ops): the requests of zk_queue.c, zk_ephemeral.c and
 * zk_common.c (create the persistent parents; zk-sequential: create our
 * ephemeral-sequential node, list, read the predecessor with a watch;
 * zk-ephemeral: create the one ephemeral node, exists-watch it when taken;
 * both: delete) sent with the C client's asynchronous calls, as a state
 * machine on the group's event loop.
 *
 * Each logical client keeps its own session (its own zhandle), so a
 * session expires for one client exactly as with one process per client.
 * The library is the multi-threaded one the lab links (zookeeper_mt): each
 * handle runs an I/O thread and a completion thread, and its completions
 * and watch events arrive on the latter. They touch nothing of the client:
 * each becomes a letter posted to the loop's mailbox (evloop_post.h), and
 * every step of the state machine runs on the loop's thread. A letter
 * carries the session generation it belongs to; one from a session closed
 * since is dropped. A client is freed once it is closed and no letter of
 * it is on its way (refs). The single-threaded library (zookeeper_st,
 * whose zookeeper_interest/zookeeper_process would put the sockets on the
 * loop itself) exports the same symbols and cannot be linked beside it.
 *
 * The outcomes and their failure paths are the blocking design's: a
 * connection loss waits (within the budget) for the same session and then
 * finds out what became of the request (a create whose reply was lost is
 * found again by its unique name, Curator's protected mode); an expired
 * session ends the attempt; a node we cannot delete closes its session.
 * Waits (a connecting session, the predecessor's watch) are cut short by
 * the deadline timer, which the group makes due when the run stops.
 * lock.on_disconnect: abort needs the client to leave its unit before the
 * write, which a group's workload does not do: the loader refuses it
 * (zk_finish_options).
 */
#include "zk_common.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evloop_post.h"

#define ZKA_CONNECT_NS (10LL * 1000000000) /* the first connect, at open (as zk_lock_open) */
#define ZKE_NODE "lock"                    /* zk-ephemeral's node under /locklab/<key> */

/* What a client waits for. */
enum step {
    S_IDLE,
    S_OPENED,     /* open: the first session */
    S_SESSION,    /* a connected session, any (resume when it is) */
    S_RECOVER,    /* the same session connected again (resume when it is) */
    S_ROOT,       /* create ZK_ROOT (persistent) */
    S_PARENT,     /* create ZK_ROOT/<key> (persistent) */
    S_AGAIN,      /* after a failed create: the next turn of zk_enter's loop */
    S_FIND,       /* list, to find our node whose create's reply was lost */
    S_CREATE,     /* create our ephemeral-sequential node */
    S_LIST,       /* list the queue */
    S_ECREATE,    /* zk-ephemeral: create the lock node */
    S_EWATCH,     /* zk-ephemeral: exists-watch the node someone holds */
    S_WATCH,      /* read the predecessor with a watch */
    S_WAIT,       /* until any event of the session, or the deadline */
    S_QUEUE_BACK, /* after a connection loss while queued */
    S_LEAVE,      /* delete our node after a timeout or an error */
    S_DELETE,     /* release: delete our node */
    S_DEL_BACK,   /* release: after a connection loss */
    S_EXISTS      /* release: is the node still our session's? */
};

struct zk_async {
    struct lock_client *c;
    struct evloop *L;
    void *sess;               /* the context of c->zh's watcher (struct zka_sess) */
    atomic_int refs;          /* the client's own, and one per letter on its way */
    bool closed;
    bool in_call;             /* inside a hook: an outcome waits for the loop */
    bool ephemeral;           /* zk-ephemeral (else zk-sequential) */
    struct ev_timer timer;    /* the deadline of a wait, or an outcome delivered later */
    enum step step, resume;   /* what it waits for; after S_SESSION/S_RECOVER: what next */
    int ready;                /* what the session wait found: 1 connected, 0 no, -1 gone */
    uint64_t wakes, seen;     /* events received; the count when the watch was set */
    int64_t deadline;
    /* the acquire */
    const char *key;
    char name[96];            /* our node's unique prefix in this attempt */
    char mine[ZK_PATH_MAX];   /* our node */
    bool unknown;             /* a create whose outcome we do not know, in this session */
    bool first;               /* the first turn of the enter loop */
    uint64_t gen;             /* the session our node (or this turn) belongs to */
    int last_rc;              /* the code that sent us waiting */
    bool maybe_created;       /* zk-ephemeral: the last create's outcome is unknown */
    bool nested;              /* zk-ephemeral: this turn, we hold key already */
    /* the release */
    bool retried;
    /* the outcome */
    enum lock_status st;
    enum release_status rs;
    bool due;                 /* the timer delivers the outcome */
    struct lab_err err;
    lock_opened_fn opened;
    lock_acquired_fn acquired;
    lock_released_fn released;
    void *arg;
};

/* One handle's watcher context: which client and session its events are. */
struct zka_sess {
    struct lock_client *c;
    uint64_t gen;
};

/* A reply or an event, from a completion thread to the loop. */
struct zka_letter {
    struct ev_letter l;
    struct lock_client *c;
    uint64_t gen;            /* session generation it belongs to */
    enum step step;          /* the request it answers (S_IDLE: an event) */
    int type, state;         /* an event */
    int rc;                  /* a reply's code */
    int pos;                 /* S_LIST: zk_queue_position; S_FIND: 1 found */
    int64_t owner;           /* S_EXISTS, S_EWATCH: the node's ephemeralOwner */
    int64_t czxid;           /* S_ECREATE, S_EWATCH: the node's creating transaction */
    char base[96];           /* in: S_LIST our node's name, S_FIND its prefix */
    char out[ZK_PATH_MAX];   /* S_CREATE the path, S_LIST the predecessor, S_FIND the name */
};

static struct evloop_mailbox *zka_box; /* one loop per process: the group's */
static int zka_open_clients;

static void step_to(struct lock_client *c, enum step s);

/* ------------------------------------------------------------ lifetime */

static void unref(struct lock_client *c)
{
    if (atomic_fetch_sub(&c->as->refs, 1) != 1)
        return;
    free(c->as);
    free(c);
}

static void session_drop(struct lock_client *c)
{
    if (!c->zh)
        return;
    zookeeper_close(c->zh); /* joins its threads: no letter of it is posted after this */
    c->zh = NULL;
    free(c->as->sess);
    c->as->sess = NULL;
    c->session_gen++;
    c->parent_key[0] = '\0';
}

/* ------------------------------------------------------------ letters */

static void deliver(struct ev_letter *l);

static struct zka_letter *letter_new(struct lock_client *c, uint64_t gen, enum step step)
{
    struct zka_letter *m = calloc(1, sizeof *m);
    if (!m)
        abort(); /* a lost letter would hang a client forever */
    m->l.deliver = deliver;
    m->c = c;
    m->gen = gen;
    m->step = step;
    atomic_fetch_add(&c->as->refs, 1);
    return m;
}

static void post(struct zka_letter *m) { evloop_mailbox_post(zka_box, &m->l); }

/* Completion thread: every watch and session event of a handle. */
static void on_event(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh, (void)path;
    struct zka_sess *s = ctx;
    struct zka_letter *m = letter_new(s->c, s->gen, S_IDLE);
    m->type = type;
    m->state = state;
    post(m);
}

static void on_string(int rc, const char *value, const void *data)
{
    struct zka_letter *m = (struct zka_letter *)data;
    m->rc = rc;
    if (rc == ZOK && value)
        snprintf(m->out, sizeof m->out, "%s", value);
    post(m);
}

static void on_strings(int rc, const struct String_vector *sv, const void *data)
{
    struct zka_letter *m = (struct zka_letter *)data;
    m->rc = rc;
    if (rc == ZOK && sv && m->step == S_LIST)
        m->pos = zk_queue_position(sv, m->base, m->out, sizeof m->out);
    for (int i = 0; rc == ZOK && sv && m->step == S_FIND && i < sv->count && !m->pos; i++)
        if (strncmp(sv->data[i], m->base, strlen(m->base)) == 0) {
            snprintf(m->out, sizeof m->out, "%s", sv->data[i]);
            m->pos = 1;
        }
    post(m);
}

static void on_data(int rc, const char *v, int len, const struct Stat *st, const void *data)
{
    (void)v, (void)len, (void)st;
    struct zka_letter *m = (struct zka_letter *)data;
    m->rc = rc;
    post(m);
}

static void on_void(int rc, const void *data)
{
    struct zka_letter *m = (struct zka_letter *)data;
    m->rc = rc;
    post(m);
}

static void on_stat(int rc, const struct Stat *st, const void *data)
{
    struct zka_letter *m = (struct zka_letter *)data;
    m->rc = rc;
    if (rc == ZOK && st) {
        m->owner = st->ephemeralOwner;
        m->czxid = st->czxid;
    }
    post(m);
}

static void on_string_stat(int rc, const char *value, const struct Stat *st, const void *data)
{
    struct zka_letter *m = (struct zka_letter *)data;
    if (rc == ZOK && st)
        m->czxid = st->czxid;
    on_string(rc, value, data);
}

/* Send the request of step s on path (counted as one round trip); its
 * reply comes back as a letter, also when it cannot be sent at all. */
static void request(struct lock_client *c, enum step s, const char *path, const char *base)
{
    struct zk_async *a = c->as;
    a->step = s;
    struct zka_letter *m = letter_new(c, c->session_gen, s);
    if (base)
        snprintf(m->base, sizeof m->base, "%s", base);
    c->env->stats->round_trips++;
    int rc = ZINVALIDSTATE;
    if (c->zh)
        switch (s) {
        case S_ROOT:
        case S_PARENT:
        case S_CREATE:
            rc = zoo_acreate(c->zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE,
                             s == S_CREATE ? ZOO_EPHEMERAL_SEQUENTIAL : ZOO_PERSISTENT,
                             on_string, m);
            break;
        case S_ECREATE: /* create2 (fencing): the same request, answered with the Stat */
            rc = c->env->fencing ? zoo_acreate2(c->zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE,
                                                ZOO_EPHEMERAL, on_string_stat, m)
                                 : zoo_acreate(c->zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE,
                                               ZOO_EPHEMERAL, on_string, m);
            break;
        case S_EWATCH:
            a->seen = a->wakes;
            rc = zoo_awexists(c->zh, path, on_event, a->sess, on_stat, m);
            break;
        case S_FIND:
        case S_LIST:
            rc = zoo_aget_children(c->zh, path, 0, on_strings, m);
            break;
        case S_WATCH:
            a->seen = a->wakes;
            rc = zoo_awget(c->zh, path, on_event, a->sess, on_data, m);
            break;
        case S_LEAVE:
        case S_DELETE:
            rc = zoo_adelete(c->zh, path, -1, on_void, m);
            break;
        case S_EXISTS:
            rc = zoo_aexists(c->zh, path, 0, on_stat, m);
            break;
        default:
            break;
        }
    if (rc != ZOK) { /* never sent: no completion will come */
        m->rc = rc;
        post(m);
    }
}

/* ------------------------------------------------------------ outcomes */

static void deliver_now(struct lock_client *c)
{
    struct zk_async *a = c->as;
    a->step = S_IDLE;
    if (a->opened) {
        lock_opened_fn f = a->opened;
        a->opened = NULL;
        f(a->arg, a->st == LOCK_GRANTED ? 0 : -1, &a->err);
    } else if (a->acquired) {
        lock_acquired_fn f = a->acquired;
        a->acquired = NULL;
        f(a->arg, a->st, &a->err);
    } else if (a->released) {
        lock_released_fn f = a->released;
        a->released = NULL;
        f(a->arg, a->rs, &a->err);
    }
}

/* The operation under way ends (st for an open or acquire, rs for a
 * release): from the loop, never from inside the hook that started it. */
static void finish(struct lock_client *c, enum lock_status st, enum release_status rs)
{
    struct zk_async *a = c->as;
    a->st = st;
    a->rs = rs;
    evloop_timer_cancel(a->L, &a->timer);
    if (!a->in_call) {
        deliver_now(c);
        return;
    }
    a->step = S_IDLE;
    a->due = true;
    evloop_timer_at(a->L, &a->timer, 0);
}

static void acq_done(struct lock_client *c, enum lock_status st)
{
    /* zk-ephemeral giving up right after a create whose outcome is unknown:
     * the node may exist, held by nobody; only closing the session is sure
     * to remove it */
    if (c->as->ephemeral && st != LOCK_GRANTED && c->as->maybe_created)
        session_drop(c);
    finish(c, st, RELEASE_OK);
}
static void rel_done(struct lock_client *c, enum release_status rs) { finish(c, LOCK_ERROR, rs); }

static void acq_fail(struct lock_client *c, int rc, const char *what, const char *path)
{
    zk_fail(&c->as->err, rc, what, path);
    acq_done(c, LOCK_ERROR);
}

/* ------------------------------------------------------------ session */

/* Wait on the loop until the session is connected, then step to next with
 * a->ready set: 1 connected, 0 deadline or stop, -1 it could not start.
 * same: the session of a->gen only (zk_recover); otherwise any, a new one
 * opened if it expired (zk_session_ready). */
static void session_then(struct lock_client *c, enum step next, bool same)
{
    struct zk_async *a = c->as;
    a->resume = next;
    a->step = same ? S_RECOVER : S_SESSION;
    if (c->zh) {
        int st = zoo_state(c->zh);
        if (st == ZOO_CONNECTED_STATE) {
            a->ready = same && c->session_gen != a->gen ? -1 : 1;
            step_to(c, next);
            return;
        }
        if (st == ZOO_EXPIRED_SESSION_STATE || st == ZOO_AUTH_FAILED_STATE)
            session_drop(c); /* its nodes are gone */
    }
    if (same && c->session_gen != a->gen) {
        lab_err_set(&a->err, ZSESSIONEXPIRED,
                    "zookeeper: the session expired while disconnected; its nodes are gone");
        a->ready = -1;
        step_to(c, next);
        return;
    }
    if (lab_now_ns() >= a->deadline || *c->env->stop) {
        lab_err_set(&a->err, ETIMEDOUT, "zookeeper: not connected to %s",
                    c->env->servers->conn);
        a->ready = 0;
        step_to(c, next);
        return;
    }
    if (!c->zh) {
        struct zka_sess *s = calloc(1, sizeof *s);
        if (s) {
            s->c = c;
            s->gen = ++c->session_gen;
            c->zh = zk_handle_init(c->env, on_event, s, &a->err);
        } else {
            lab_err_set(&a->err, ENOMEM, "out of memory");
        }
        if (!c->zh) {
            free(s);
            a->ready = -1;
            step_to(c, next);
            return;
        }
        a->sess = s;
    }
    evloop_timer_at(a->L, &a->timer, a->deadline); /* an event or this, whichever first */
}

/* ------------------------------------------------------------ the acquire */

static void dir_of(const struct lock_client *c, char *dir, size_t len)
{
    snprintf(dir, len, "%s", c->parent);
}

/* dst = dir "/" name; false when it does not fit (nothing the designs build). */
static bool path_join(char *dst, size_t len, const char *dir, const char *name)
{
    int n = snprintf(dst, len, "%s/%s", dir, name);
    return n > 0 && (size_t)n < len;
}

/* Delete our node after a timeout or an error, then end with st
 * (zk_leave): a node we cannot delete closes its session. */
static void leave(struct lock_client *c, enum lock_status st)
{
    struct zk_async *a = c->as;
    a->st = st;
    if (c->session_gen != a->gen) {
        acq_done(c, st);
        return;
    }
    request(c, S_LEAVE, a->mine, NULL);
}

/* The top of zk_enter's loop: the deadline, then a prepared session. */
static void enter_turn(struct lock_client *c)
{
    struct zk_async *a = c->as;
    if (!a->first && (lab_now_ns() >= a->deadline || *c->env->stop)) {
        if (a->unknown)
            session_drop(c); /* it may exist: it must not outlive the attempt */
        acq_done(c, LOCK_TIMEOUT);
        return;
    }
    a->first = false;
    session_then(c, S_ROOT, false);
}

static void list_queue(struct lock_client *c)
{
    struct zk_async *a = c->as;
    char dir[ZK_PATH_MAX];
    dir_of(c, dir, sizeof dir);
    request(c, S_LIST, dir, a->mine + strlen(dir) + 1);
}

static void queue_error(struct lock_client *c, int rc)
{
    struct zk_async *a = c->as;
    const char *base = a->mine + strlen(c->parent) + 1;
    if (zk_session_gone(rc)) {
        session_drop(c);
        acq_fail(c, rc, "queue", base);
    } else if (!zk_transient(rc)) {
        zk_fail(&a->err, rc, "queue", base);
        leave(c, LOCK_ERROR);
    } else {
        session_then(c, S_QUEUE_BACK, true);
    }
}

static void granted(struct lock_client *c)
{
    struct zk_async *a = c->as;
    if (zk_hold_push(c, a->key, a->mine, zk_sequence_of(a->mine), &a->err) != 0)
        leave(c, LOCK_ERROR);
    else
        acq_done(c, LOCK_GRANTED);
}

/* A create (or the search for it) failed with rc (zk_enter's loop). */
static void create_failed(struct lock_client *c, int rc, const char *path)
{
    if (!zk_transient(rc) && !zk_session_gone(rc)) {
        acq_fail(c, rc, "create", path);
        return;
    }
    session_then(c, S_AGAIN, false);
}

/* zk-ephemeral: the lock node is ours now (its Stat's czxid the token). */
static void e_granted(struct lock_client *c, const char *path, int64_t czxid)
{
    struct zk_async *a = c->as;
    if (zk_hold_push(c, a->key, path, czxid, &a->err) == 0) {
        acq_done(c, LOCK_GRANTED);
        return;
    }
    snprintf(a->mine, sizeof a->mine, "%s", path);
    a->gen = c->session_gen;
    leave(c, LOCK_ERROR);
}

/* zk-ephemeral: a create or the exists-watch failed with rc. */
static void e_failed(struct lock_client *c, int rc, const char *path)
{
    if (!zk_transient(rc) && !zk_session_gone(rc)) {
        acq_fail(c, rc, "create", path);
        return;
    }
    /* The session may still be there (and the create applied: the next
     * turn finds the node carrying our session id), or it is gone and the
     * next turn opens a new one. */
    session_then(c, S_AGAIN, false);
}

static void on_ephemeral_reply(struct lock_client *c, const struct zka_letter *m)
{
    struct zk_async *a = c->as;
    char path[ZK_PATH_MAX + sizeof ZKE_NODE];
    snprintf(path, sizeof path, "%s/%s", c->parent, ZKE_NODE);
    if (m->step == S_ECREATE) {
        a->maybe_created = zk_transient(m->rc);
        if (m->rc == ZOK)
            e_granted(c, path, m->czxid);
        else if (m->rc == ZNODEEXISTS)
            request(c, S_EWATCH, path, NULL);
        else
            e_failed(c, m->rc, path);
        return;
    }
    const clientid_t *id = c->zh ? zoo_client_id(c->zh) : NULL;
    if (m->rc == ZOK && !a->nested && id && m->owner == id->client_id)
        e_granted(c, path, m->czxid); /* our own create, whose reply a connection loss ate */
    else if (m->rc == ZNONODE || (m->rc == ZOK && a->wakes != a->seen))
        enter_turn(c); /* deleted meanwhile, or an event came: try again */
    else if (m->rc == ZOK) {
        a->step = S_WAIT;
        evloop_timer_at(a->L, &a->timer, a->deadline);
    } else {
        e_failed(c, m->rc, path);
    }
}

static void on_acquire_reply(struct lock_client *c, const struct zka_letter *m)
{
    struct zk_async *a = c->as;
    char dir[ZK_PATH_MAX], path[2 * ZK_PATH_MAX];
    dir_of(c, dir, sizeof dir);
    switch (m->step) {
    case S_ECREATE:
    case S_EWATCH:
        on_ephemeral_reply(c, m);
        return;
    case S_ROOT:
    case S_PARENT:
        if (m->rc != ZOK && m->rc != ZNODEEXISTS) {
            if (!zk_transient(m->rc) && !zk_session_gone(m->rc)) {
                snprintf(path, sizeof path, m->step == S_ROOT ? ZK_ROOT : "%s/%s", ZK_ROOT,
                         a->key);
                acq_fail(c, m->rc, "create", path);
            } else {
                session_then(c, S_ROOT, false); /* any session will do */
            }
            return;
        }
        if (m->step == S_ROOT) {
            snprintf(path, sizeof path, "%s/%s", ZK_ROOT, a->key);
            request(c, S_PARENT, path, NULL);
            return;
        }
        snprintf(c->parent, sizeof c->parent, "%s/%s", ZK_ROOT, a->key);
        snprintf(c->parent_key, sizeof c->parent_key, "%s", a->key);
        step_to(c, S_CREATE);
        return;
    case S_FIND:
        if (m->rc == ZOK && m->pos) {
            if (!path_join(a->mine, sizeof a->mine, dir, m->out)) {
                acq_fail(c, ZBADARGUMENTS, "find", m->out);
                return;
            }
            a->gen = c->session_gen;
            list_queue(c);
        } else if (m->rc == ZOK) {
            a->unknown = false; /* it never happened: create again */
            step_to(c, S_CREATE);
        } else {
            snprintf(path, sizeof path, "%s/%s", dir, a->name);
            create_failed(c, m->rc, path);
        }
        return;
    case S_CREATE:
        if (m->rc == ZOK) {
            snprintf(a->mine, sizeof a->mine, "%s", m->out);
            a->gen = c->session_gen;
            list_queue(c);
            return;
        }
        if (m->rc == ZNONODE) { /* someone removed the parent: make it again */
            c->parent_key[0] = '\0';
            enter_turn(c);
            return;
        }
        if (zk_transient(m->rc))
            a->unknown = true;
        snprintf(path, sizeof path, "%s/%s", dir, a->name);
        create_failed(c, m->rc, path);
        return;
    case S_LIST:
        if (m->rc != ZOK) {
            queue_error(c, m->rc);
        } else if (m->pos > 0) {
            granted(c);
        } else if (m->pos < 0) {
            lab_err_set(&a->err, ZNONODE, "zookeeper: our node %s vanished while queued",
                        a->mine + strlen(dir) + 1);
            acq_done(c, LOCK_ERROR);
        } else if (lab_now_ns() >= a->deadline || *c->env->stop) {
            leave(c, LOCK_TIMEOUT);
        } else {
            if (path_join(path, sizeof path, dir, m->out))
                request(c, S_WATCH, path, NULL);
            else
                queue_error(c, ZBADARGUMENTS);
        }
        return;
    case S_WATCH:
        if (m->rc == ZNONODE || (m->rc == ZOK && a->wakes != a->seen)) {
            list_queue(c); /* gone already, or an event came meanwhile: list again */
        } else if (m->rc == ZOK) {
            a->step = S_WAIT;
            evloop_timer_at(a->L, &a->timer, a->deadline);
        } else {
            queue_error(c, m->rc);
        }
        return;
    case S_LEAVE:
        if (m->rc != ZOK && m->rc != ZNONODE)
            session_drop(c);
        acq_done(c, a->st);
        return;
    default:
        return;
    }
}

/* ------------------------------------------------------------ the release */

static void on_release_reply(struct lock_client *c, const struct zka_letter *m)
{
    struct zk_async *a = c->as;
    if (m->step == S_EXISTS) {
        const clientid_t *id = c->zh ? zoo_client_id(c->zh) : NULL;
        if (m->rc == ZNONODE || (m->rc == ZOK && (!id || m->owner != id->client_id)))
            rel_done(c, RELEASE_OK); /* our delete went through */
        else
            request(c, S_DELETE, a->mine, NULL);
        return;
    }
    int rc = m->rc;
    a->last_rc = rc;
    if (rc == ZOK)
        rel_done(c, RELEASE_OK);
    else if (rc == ZNONODE) /* after a lost reply: our own delete went through */
        rel_done(c, a->retried ? RELEASE_OK : RELEASE_NOT_OWNER);
    else if (zk_session_gone(rc)) {
        session_drop(c);
        rel_done(c, RELEASE_NOT_OWNER); /* the session expired: the lock went with it */
    } else if (!zk_transient(rc)) {
        zk_fail(&a->err, rc, "delete", a->mine);
        rel_done(c, RELEASE_ERROR);
    } else {
        session_then(c, S_DEL_BACK, true);
    }
}

/* ------------------------------------------------------------ steps */

/* Go on with step s (after a session wait, or the next request). */
static void step_to(struct lock_client *c, enum step s)
{
    struct zk_async *a = c->as;
    evloop_timer_cancel(a->L, &a->timer);
    char dir[ZK_PATH_MAX], path[ZK_PATH_MAX + 96];
    switch (s) {
    case S_OPENED:
        if (a->ready == 0)
            lab_err_set(&a->err, ETIMEDOUT, "zookeeper: no session with %s within %lld s",
                        c->env->servers->conn, ZKA_CONNECT_NS / 1000000000);
        acq_done(c, a->ready > 0 ? LOCK_GRANTED : LOCK_ERROR);
        return;
    case S_ROOT: /* zk_prepare, once the session is ready */
        if (a->ready <= 0) {
            if (a->unknown)
                session_drop(c);
            acq_done(c, a->ready == 0 ? LOCK_TIMEOUT : LOCK_ERROR);
        } else if (c->parent_key[0] && strcmp(c->parent_key, a->key) == 0) {
            step_to(c, S_CREATE);
        } else if (zk_key_check(a->key, &a->err) != 0) {
            acq_done(c, LOCK_ERROR);
        } else {
            request(c, S_ROOT, ZK_ROOT, NULL);
        }
        return;
    case S_CREATE: /* prepared: find our lost create, or create */
        a->gen = c->session_gen;
        dir_of(c, dir, sizeof dir);
        if (a->ephemeral) { /* a nested acquire by the holder: its own node is in the way */
            struct zk_hold *h = zk_hold_find(c, a->key);
            a->nested = h && h->gen == c->session_gen;
            snprintf(path, sizeof path, "%s/%s", dir, ZKE_NODE);
            request(c, S_ECREATE, path, NULL);
        } else if (a->unknown) {
            request(c, S_FIND, dir, a->name);
        } else {
            snprintf(path, sizeof path, "%s/%s", dir, a->name);
            request(c, S_CREATE, path, NULL);
        }
        return;
    case S_AGAIN:
        if (a->ephemeral && a->ready <= 0) {
            acq_done(c, a->ready == 0 ? LOCK_TIMEOUT : LOCK_ERROR);
            return;
        }
        if (a->ready < 0) {
            session_drop(c);
            acq_done(c, LOCK_ERROR);
            return;
        }
        if (c->session_gen != a->gen)
            a->unknown = false; /* whatever it created went with the old session */
        enter_turn(c);
        return;
    case S_QUEUE_BACK:
        if (a->ready < 0)
            acq_done(c, LOCK_ERROR);
        else if (a->ready == 0)
            leave(c, LOCK_TIMEOUT);
        else
            list_queue(c);
        return;
    case S_DEL_BACK:
        if (a->ready < 0 && c->session_gen != a->gen) {
            rel_done(c, RELEASE_NOT_OWNER);
        } else if (a->ready <= 0) {
            zk_fail(&a->err, a->last_rc, "delete", a->mine);
            session_drop(c); /* the node must not outlive us */
            rel_done(c, RELEASE_ERROR);
        } else {
            a->retried = true;
            request(c, S_EXISTS, a->mine, NULL);
        }
        return;
    default:
        return;
    }
}

static void on_letter_event(struct lock_client *c, const struct zka_letter *m)
{
    struct zk_async *a = c->as;
    if (m->type != ZOO_SESSION_EVENT && m->type != ZOO_NOTWATCHING_EVENT && !*c->env->stop)
        c->env->stats->notifications++;
    a->wakes++;
    if (a->step == S_WAIT && a->ephemeral) {
        enter_turn(c); /* whatever woke us: try to create again */
    } else if (a->step == S_WAIT) {
        list_queue(c); /* whatever woke us: list again, as zk_wait's caller does */
    } else if ((a->step == S_SESSION || a->step == S_RECOVER) && m->type == ZOO_SESSION_EVENT) {
        session_then(c, a->resume, a->step == S_RECOVER); /* connected yet? */
    }
}

static void deliver(struct ev_letter *l)
{
    struct zka_letter *m = (struct zka_letter *)l;
    struct lock_client *c = m->c;
    struct zk_async *a = c->as;
    if (!a->closed && m->gen == c->session_gen) {
        if (m->step == S_IDLE)
            on_letter_event(c, m);
        else if (m->step == a->step && (a->acquired || a->opened))
            on_acquire_reply(c, m);
        else if (m->step == a->step && a->released)
            on_release_reply(c, m);
    }
    free(m);
    unref(c);
}

static void on_timer(struct ev_timer *t)
{
    struct zk_async *a = (struct zk_async *)((char *)t - offsetof(struct zk_async, timer));
    struct lock_client *c = a->c;
    if (a->due) {
        a->due = false;
        deliver_now(c);
    } else if (a->step == S_WAIT && a->ephemeral) {
        acq_done(c, LOCK_TIMEOUT); /* the deadline, or the run stops */
    } else if (a->step == S_WAIT) {
        leave(c, LOCK_TIMEOUT); /* the deadline, or the run stops */
    } else if (a->step == S_SESSION || a->step == S_RECOVER) {
        session_then(c, a->resume, a->step == S_RECOVER);
    }
}

/* ------------------------------------------------------------ hooks */

static int zka_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                    bool ephemeral, lock_opened_fn opened, void *arg, struct lab_err *err)
{
    *out = NULL;
    if (!zka_box && !(zka_box = evloop_mailbox_new(loop, err)))
        return -1;
    struct lock_client *c = calloc(1, sizeof *c);
    struct zk_async *a = calloc(1, sizeof *a);
    int rc = c && a ? lab_random_hex(c->id, 16) : -ENOMEM;
    if (rc != 0) {
        lab_err_set(err, -rc, "cannot open a client: %s", strerror(-rc));
        free(c);
        free(a);
        return -1;
    }
    c->env = env;
    c->as = a;
    a->c = c;
    a->L = loop;
    a->ephemeral = ephemeral;
    atomic_init(&a->refs, 1);
    evloop_timer_init(&a->timer, on_timer);
    zoo_set_debug_level((ZooLogLevel)0);
    zka_open_clients++;
    a->opened = opened;
    a->arg = arg;
    a->deadline = lab_now_ns() + ZKA_CONNECT_NS;
    a->in_call = true;
    session_then(c, S_OPENED, false);
    a->in_call = false;
    *out = c;
    return 0;
}

static void zka_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                        lock_acquired_fn done, void *arg)
{
    struct zk_async *a = c->as;
    a->acquired = done;
    a->arg = arg;
    a->in_call = true;
    struct zk_hold *h = zk_hold_find(c, key);
    if (h && !a->ephemeral) {
        h->count++; /* reentrant: InterProcessMutex's lockCount, local only */
        acq_done(c, LOCK_GRANTED);
    } else if (c->n_held >= ZK_MAX_HOLDS) {
        lab_err_set(&a->err, ENOSPC, "zookeeper: more than %d locks held at once",
                    ZK_MAX_HOLDS);
        acq_done(c, LOCK_ERROR);
    } else {
        a->key = key;
        a->deadline = lab_now_ns() + wait_ns;
        a->unknown = false;
        a->maybe_created = false;
        a->first = true;
        snprintf(a->name, sizeof a->name, "lock-%s-%llu-", c->id,
                 (unsigned long long)++c->creates);
        enter_turn(c);
    }
    a->in_call = false;
}

static void zka_release(struct lock_client *c, const char *key, lock_released_fn done,
                        void *arg)
{
    struct zk_async *a = c->as;
    a->released = done;
    a->arg = arg;
    a->in_call = true;
    struct zk_hold *h = zk_hold_find(c, key);
    if (h && h->count > 1) {
        h->count--; /* an inner hold: the node stays */
        rel_done(c, RELEASE_OK);
    } else if (!h) {
        rel_done(c, RELEASE_NOT_OWNER); /* nothing of ours to delete */
    } else {
        struct zk_hold hold = *h;
        int i = (int)(h - c->held);
        memmove(&c->held[i], &c->held[i + 1], (size_t)(c->n_held - i - 1) * sizeof *h);
        c->n_held--;
        if (hold.gen != c->session_gen) {
            rel_done(c, RELEASE_NOT_OWNER); /* its session is gone, and the node with it */
        } else {
            snprintf(a->mine, sizeof a->mine, "%s", hold.path);
            a->gen = hold.gen;
            a->retried = false;
            /* two session timeouts, as zk_delete_ours */
            a->deadline = lab_now_ns() + 2 * (int64_t)zk_session_timeout_ms(c->env) * 1000000;
            request(c, S_DELETE, a->mine, NULL);
        }
    }
    a->in_call = false;
}

static void zka_close(struct lock_client *c)
{
    if (!c)
        return;
    struct zk_async *a = c->as;
    a->closed = true;
    evloop_timer_cancel(a->L, &a->timer);
    session_drop(c); /* the session's nodes go with it */
    unref(c);
    if (--zka_open_clients == 0) {
        evloop_mailbox_free(zka_box); /* the letters left free their clients */
        zka_box = NULL;
    }
}

static int zks_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                    lock_opened_fn opened, void *arg, struct lab_err *err)
{
    return zka_open(out, env, loop, false, opened, arg, err);
}

static int zke_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                    lock_opened_fn opened, void *arg, struct lab_err *err)
{
    return zka_open(out, env, loop, true, opened, arg, err);
}

const struct lock_async_ops zk_sequential_async = {
    .open = zks_open,
    .acquire = zka_acquire,
    .release = zka_release,
    .close = zka_close,
};

const struct lock_async_ops zk_ephemeral_async = {
    .open = zke_open,
    .acquire = zka_acquire,
    .release = zka_release,
    .close = zka_close,
};
