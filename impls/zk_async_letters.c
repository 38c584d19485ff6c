/*
 * zk_async_letters.c - the bottom layer of zk-sequential and zk-ephemeral
 * in a client group (zk_async.c tells the design): a client's lifetime
 * (its references, its session closed), the requests sent with the C
 * client's asynchronous calls and their replies and watch events turned
 * into letters for the loop's mailbox (they arrive on the library's
 * completion thread, which must touch nothing of the client), and the
 * outcomes handed to the hooks' callbacks.
 *
 * It calls nothing of the state machine above it (zk_async_steps.c):
 * a letter names its deliverer, which the loop's thread runs.
 */
#include "zk_async_parts.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct evloop_mailbox *zka_box;

/* ------------------------------------------------------------ lifetime */

void zka_unref(struct lock_client *c)
{
    if (atomic_fetch_sub(&c->as->refs, 1) != 1)
        return;
    free(c->as);
    free(c);
}

void zka_session_drop(struct lock_client *c)
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

/* ------------------------------------------------------------ closing at the end */

/* zookeeper_close waits for the server's reply to the close and joins the
 * handle's two threads. One after another, the 1,000 closes of a group at
 * the end of a run took longer than the run's stop grace on a busy server
 * (10,000 clients: every group killed, its sessions left to expire 10 s
 * later under the next step). So a group's final closes go to a few
 * closer threads, whose round trips overlap; the last client's close
 * waits for them (zka_closers_join). Each handle waiting keeps a reference
 * to its client, since its completion thread may still post a letter. */
#define ZKA_CLOSERS 32

struct zka_closing {
    struct zka_closing *next;
    struct lock_client *c;
    zhandle_t *zh;
    struct zka_sess *sess;
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct zka_closing *head; /* handed over, not yet taken */
    bool done;                /* no more will come: finish the queue and end */
    int n;                    /* closer threads running */
    pthread_t t[ZKA_CLOSERS];
} closers = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *closer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&closers.mu);
    for (;;) {
        struct zka_closing *k = closers.head;
        if (!k && closers.done)
            break;
        if (!k) {
            pthread_cond_wait(&closers.cv, &closers.mu);
            continue;
        }
        closers.head = k->next;
        pthread_mutex_unlock(&closers.mu);
        zookeeper_close(k->zh); /* joins its threads: none of its letters comes after */
        free(k->sess);
        zka_unref(k->c);
        free(k);
        pthread_mutex_lock(&closers.mu);
    }
    pthread_mutex_unlock(&closers.mu);
    return NULL;
}

/* Start the closer threads, with every signal blocked (the group's own
 * thread takes the run's); 0, or -1 when none could start. */
static int closers_start(void)
{
    if (closers.n > 0)
        return 0;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    closers.done = false;
    while (closers.n < ZKA_CLOSERS &&
           pthread_create(&closers.t[closers.n], NULL, closer_main, NULL) == 0)
        closers.n++;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return closers.n > 0 ? 0 : -1;
}

void zka_session_drop_later(struct lock_client *c)
{
    struct zka_closing *k = c->zh ? malloc(sizeof *k) : NULL;
    if (!k || closers_start() != 0) {
        free(k);
        zka_session_drop(c); /* here and now */
        return;
    }
    atomic_fetch_add(&c->as->refs, 1);
    *k = (struct zka_closing){.c = c, .zh = c->zh, .sess = c->as->sess};
    c->zh = NULL;
    c->as->sess = NULL;
    c->session_gen++;
    c->parent_key[0] = '\0';
    pthread_mutex_lock(&closers.mu);
    k->next = closers.head;
    closers.head = k;
    pthread_cond_signal(&closers.cv);
    pthread_mutex_unlock(&closers.mu);
}

void zka_closers_join(void)
{
    if (closers.n == 0)
        return;
    pthread_mutex_lock(&closers.mu);
    closers.done = true;
    pthread_cond_broadcast(&closers.cv);
    pthread_mutex_unlock(&closers.mu);
    for (int i = 0; i < closers.n; i++)
        pthread_join(closers.t[i], NULL);
    closers.n = 0;
}

/* ------------------------------------------------------------ letters */

static struct zka_letter *letter_new(struct lock_client *c, uint64_t gen, enum step step)
{
    struct zka_letter *m = calloc(1, sizeof *m);
    if (!m)
        abort(); /* a lost letter would hang a client forever */
    m->l.deliver = zka_deliver;
    m->c = c;
    m->gen = gen;
    m->step = step;
    atomic_fetch_add(&c->as->refs, 1);
    return m;
}

static void post(struct zka_letter *m) { evloop_mailbox_post(zka_box, &m->l); }

/* Completion thread: every watch and session event of a handle. */
void zka_on_event(zhandle_t *zh, int type, int state, const char *path, void *ctx)
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
void zka_request(struct lock_client *c, enum step s, const char *path, const char *base)
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
            rc = zoo_awexists(c->zh, path, zka_on_event, a->sess, on_stat, m);
            break;
        case S_FIND:
        case S_LIST:
            rc = zoo_aget_children(c->zh, path, 0, on_strings, m);
            break;
        case S_WATCH:
            a->seen = a->wakes;
            rc = zoo_awget(c->zh, path, zka_on_event, a->sess, on_data, m);
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

void zka_deliver_now(struct lock_client *c)
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
        zka_deliver_now(c);
        return;
    }
    a->step = S_IDLE;
    a->due = true;
    evloop_timer_at(a->L, &a->timer, 0);
}

void zka_acq_done(struct lock_client *c, enum lock_status st)
{
    /* zk-ephemeral giving up right after a create whose outcome is unknown:
     * the node may exist, held by nobody; only closing the session is sure
     * to remove it */
    if (c->as->ephemeral && st != LOCK_GRANTED && c->as->maybe_created)
        zka_session_drop(c);
    finish(c, st, RELEASE_OK);
}
void zka_rel_done(struct lock_client *c, enum release_status rs) { finish(c, LOCK_ERROR, rs); }

void zka_acq_fail(struct lock_client *c, int rc, const char *what, const char *path)
{
    zk_fail(&c->as->err, rc, what, path);
    zka_acq_done(c, LOCK_ERROR);
}
