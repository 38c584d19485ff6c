/*
 * zk_drive_group.c - the client groups' driver of the ZooKeeper state
 * machine (zk_drive.h): the machine's acts on the group's event loop,
 * each logical client with its own session of the lab's wire client
 * (zk_wire.h), so a session expires for one client exactly as with one
 * process per client. (The C client runs two threads per session, every
 * request crossing three threads, which held groups at half of
 * ZooKeeper's ceiling.)
 *
 * A reply or a watch event arrives inside the session's own I/O, where
 * the machine must not run (an act may close that very session): it
 * becomes a letter in the client's own mailbox (evloop_post.h), delivered
 * on a later turn of the loop. A letter carries the session generation it
 * belongs to; one from a session closed since is dropped. A client is
 * freed once it is closed and no letter of it is on its way (refs).
 * SESSION opens a session when there is none and waits for a session
 * event or the deadline; WAIT arms the timer at the machine's deadline,
 * which the group makes due when the run stops. A session closes at once
 * (closeSession sent, not waited for); a crash abandons it.
 *
 * The client's session, socket, timer and mailbox are its own, so a fault
 * aimed at one client of a group (a pause holds its mailbox) hits it
 * alone.
 */
#include "zk_drive.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evloop_post.h"
#include "lock_caller.h"
#include "zk_wire.h"

struct zk_group {
    struct lock_client *c;
    struct evloop *L;
    struct zkw *w;              /* the session, NULL when none */
    struct zk_sess *sess;       /* the context of w's events */
    uint64_t gen;               /* bumped at every session opened or closed */
    struct evloop_mailbox *box; /* its letters */
    atomic_int refs;            /* the client's own, and one per letter on its way */
    bool closed, crashing;
    enum { W_NONE, W_SESSION, W_WAIT } waits; /* what the timer is for */
    struct ev_timer timer;
    struct lock_caller k;       /* who waits for the operation */
};

/* A session's event context. */
struct zk_sess {
    struct lock_client *c;
    uint64_t gen;
};

/* A reply or an event, on its way to the machine. Its buffers are kept
 * when it is given back, for the next reply's names. */
struct zk_letter {
    struct ev_letter l;
    struct lock_client *c;
    uint64_t gen;
    bool event;
    int type;                   /* an event's */
    struct zk_sm_reply r;       /* a reply's; its strings point into the buffers below */
    char path[ZK_PATH_MAX];
    char *text;                 /* the children's names, one after another */
    size_t text_cap;
    char **names;
    int names_cap;
};

static int open_clients;
static struct ev_letter *spare; /* letters given back, freed when the last client closes */

static void run(struct lock_client *c, enum zk_sm_act act);

/* ------------------------------------------------------------ lifetime */

static void unref(struct lock_client *c)
{
    if (atomic_fetch_sub(&c->gr->refs, 1) != 1)
        return;
    free(c->gr);
    free(c);
}

static void session_close(struct lock_client *c)
{
    struct zk_group *g = c->gr;
    if (!g->w)
        return;
    if (g->crashing)
        zkw_abandon(g->w); /* the server finds out when the session times out */
    else
        zkw_close(g->w); /* its requests end now (ZCLOSING), as letters of an old generation */
    g->w = NULL;
    free(g->sess);
    g->sess = NULL;
    g->gen++;
}

/* ------------------------------------------------------------ letters */

static void deliver_letter(struct ev_letter *l);

static struct zk_letter *letter_new(struct lock_client *c, uint64_t gen)
{
    struct zk_letter *m = (struct zk_letter *)spare;
    if (m)
        spare = m->l.next;
    else if (!(m = calloc(1, sizeof *m)))
        abort(); /* a lost letter would hang a client forever */
    m->l.deliver = deliver_letter;
    m->l.next = NULL;
    m->c = c;
    m->gen = gen;
    m->event = false;
    m->r = (struct zk_sm_reply){.path = m->path};
    m->path[0] = '\0';
    atomic_fetch_add(&c->gr->refs, 1);
    return m;
}

static void post(struct zk_letter *m) { evloop_mailbox_post(m->c->gr->box, &m->l); }

static void on_event(void *ctx, int type, int state, const char *path)
{
    (void)state, (void)path;
    struct zk_sess *s = ctx;
    struct zk_letter *m = letter_new(s->c, s->gen);
    m->event = true;
    m->type = type;
    post(m);
}

