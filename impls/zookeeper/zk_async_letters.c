/*
 * zk_async_letters.c - the bottom layer of zk-sequential and zk-ephemeral
 * in a client group (zk_async.c tells the design): a client's lifetime
 * (its references, its session closed), the requests sent through the
 * lab's own wire session (zk_wire.h) and their replies and watch events
 * turned into letters for the loop's mailbox, and the outcomes handed to
 * the hooks' callbacks.
 *
 * A reply or an event arrives inside the session's own I/O handling,
 * where the state machine must not run (it may close that very session):
 * as a letter it is delivered on a later turn of the loop. This file
 * calls nothing of the state machine above it (zk_async_steps.c): a
 * letter names its deliverer, which the loop runs.
 */
#include "zk_async_parts.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    struct zk_async *a = c->as;
    if (!a->w)
        return;
    if (a->crashing)
        zkw_abandon(a->w); /* a crash: the server finds out when the session times out */
    else
        zkw_close(a->w); /* its requests end now (ZCLOSING), as letters of an old generation */
    a->w = NULL;
    free(a->sess);
    a->sess = NULL;
    c->session_gen++;
    c->parent_key[0] = '\0';
}

/* ------------------------------------------------------------ letters */

/* Letters delivered, kept for the next requests (linked by l.next): a
 * group sends three a cycle per client, and malloc and free of blocks this
 * size, hundreds at a time (past glibc's small per-size cache), were with
 * the wire client's a fifth of a group's own instructions per cycle
 * (callgrind, docs/benchmarks.md). As many as were on their
 * way at once; freed when the last client closes (zka_letters_drain). */
static struct ev_letter *spare_letters;

void zka_letter_free(struct zka_letter *m)
{
    m->l.next = spare_letters;
    spare_letters = &m->l;
}

void zka_letters_drain(void)
{
    while (spare_letters) {
        struct ev_letter *l = spare_letters;
        spare_letters = l->next;
        free(l);
    }
}

/* A letter with its fields empty. Not zeroed whole: clearing the two path
 * buffers (600 bytes) for every request cost more than the rest of it; an
 * empty string is all they need. */
static struct zka_letter *letter_new(struct lock_client *c, uint64_t gen, enum step step)
{
    struct zka_letter *m = (struct zka_letter *)spare_letters;
    if (m)
        spare_letters = m->l.next;
    else if (!(m = malloc(sizeof *m)))
        abort(); /* a lost letter would hang a client forever */
    m->l.deliver = zka_deliver;
    m->l.next = NULL;
    m->c = c;
    m->gen = gen;
    m->step = step;
    m->type = m->state = m->rc = m->pos = 0;
    m->owner = m->czxid = 0;
    m->base[0] = m->out[0] = '\0';
    atomic_fetch_add(&c->as->refs, 1);
    return m;
}

static void post(struct zka_letter *m) { evloop_mailbox_post(m->c->as->box, &m->l); }

/* Every watch and session event of a session, as a letter. */
void zka_on_event(void *ctx, int type, int state, const char *path)
{
    (void)path;
    struct zka_sess *s = ctx;
    struct zka_letter *m = letter_new(s->c, s->gen, S_IDLE);
    m->type = type;
    m->state = state;
    post(m);
}

/* A reply: what its step needs of it, into its letter. */
static void on_result(void *arg, const struct zkw_result *r)
{
    struct zka_letter *m = arg;
    m->rc = r->rc;
    if (r->rc == ZOK) {
        zk_copy(m->out, sizeof m->out, r->path);
        m->owner = r->owner;
        m->czxid = r->czxid;
    }
    struct String_vector sv = {.count = r->n, .data = r->names};
    if (r->rc == ZOK && m->step == S_LIST)
        m->pos = zk_queue_position(&sv, m->base, m->out, sizeof m->out);
    for (int i = 0; r->rc == ZOK && m->step == S_FIND && i < sv.count && !m->pos; i++)
        if (strncmp(sv.data[i], m->base, strlen(m->base)) == 0) {
            zk_copy(m->out, sizeof m->out, sv.data[i]);
            m->pos = 1;
        }
    post(m);
}

/* Send the request of step s on path (counted as one round trip); its
 * reply comes back as a letter, also when it cannot be sent at all. */
void zka_request(struct lock_client *c, enum step s, const char *path, const char *base)
{
    struct zk_async *a = c->as;
    a->step = s;
    struct zka_letter *m = letter_new(c, c->session_gen, s);
    if (base)
        zk_copy(m->base, sizeof m->base, base);
    c->env->stats->round_trips++;
    int rc = ZINVALIDSTATE;
    if (a->w)
        switch (s) {
        case S_ROOT:
        case S_PARENT:
        case S_CREATE:
            rc = zkw_create(a->w, path, s == S_CREATE ? ZKW_EPHEMERAL | ZKW_SEQUENTIAL : 0,
                            false, on_result, m);
            break;
        case S_ECREATE: /* create2 (fencing): the same request, answered with the Stat */
            rc = zkw_create(a->w, path, ZKW_EPHEMERAL, c->env->fencing, on_result, m);
            break;
        case S_EWATCH:
            a->seen = a->wakes;
            rc = zkw_exists(a->w, path, true, on_result, m);
            break;
        case S_FIND:
        case S_LIST:
            rc = zkw_children(a->w, path, false, on_result, m);
            break;
        case S_WATCH:
            a->seen = a->wakes;
            rc = zkw_get(a->w, path, true, on_result, m);
            break;
        case S_LEAVE:
        case S_DELETE:
            rc = zkw_delete(a->w, path, on_result, m);
            break;
        case S_EXISTS:
            rc = zkw_exists(a->w, path, false, on_result, m);
            break;
        default:
            break;
        }
    if (rc != ZOK) { /* never sent: no reply will come */
        m->rc = rc;
        post(m);
    }
}

/* ------------------------------------------------------------ outcomes */

void zka_deliver_now(struct lock_client *c)
{
    struct zk_async *a = c->as;
    a->step = S_IDLE;
    if (a->opened)
        lock_deliver_opened(&a->opened, a->arg, a->st == LOCK_GRANTED ? 0 : -1, &a->err);
    else if (a->acquired)
        lock_deliver_acquired(&a->acquired, a->arg, a->st, &a->err);
    else
        lock_deliver_released(&a->released, a->arg, a->rs, &a->err);
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
