/*
 * redisson_drive_group.c - the client groups' driver of redisson's state
 * machine (redis_drive.h): its acts on the group's event loop, with
 * the group's process behaving as one Redisson JVM does.
 *
 * Each logical client has its machine, its own command link (redis_link.h:
 * the single server or the sentinels' master, a command timeout), its
 * identity (Redisson's owner "<uuid>:<thread id>": the group's random uuid
 * and the client's index + 1) and its counters. Outcomes found inside the
 * hook that started an operation are delivered from the loop (lock.h).
 *
 * The pub/sub side is the group's one Redisson JVM (redisson_pubsub.c):
 * SUBSCRIBE joins the channel's entry and asks for its subscription,
 * WAIT takes a permit left by a message or parks on the entry's
 * semaphore until a message, the machine's wake_at, or a pub/sub event;
 * the end of an acquire leaves the entry. The hub hands its events over
 * from the loop, as the client's owner (a paused client gets them once
 * continued); one that finds the machine no longer waiting for it (its
 * own timer came first) is dropped.
 *
 * Everything of a client but the hub is its own, so a fault may hold or
 * kill one client alone (client_faults). A killed client is closed: its
 * command connection closes unsaid, it leaves its entry as the group's
 * JVM's PublishSubscribe would once its thread is gone (the entry's last
 * member unsubscribes on the shared connection, the JVM living on).
 */
#include "redis_drive.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "lock_caller.h"
#include "redis_link.h"
#include "redisson_pubsub.h"

struct lock_client {
    const struct lock_env *env;
    struct evloop *L;
    struct rsn_sm m;
    struct redis_alink link;    /* the command connection */
    struct rsn_member ps;       /* its place in the group's pub/sub */
    struct ev_timer timer;      /* the wait at SUBSCRIBE or WAIT */
    struct lock_caller k;
};

static void run(struct lock_client *c, enum rsn_act act);

static bool awaits_ps(const struct lock_client *c)
{
    return c->m.step == RS_SUBSCRIBING || c->m.step == RS_WAITING;
}

/* ---------------------------------------------------------------- pub/sub */

static struct lock_client *of_member(struct rsn_member *me)
{
    return (struct lock_client *)((char *)me - offsetof(struct lock_client, ps));
}

/* The hub fed the machine an event of the pub/sub: its next act. */
static void ps_next(struct rsn_member *me, enum rsn_act act)
{
    struct lock_client *c = of_member(me);
    evloop_timer_cancel(c->L, &c->timer);
    run(c, act);
}

/* ---------------------------------------------------------------- commands */

static struct lock_client *of_link(struct redis_alink *l)
{
    return (struct lock_client *)((char *)l - offsetof(struct lock_client, link));
}

static void replied(struct redis_alink *l, const struct redis_sm_reply *r, const char *why)
{
    struct lock_client *c = of_link(l);
    run(c, r ? rsn_sm_reply(&c->m, r, lab_now_ns()) : rsn_sm_lost(&c->m, why, lab_now_ns()));
}

static void connected(struct redis_alink *l, bool ok, const struct lab_err *err)
{
    struct lock_client *c = of_link(l);
    run(c, rsn_sm_reconnected(&c->m, ok, err, lab_now_ns()));
}

static void run(struct lock_client *c, enum rsn_act act)
{
    struct rsn_sm *m = &c->m;
    for (;;) {
        m->watch = RS_WATCH_NONE; /* no watchdog in groups */
        switch (act) {
        case RSN_SEND:
            redis_alink_send(&c->link, m->argc, m->argv);
            return;
        case RSN_RECONNECT:
            redis_alink_reconnect(&c->link);
            return;
        case RSN_SUBSCRIBE:
        case RSN_WAIT:
            if (c->link.seek.ac)
                rsn_ps_master(&c->ps, c->link.seek.ac->c.tcp.host, c->link.seek.ac->c.tcp.port);
            if (rsn_ps_act(&c->ps, &act, lab_now_ns()))
                continue;
            evloop_timer_at(c->L, &c->timer, m->wake_at);
            return;
        case RSN_DONE:
            if (c->k.acquired)
                rsn_ps_leave(&c->ps);
            lock_caller_done(&c->k, m->open_rc, m->status, m->release, &m->err);
            return;
        }
    }
}

static void on_timer(struct ev_timer *t)
{
    struct lock_client *c = (struct lock_client *)((char *)t - offsetof(struct lock_client, timer));
    if (!awaits_ps(c))
        return;
    rsn_ps_unpark(&c->ps);
    run(c, rsn_sm_timer(&c->m, lab_now_ns()));
}

/* ---------------------------------------------------------------- hooks */

static void rsn_group_close(struct lock_client *c)
{
    if (!c)
        return;
    lock_caller_close(&c->k);
    rsn_ps_leave(&c->ps);
    evloop_timer_cancel(c->L, &c->timer);
    redis_alink_close(&c->link);
    rsn_hub_put(c->ps.hub);
    free(c);
}

static int rsn_group_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    *out = NULL;
    const struct rsn_options *opt = env->options;
    if (opt->lease_ns <= 0) {
        lab_err_set(err, ENOTSUP, "redisson's watchdog cannot run in client groups: give "
                    "lock.ttl (its leaseTime) or use run.clients_per_process 1");
        return -1;
    }
    struct lock_client *c = calloc(1, sizeof *c);
    struct rsn_hub *hub = c ? rsn_hub_get(loop, err) : NULL;
    if (!hub) {
        if (!c)
            lab_err_set(err, ENOMEM, "out of memory");
        free(c);
        return -1;
    }
    c->env = env;
    c->L = loop;
    rsn_ps_init(&c->ps, hub, env, &c->m, ps_next); /* the client's owner is current */
    evloop_timer_init(&c->timer, on_timer);
    lock_caller_init(&c->k, loop);
    redis_alink_init(&c->link, loop, env, replied, connected);
    char owner[80];
    snprintf(owner, sizeof owner, "%s:%d", rsn_hub_token(hub), env->client_id + 1);
    rsn_sm_init(&c->m, env, owner);
    lock_caller_begin(&c->k, opened, NULL, NULL, arg);
    run(c, rsn_sm_open(&c->m, lab_now_ns()));
    lock_caller_end(&c->k);
    *out = c;
    return 0;
}

static void rsn_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                              lock_acquired_fn done, void *arg)
{
    lock_caller_begin(&c->k, NULL, done, NULL, arg);
    run(c, rsn_sm_acquire(&c->m, key, wait_ns, lab_now_ns()));
    lock_caller_end(&c->k);
}

static void rsn_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                              void *arg)
{
    lock_caller_begin(&c->k, NULL, NULL, done, arg);
    run(c, rsn_sm_release(&c->m, key, lab_now_ns()));
    lock_caller_end(&c->k);
}

const struct lock_async_ops rsn_group_ops = {
    .client_faults = true, /* all its own but the hub, which hands over as its owner */
    .open = rsn_group_open,
    .acquire = rsn_group_acquire,
    .release = rsn_group_release,
    .close = rsn_group_close,
};