/* A reply, copied into its letter (the names live only in the callback). */
static void on_result(void *arg, const struct zkw_result *r)
{
    struct zk_letter *m = arg;
    m->r.rc = r->rc;
    if (r->rc == 0) {
        snprintf(m->path, sizeof m->path, "%s", r->path);
        m->r.czxid = r->czxid;
        m->r.owner = r->owner;
    }
    size_t need = 0;
    for (int i = 0; r->rc == 0 && i < r->n; i++)
        need += strlen(r->names[i]) + 1;
    if ((need > m->text_cap && !(m->text = realloc(m->text, m->text_cap = need))) ||
        (r->n > m->names_cap &&
         !(m->names = realloc(m->names, (size_t)(m->names_cap = r->n) * sizeof *m->names))))
        abort();
    size_t at = 0;
    for (int i = 0; r->rc == 0 && i < r->n; i++) {
        m->names[i] = m->text + at;
        size_t len = strlen(r->names[i]) + 1;
        memcpy(m->text + at, r->names[i], len);
        at += len;
    }
    m->r.n = r->rc == 0 ? r->n : 0;
    m->r.names = m->names;
    post(m);
}

/* SEND: the request on the session; its reply comes back as a letter,
 * also when it cannot be sent at all. */
static void request(struct lock_client *c)
{
    struct zk_group *g = c->gr;
    struct zk_sm *m = &c->sm;
    struct zk_letter *l = letter_new(c, g->gen);
    c->env->stats->round_trips++;
    int rc = ZK_INVALIDSTATE;
    if (g->w)
        switch (m->req) {
        case ZK_REQ_CREATE:
            rc = zkw_create(g->w, m->path, 0, false, on_result, l);
            break;
        case ZK_REQ_CREATE_SEQ:
            rc = zkw_create(g->w, m->path, ZKW_EPHEMERAL | ZKW_SEQUENTIAL, false, on_result, l);
            break;
        case ZK_REQ_CREATE_EPH: /* create2 (fencing): the same request, answered with the Stat */
            rc = zkw_create(g->w, m->path, ZKW_EPHEMERAL, m->want_stat, on_result, l);
            break;
        case ZK_REQ_CHILDREN:
        case ZK_REQ_CHILDREN_WATCH:
            rc = zkw_children(g->w, m->path, m->req == ZK_REQ_CHILDREN_WATCH, on_result, l);
            break;
        case ZK_REQ_GET_WATCH:
            rc = zkw_get(g->w, m->path, true, on_result, l);
            break;
        case ZK_REQ_EXISTS_WATCH:
        case ZK_REQ_EXISTS:
            rc = zkw_exists(g->w, m->path, m->req == ZK_REQ_EXISTS_WATCH, on_result, l);
            break;
        case ZK_REQ_DELETE:
            rc = zkw_delete(g->w, m->path, on_result, l);
            break;
        case ZK_REQ_UNWATCH_CHILDREN:
            rc = zkw_remove_watches(g->w, m->path, ZKW_WATCH_CHILDREN, on_result, l);
            break;
        }
    if (rc != 0) { /* never sent: no reply will come */
        l->r.rc = rc;
        post(l);
    }
}

/* ------------------------------------------------------------ the machine's acts */

static void arm(struct zk_group *g, int waits, int64_t at)
{
    g->waits = waits;
    evloop_timer_at(g->L, &g->timer, at);
}

/* SESSION: connected or expired now, or wait (ZK_SM_IGNORED) for a
 * session event or the deadline. */
static enum zk_sm_act session(struct lock_client *c)
{
    struct zk_group *g = c->gr;
    struct zk_sm *m = &c->sm;
    int64_t now = lab_now_ns();
    int st = g->w ? zkw_state(g->w) : 0;
    if (st == ZKW_CONNECTED)
        return zk_sm_session(m, ZK_SM_CONNECTED, zkw_session_id(g->w), NULL, now);
    if (st == ZKW_EXPIRED)
        return zk_sm_session(m, ZK_SM_EXPIRED, 0, NULL, now);
    if (now >= m->deadline || *c->env->stop)
        return zk_sm_session(m, ZK_SM_NOT_YET, 0, NULL, now);
    if (!g->w) {
        struct lab_err err = {0};
        struct zk_sess *s = calloc(1, sizeof *s);
        if (s) {
            s->c = c;
            s->gen = ++g->gen;
            g->w = zkw_open(g->L, c->env->servers->conn, zk_sm_session_ms(c->env), on_event, s,
                            &err);
        } else {
            lab_err_set(&err, ENOMEM, "out of memory");
        }
        if (!g->w) {
            free(s);
            return zk_sm_session(m, ZK_SM_FAILED, 0, &err, now);
        }
        g->sess = s;
    }
    arm(g, W_SESSION, m->deadline); /* a session event or this, whichever first */
    return ZK_SM_IGNORED;
}

