/*
 * zk_async_steps.c - the state machine of zk-sequential and zk-ephemeral
 * in a client group (zk_async.c tells the design): waiting for a session,
 * the acquire (zk-sequential's queue recipe: create our
 * ephemeral-sequential node, list, watch the predecessor; zk-ephemeral's:
 * create the one node, exists-watch it when taken), the release (delete,
 * and find out after a connection loss whether it went through), the
 * steps that go on after a wait, and the dispatch of the letters and
 * timers that drive them, all on the loop's thread.
 *
 * The recipes, the steps and the session wait call each other, so they
 * stand together here; they reach down to zk_async_letters.c for the
 * requests and the outcomes, and only the hooks (zk_async.c) call them.
 */
#include "zk_async_parts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZKE_NODE "lock" /* zk-ephemeral's node under /locklab/<key> */

static void step_to(struct lock_client *c, enum step s);

/* ------------------------------------------------------------ session */

/* Wait on the loop until the session is connected, then step to next with
 * a->ready set: 1 connected, 0 deadline or stop, -1 it could not start.
 * same: the session of a->gen only (zk_recover); otherwise any, a new one
 * opened if it expired (zk_session_ready). */
void zka_session_then(struct lock_client *c, enum step next, bool same)
{
    struct zk_async *a = c->as;
    a->resume = next;
    a->step = same ? S_RECOVER : S_SESSION;
    if (a->w) {
        int st = zkw_state(a->w);
        if (st == ZKW_CONNECTED) {
            a->ready = same && c->session_gen != a->gen ? -1 : 1;
            step_to(c, next);
            return;
        }
        if (st == ZKW_EXPIRED)
            zka_session_drop(c); /* its nodes are gone */
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
    if (!a->w) {
        struct zka_sess *s = calloc(1, sizeof *s);
        if (s) {
            s->c = c;
            s->gen = ++c->session_gen;
            a->w = zkw_open(a->L, c->env->servers->conn, zk_session_timeout_ms(c->env),
                            zka_on_event, s, &a->err);
        } else {
            lab_err_set(&a->err, ENOMEM, "out of memory");
        }
        if (!a->w) {
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

/* dst = dir "/" name; false when it does not fit (nothing the designs
 * build). Copied, not printed: it runs every cycle (see zk_copy). */
static bool path_join(char *dst, size_t len, const char *dir, const char *name)
{
    size_t d = strlen(dir), n = strlen(name);
    if (d + 1 + n >= len)
        return false;
    memcpy(dst, dir, d);
    dst[d] = '/';
    memcpy(dst + d + 1, name, n + 1);
    return true;
}

/* Delete our node after a timeout or an error, then end with st
 * (zk_leave): a node we cannot delete closes its session. */
static void leave(struct lock_client *c, enum lock_status st)
{
    struct zk_async *a = c->as;
    a->st = st;
    if (c->session_gen != a->gen) {
        zka_acq_done(c, st);
        return;
    }
    zka_request(c, S_LEAVE, a->mine, NULL);
}

/* The top of zk_enter's loop: the deadline, then a prepared session. */
void zka_enter_turn(struct lock_client *c)
{
    struct zk_async *a = c->as;
    if (!a->first && (lab_now_ns() >= a->deadline || *c->env->stop)) {
        if (a->unknown)
            zka_session_drop(c); /* it may exist: it must not outlive the attempt */
        zka_acq_done(c, LOCK_TIMEOUT);
        return;
    }
    a->first = false;
    zka_session_then(c, S_ROOT, false);
}

static void list_queue(struct lock_client *c)
{
    struct zk_async *a = c->as;
    zka_request(c, S_LIST, c->parent, a->mine + strlen(c->parent) + 1);
}

static void queue_error(struct lock_client *c, int rc)
{
    struct zk_async *a = c->as;
    const char *base = a->mine + strlen(c->parent) + 1;
    if (zk_session_gone(rc)) {
        zka_session_drop(c);
        zka_acq_fail(c, rc, "queue", base);
    } else if (!zk_transient(rc)) {
        zk_fail(&a->err, rc, "queue", base);
        leave(c, LOCK_ERROR);
    } else {
        zka_session_then(c, S_QUEUE_BACK, true);
    }
}

static void granted(struct lock_client *c)
{
    struct zk_async *a = c->as;
    if (zk_hold_push(c, a->key, a->mine, zk_sequence_of(a->mine), &a->err) != 0)
        leave(c, LOCK_ERROR);
    else
        zka_acq_done(c, LOCK_GRANTED);
}

/* A create (or the search for it) failed with rc (zk_enter's loop), in
 * either recipe. */
static void create_failed(struct lock_client *c, int rc, const char *path)
{
    if (!zk_transient(rc) && !zk_session_gone(rc)) {
        zka_acq_fail(c, rc, "create", path);
        return;
    }
    /* The session may still be there (and the create applied: the next
     * turn finds the node carrying our session id), or it is gone and the
     * next turn opens a new one. */
    zka_session_then(c, S_AGAIN, false);
}

/* zk-ephemeral: the lock node is ours now (its Stat's czxid the token). */
static void e_granted(struct lock_client *c, const char *path, int64_t czxid)
{
    struct zk_async *a = c->as;
    if (zk_hold_push(c, a->key, path, czxid, &a->err) == 0) {
        zka_acq_done(c, LOCK_GRANTED);
        return;
    }
    snprintf(a->mine, sizeof a->mine, "%s", path);
    a->gen = c->session_gen;
    leave(c, LOCK_ERROR);
}

/* zk-ephemeral: a create or the exists-watch failed with rc. */
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
            zka_request(c, S_EWATCH, path, NULL);
        else
            create_failed(c, m->rc, path);
        return;
    }
    int64_t id = a->w ? zkw_session_id(a->w) : 0;
    if (m->rc == ZOK && !a->nested && id && m->owner == id)
        e_granted(c, path, m->czxid); /* our own create, whose reply a connection loss ate */
    else if (m->rc == ZNONODE || (m->rc == ZOK && a->wakes != a->seen))
        zka_enter_turn(c); /* deleted meanwhile, or an event came: try again */
    else if (m->rc == ZOK) {
        a->step = S_WAIT;
        evloop_timer_at(a->L, &a->timer, a->deadline);
    } else {
        create_failed(c, m->rc, path);
    }
}

static void on_acquire_reply(struct lock_client *c, const struct zka_letter *m)
{
    struct zk_async *a = c->as;
    const char *dir = c->parent; /* our queue's directory (S_PARENT sets it, reading it not) */
    char path[2 * ZK_PATH_MAX];
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
                zka_acq_fail(c, m->rc, "create", path);
            } else {
                zka_session_then(c, S_ROOT, false); /* any session will do */
            }
            return;
        }
        if (m->step == S_ROOT) {
            snprintf(path, sizeof path, "%s/%s", ZK_ROOT, a->key);
            zka_request(c, S_PARENT, path, NULL);
            return;
        }
        snprintf(c->parent, sizeof c->parent, "%s/%s", ZK_ROOT, a->key);
        snprintf(c->parent_key, sizeof c->parent_key, "%s", a->key);
        step_to(c, S_CREATE);
        return;
    case S_FIND:
        if (m->rc == ZOK && m->pos) {
            if (!path_join(a->mine, sizeof a->mine, dir, m->out)) {
                zka_acq_fail(c, ZBADARGUMENTS, "find", m->out);
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
            zk_copy(a->mine, sizeof a->mine, m->out);
            a->gen = c->session_gen;
            list_queue(c);
            return;
        }
        if (m->rc == ZNONODE) { /* someone removed the parent: make it again */
            c->parent_key[0] = '\0';
            zka_enter_turn(c);
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
            zka_acq_done(c, LOCK_ERROR);
        } else if (lab_now_ns() >= a->deadline || *c->env->stop) {
            leave(c, LOCK_TIMEOUT);
        } else {
            if (path_join(path, sizeof path, dir, m->out))
                zka_request(c, S_WATCH, path, NULL);
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
            zka_session_drop(c);
        zka_acq_done(c, a->st);
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
        int64_t id = a->w ? zkw_session_id(a->w) : 0;
        if (m->rc == ZNONODE || (m->rc == ZOK && (!id || m->owner != id)))
            zka_rel_done(c, RELEASE_OK); /* our delete went through */
        else
            zka_request(c, S_DELETE, a->mine, NULL);
        return;
    }
    int rc = m->rc;
    a->last_rc = rc;
    if (rc == ZOK)
        zka_rel_done(c, RELEASE_OK);
    else if (rc == ZNONODE) /* after a lost reply: our own delete went through */
        zka_rel_done(c, a->retried ? RELEASE_OK : RELEASE_NOT_OWNER);
    else if (zk_session_gone(rc)) {
        zka_session_drop(c);
        zka_rel_done(c, RELEASE_NOT_OWNER); /* the session expired: the lock went with it */
    } else if (!zk_transient(rc)) {
        zk_fail(&a->err, rc, "delete", a->mine);
        zka_rel_done(c, RELEASE_ERROR);
    } else {
        zka_session_then(c, S_DEL_BACK, true);
    }
}

/* ------------------------------------------------------------ steps */

/* Go on with step s (after a session wait, or the next request). */
static void step_to(struct lock_client *c, enum step s)
{
    struct zk_async *a = c->as;
    evloop_timer_cancel(a->L, &a->timer);
    const char *dir = c->parent;
    char path[ZK_PATH_MAX + 96];
    switch (s) {
    case S_OPENED:
        if (a->ready == 0)
            lab_err_set(&a->err, ETIMEDOUT, "zookeeper: no session with %s within %lld s",
                        c->env->servers->conn, ZKA_CONNECT_NS / 1000000000);
        zka_acq_done(c, a->ready > 0 ? LOCK_GRANTED : LOCK_ERROR);
        return;
    case S_ROOT: /* zk_prepare, once the session is ready */
        if (a->ready <= 0) {
            if (a->unknown)
                zka_session_drop(c);
            zka_acq_done(c, a->ready == 0 ? LOCK_TIMEOUT : LOCK_ERROR);
        } else if (c->parent_key[0] && strcmp(c->parent_key, a->key) == 0) {
            step_to(c, S_CREATE);
        } else if (zk_key_check(a->key, &a->err) != 0) {
            zka_acq_done(c, LOCK_ERROR);
        } else {
            zka_request(c, S_ROOT, ZK_ROOT, NULL);
        }
        return;
    case S_CREATE: /* prepared: find our lost create, or create */
        a->gen = c->session_gen;
        if (a->ephemeral) { /* a nested acquire by the holder: its own node is in the way */
            struct zk_hold *h = zk_hold_find(c, a->key);
            a->nested = h && h->gen == c->session_gen;
            snprintf(path, sizeof path, "%s/%s", dir, ZKE_NODE);
            zka_request(c, S_ECREATE, path, NULL);
        } else if (a->unknown) {
            zka_request(c, S_FIND, dir, a->name);
        } else {
            (void)path_join(path, sizeof path, dir, a->name); /* fits: parent < ZK_PATH_MAX */
            zka_request(c, S_CREATE, path, NULL);
        }
        return;
    case S_AGAIN:
        if (a->ephemeral && a->ready <= 0) {
            zka_acq_done(c, a->ready == 0 ? LOCK_TIMEOUT : LOCK_ERROR);
            return;
        }
        if (a->ready < 0) {
            zka_session_drop(c);
            zka_acq_done(c, LOCK_ERROR);
            return;
        }
        if (c->session_gen != a->gen)
            a->unknown = false; /* whatever it created went with the old session */
        zka_enter_turn(c);
        return;
    case S_QUEUE_BACK:
        if (a->ready < 0)
            zka_acq_done(c, LOCK_ERROR);
        else if (a->ready == 0)
            leave(c, LOCK_TIMEOUT);
        else
            list_queue(c);
        return;
    case S_DEL_BACK:
        if (a->ready < 0 && c->session_gen != a->gen) {
            zka_rel_done(c, RELEASE_NOT_OWNER);
        } else if (a->ready <= 0) {
            zk_fail(&a->err, a->last_rc, "delete", a->mine);
            zka_session_drop(c); /* the node must not outlive us */
            zka_rel_done(c, RELEASE_ERROR);
        } else {
            a->retried = true;
            zka_request(c, S_EXISTS, a->mine, NULL);
        }
        return;
    default:
        return;
    }
}

static void on_letter_event(struct lock_client *c, const struct zka_letter *m)
{
    struct zk_async *a = c->as;
    if (m->type != ZKW_SESSION_EVENT && !*c->env->stop)
        c->env->stats->notifications++;
    a->wakes++;
    if (a->step == S_WAIT && a->ephemeral) {
        zka_enter_turn(c); /* whatever woke us: try to create again */
    } else if (a->step == S_WAIT) {
        list_queue(c); /* whatever woke us: list again, as zk_wait's caller does */
    } else if ((a->step == S_SESSION || a->step == S_RECOVER) && m->type == ZKW_SESSION_EVENT) {
        zka_session_then(c, a->resume, a->step == S_RECOVER); /* connected yet? */
    }
}

void zka_deliver(struct ev_letter *l)
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
    zka_letter_free(m);
    zka_unref(c);
}

void zka_on_timer(struct ev_timer *t)
{
    struct zk_async *a = (struct zk_async *)((char *)t - offsetof(struct zk_async, timer));
    struct lock_client *c = a->c;
    if (a->due) {
        a->due = false;
        zka_deliver_now(c);
    } else if (a->step == S_WAIT && a->ephemeral) {
        zka_acq_done(c, LOCK_TIMEOUT); /* the deadline, or the run stops */
    } else if (a->step == S_WAIT) {
        leave(c, LOCK_TIMEOUT); /* the deadline, or the run stops */
    } else if (a->step == S_SESSION || a->step == S_RECOVER) {
        zka_session_then(c, a->resume, a->step == S_RECOVER);
    }
}
