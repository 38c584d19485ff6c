/*
 * zk_async.c - zk-sequential and zk-ephemeral in a client group
 * (lock_async_ops): the requests of zk_queue.c, zk_ephemeral.c and
 * zk_common.c (create the persistent parents; zk-sequential: create our
 * ephemeral-sequential node, list, read the predecessor with a watch;
 * zk-ephemeral: create the one ephemeral node, exists-watch it when taken;
 * both: delete) as a state machine on the group's event loop.
 *
 * Each logical client keeps its own session, so a session expires for one
 * client exactly as with one process per client. The sessions are the
 * lab's own wire client (zk_wire.h), on the group's loop and thread: the
 * C client Debian ships (zookeeper_mt) runs an I/O and a completion
 * thread per session, every request crossing three threads, which held
 * the groups at 0.46-0.48 of ZooKeeper's ceiling, with 87 % of their time
 * in the kernel; the single-threaded zookeeper_st is not packaged and
 * exports the same symbols. A reply or a watch event becomes a letter
 * posted to the loop's mailbox (evloop_post.h) and is delivered on a later
 * turn, never inside the session's own I/O (a step may close that
 * session). A letter carries the session generation it belongs to; one
 * from a session closed since is dropped. A client is freed once it is
 * closed and no letter of it is on its way (refs). A session closes at
 * once: closeSession is sent, not waited for.
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
 *
 * This file is the hooks (open, acquire, release, close) and the two
 * designs' ops tables; the state machine they start is zk_async_steps.c,
 * the requests, letters and outcomes under it zk_async_letters.c, and
 * what the three share zk_async_parts.h.
 */
#include "zk_async_parts.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zk_jute.h"

static int zka_open_clients;

/* ------------------------------------------------------------ hooks */

static int zka_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                    bool ephemeral, lock_opened_fn opened, void *arg, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    struct zk_async *a = calloc(1, sizeof *a);
    int rc = c && a ? lab_random_hex(c->id, 16) : -ENOMEM;
    if (rc == 0 && !(a->box = evloop_mailbox_new(loop, err)))
        rc = -ENOMEM;
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
    evloop_timer_init(&a->timer, zka_on_timer);
    zka_open_clients++;
    a->opened = opened;
    a->arg = arg;
    a->deadline = lab_now_ns() + ZKA_CONNECT_NS;
    a->in_call = true;
    zka_session_then(c, S_OPENED, false);
    a->in_call = false;
    *out = c;
    return 0;
}

/* The attempt's unique node prefix, lock-<client id>-<n>- (the blocking
 * recipe's, zk_queue.c), into name (96 bytes; zk_jute.h, shared with the
 * ceiling's bare loop). */
static void name_attempt(struct lock_client *c, char *name)
{
    jute_attempt_name(name, c->id, ++c->creates);
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
        zka_acq_done(c, LOCK_GRANTED);
    } else if (c->n_held >= ZK_MAX_HOLDS) {
        lab_err_set(&a->err, ENOSPC, "zookeeper: more than %d locks held at once",
                    ZK_MAX_HOLDS);
        zka_acq_done(c, LOCK_ERROR);
    } else {
        a->key = key;
        a->deadline = lab_now_ns() + wait_ns;
        a->unknown = false;
        a->maybe_created = false;
        a->first = true;
        name_attempt(c, a->name);
        zka_enter_turn(c);
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
        zka_rel_done(c, RELEASE_OK);
    } else if (!h) {
        zka_rel_done(c, RELEASE_NOT_OWNER); /* nothing of ours to delete */
    } else {
        struct zk_hold hold = *h;
        int i = (int)(h - c->held);
        memmove(&c->held[i], &c->held[i + 1], (size_t)(c->n_held - i - 1) * sizeof *h);
        c->n_held--;
        if (hold.gen != c->session_gen) {
            zka_rel_done(c, RELEASE_NOT_OWNER); /* its session is gone, and the node with it */
        } else {
            zk_copy(a->mine, sizeof a->mine, hold.path);
            a->gen = hold.gen;
            a->retried = false;
            /* two session timeouts, as zk_delete_ours */
            a->deadline = lab_now_ns() + 2 * (int64_t)zk_session_timeout_ms(c->env) * 1000000;
            zka_request(c, S_DELETE, a->mine, NULL);
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
    zka_session_drop(c); /* the session's nodes go with it (a crash's: at its timeout) */
    struct evloop_mailbox *box = a->box;
    a->box = NULL;
    evloop_mailbox_free(box); /* the letters left, delivered: each gives its reference back */
    zka_unref(c);
    if (--zka_open_clients == 0)
        zka_letters_drain();
}

/* Killed by a fault: the session is abandoned, not closed, as a dying
 * process's socket just closes. */
static void zka_crash(struct lock_client *c)
{
    if (!c)
        return;
    c->as->crashing = true;
    zka_close(c);
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

/* A session, a socket, timers and a mailbox per client: nothing shared,
 * so a fault aimed at one client of a group hits it alone. */
const struct lock_async_ops zk_sequential_async = {
    .client_faults = true,
    .open = zks_open,
    .acquire = zka_acquire,
    .release = zka_release,
    .close = zka_close,
    .crash = zka_crash,
};

const struct lock_async_ops zk_ephemeral_async = {
    .client_faults = true,
    .open = zke_open,
    .acquire = zka_acquire,
    .release = zka_release,
    .close = zka_close,
    .crash = zka_crash,
};