static void run(struct lock_client *c, enum zk_sm_act act)
{
    struct zk_group *g = c->gr;
    struct zk_sm *m = &c->sm;
    for (;;) {
        if (m->drop) {
            session_close(c);
            m->drop = false;
        }
        switch (act) {
        case ZK_SM_SEND:
            request(c);
            return;
        case ZK_SM_SESSION:
            act = session(c);
            break;
        case ZK_SM_WAIT:
            arm(g, W_WAIT, m->deadline);
            return;
        case ZK_SM_DONE:
            lock_caller_done(&g->k, m->open_rc, m->status, m->release, &m->err);
            return;
        case ZK_SM_IGNORED:
            return;
        }
    }
}

static void deliver_letter(struct ev_letter *l)
{
    struct zk_letter *m = (struct zk_letter *)l;
    struct lock_client *c = m->c;
    struct zk_group *g = c->gr;
    if (!g->closed && m->gen == g->gen) {
        int64_t now = lab_now_ns();
        if (!m->event) {
            run(c, zk_sm_reply(&c->sm, &m->r, now));
        } else {
            if (m->type != ZKW_SESSION_EVENT && !*c->env->stop)
                c->env->stats->notifications++;
            enum zk_sm_act act = zk_sm_event(&c->sm, now);
            if (act == ZK_SM_IGNORED && g->waits == W_SESSION && m->type == ZKW_SESSION_EVENT)
                act = ZK_SM_SESSION; /* connected yet? */
            if (act != ZK_SM_IGNORED && (g->waits == W_WAIT || g->waits == W_SESSION)) {
                evloop_timer_cancel(g->L, &g->timer);
                g->waits = W_NONE;
            }
            run(c, act);
        }
    }
    m->l.next = spare;
    spare = &m->l;
    unref(c);
}

static void on_timer(struct ev_timer *t)
{
    struct zk_group *g = (struct zk_group *)((char *)t - offsetof(struct zk_group, timer));
    struct lock_client *c = g->c;
    int waits = g->waits;
    g->waits = W_NONE;
    if (waits == W_WAIT)
        run(c, zk_sm_timer(&c->sm, lab_now_ns())); /* the deadline, or the run stops */
    else if (waits == W_SESSION)
        run(c, ZK_SM_SESSION);
}

/* ------------------------------------------------------------ hooks */

int zk_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                  const struct zk_sm_design *d, lock_opened_fn opened, void *arg,
                  struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    struct zk_group *g = calloc(1, sizeof *g);
    char id[33];
    int rc = c && g ? lab_random_hex(id, 16) : -ENOMEM;
    if (rc == 0 && !(g->box = evloop_mailbox_new(loop, err)))
        rc = -ENOMEM;
    if (rc != 0) {
        lab_err_set(err, -rc, "cannot open a client: %s", strerror(-rc));
        free(c);
        free(g);
        return -1;
    }
    c->env = env;
    c->gr = g;
    g->c = c;
    g->L = loop;
    atomic_init(&g->refs, 1);
    evloop_timer_init(&g->timer, on_timer);
    zk_sm_init(&c->sm, d, env, id);
    open_clients++;
    lock_caller_init(&g->k, loop);
    lock_caller_begin(&g->k, opened, NULL, NULL, arg);
    run(c, zk_sm_open(&c->sm, lab_now_ns()));
    lock_caller_end(&g->k);
    *out = c;
    return 0;
}

void zk_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                      lock_acquired_fn done, void *arg)
{
    struct zk_group *g = c->gr;
    lock_caller_begin(&g->k, NULL, done, NULL, arg);
    run(c, zk_sm_acquire(&c->sm, key, wait_ns, lab_now_ns()));
    lock_caller_end(&g->k);
}

void zk_group_release(struct lock_client *c, const char *key, lock_released_fn done, void *arg)
{
    struct zk_group *g = c->gr;
    lock_caller_begin(&g->k, NULL, NULL, done, arg);
    run(c, zk_sm_release(&c->sm, key, lab_now_ns()));
    lock_caller_end(&g->k);
}

void zk_group_close(struct lock_client *c)
{
    if (!c)
        return;
    struct zk_group *g = c->gr;
    g->closed = true;
    evloop_timer_cancel(g->L, &g->timer);
    lock_caller_close(&g->k);
    session_close(c); /* the session's nodes go with it (a crash's: at its timeout) */
    struct evloop_mailbox *box = g->box;
    g->box = NULL;
    evloop_mailbox_free(box); /* the letters left, delivered: each gives its reference back */
    unref(c);
    if (--open_clients == 0)
        while (spare) {
            struct zk_letter *m = (struct zk_letter *)spare;
            spare = spare->next;
            free(m->text);
            free(m->names);
            free(m);
        }
}

/* Killed by a fault: the session is abandoned, not closed, as a dying
 * process's socket just closes. */
void zk_group_crash(struct lock_client *c)
{
    if (!c)
        return;
    c->gr->crashing = true;
    zk_group_close(c);
}
