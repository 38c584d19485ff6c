/*
 * redisson_drive_group.c - the client groups' driver of redisson's state
 * machine (redisson_drive.h): its acts on the group's event loop, with
 * the group's process behaving as one Redisson JVM does.
 *
 * Each logical client has its machine, its own command connection (found
 * by the group drivers' search, redis_drive_seek.c: the single server or
 * the sentinels' master), a command timeout of REDIS_TIMEOUT_MS (a timeout
 * drops the connection and is fed as a loss), its identity (Redisson's
 * owner "<uuid>:<thread id>": the group's random uuid and the client's
 * index + 1) and its counters. Outcomes found inside the hook that started
 * an operation are delivered from the loop (lock.h).
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
#include "redisson_drive.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evloop_redis.h"
#include "redis_common.h"
#include "redis_drive.h"
#include "redisson_pubsub.h"

#define CMD_TIMEOUT_NS ((int64_t)REDIS_TIMEOUT_MS * 1000000)

enum tkind { T_NONE, T_DELIVER, T_CONNECT, T_WAIT };

/* One logical client's side, in lock_client.ext. */
struct rsn_gc {
    struct lock_client *client;
    struct evloop *L;
    struct rsn_sm m;
    struct rsn_member ps;       /* its place in the group's pub/sub */
    struct redis_seek seek;     /* seek.ac: the command connection */
    bool inflight;              /* a command awaits its reply */
    bool in_hook;
    struct ev_timer timer;      /* enum tkind */
    enum tkind tkind;
    struct ev_timer cmd_timer;
    int64_t cmd_deadline;
    lock_opened_fn opened;
    lock_acquired_fn acquired;
    lock_released_fn released;
    void *arg;
};

static struct rsn_gc *gc(struct lock_client *c)
{
    return c->ext;
}

static void run(struct rsn_gc *a, enum rsn_act act);

static void arm(struct rsn_gc *a, enum tkind kind, int64_t at)
{
    a->tkind = kind;
    evloop_timer_at(a->L, &a->timer, at);
}

static bool awaits_ps(const struct rsn_gc *a)
{
    return a->m.step == RS_SUBSCRIBING || a->m.step == RS_WAITING;
}

/* ---------------------------------------------------------------- pub/sub */

static struct rsn_gc *of_member(struct rsn_member *me)
{
    return (struct rsn_gc *)((char *)me - offsetof(struct rsn_gc, ps));
}

static void ps_subscribed(struct rsn_member *me)
{
    struct rsn_gc *a = of_member(me);
    if (a->m.step != RS_SUBSCRIBING)
        return;
    evloop_timer_cancel(a->L, &a->timer);
    run(a, rsn_sm_subscribed(&a->m, lab_now_ns()));
}

static void ps_woken(struct rsn_member *me, int64_t exit_ns, int64_t arrive_ns)
{
    struct rsn_gc *a = of_member(me);
    if (a->m.step != RS_WAITING)
        return;
    evloop_timer_cancel(a->L, &a->timer);
    run(a, rsn_sm_message(&a->m, exit_ns, arrive_ns, lab_now_ns()));
}

static void ps_down(struct rsn_member *me, enum rsn_ps_event ev, const char *why)
{
    struct rsn_gc *a = of_member(me);
    if (!awaits_ps(a))
        return;
    evloop_timer_cancel(a->L, &a->timer);
    struct lab_err err;
    lab_err_set(&err, ev == RSN_PS_FAILED ? EHOSTUNREACH : EIO, "redis pub/sub: %s", why);
    int64_t now = lab_now_ns();
    run(a, ev == RSN_PS_LOST    ? rsn_sm_ps_lost(&a->m, err.msg, now)
           : ev == RSN_PS_ERROR ? rsn_sm_ps_error(&a->m, err.msg, now)
                                : rsn_sm_ps_failed(&a->m, &err, now));
}

/* ---------------------------------------------------------------- commands */

static void on_reply(redisAsyncContext *ac, void *reply, void *priv);

static void on_down(redisAsyncContext *ac)
{
    struct lock_client *c = ac->data;
    if (c && c->ext)
        redis_seek_down(&gc(c)->seek, ac);
}

static void found(struct redis_seek *s, bool ok, const struct lab_err *err)
{
    struct rsn_gc *a = (struct rsn_gc *)((char *)s - offsetof(struct rsn_gc, seek));
    run(a, rsn_sm_reconnected(&a->m, ok, err, lab_now_ns()));
}

static void send_cmd(struct rsn_gc *a)
{
    redisAsyncContext *ac = a->seek.ac;
    if (!ac || redisAsyncCommandArgv(ac, on_reply, a->client, a->m.argc, a->m.argv, NULL) !=
                   REDIS_OK) {
        run(a, rsn_sm_lost(&a->m, ac ? ac->errstr : "connection lost", lab_now_ns()));
        return;
    }
    a->inflight = true;
    a->cmd_deadline = lab_now_ns() + CMD_TIMEOUT_NS;
    evloop_timer_at(a->L, &a->cmd_timer, a->cmd_deadline);
}

static void deliver(struct rsn_gc *a)
{
    struct rsn_sm *m = &a->m;
    if (a->opened) {
        lock_opened_fn done = a->opened;
        a->opened = NULL;
        done(a->arg, m->open_rc, &m->err);
    } else if (a->acquired) {
        lock_deliver_acquired(&a->acquired, a->arg, m->status, &m->err);
    } else if (a->released) {
        lock_deliver_released(&a->released, a->arg, m->release, &m->err);
    }
}

static void run(struct rsn_gc *a, enum rsn_act act)
{
    struct rsn_sm *m = &a->m;
    for (;;) {
        m->watch = RS_WATCH_NONE; /* no watchdog in groups */
        switch (act) {
        case RSN_SEND:
            send_cmd(a);
            return;
        case RSN_RECONNECT:
            arm(a, T_CONNECT, 0);
            return;
        case RSN_SUBSCRIBE:
            if (rsn_ps_join(&a->ps) != 0) {
                struct lab_err err;
                lab_err_set(&err, ENOMEM, "out of memory");
                act = rsn_sm_ps_failed(m, &err, lab_now_ns());
                continue;
            }
            if (rsn_ps_ready(&a->ps)) {
                act = rsn_sm_subscribed(m, lab_now_ns());
                continue;
            }
            arm(a, T_WAIT, m->wake_at); /* first: a failure below re-arms it */
            rsn_ps_subscribe(&a->ps);
            return;
        case RSN_WAIT: {
            int64_t exit_ns, arrive_ns;
            if (!rsn_ps_ready(&a->ps)) { /* the subscription went while it tried */
                act = rsn_sm_ps_lost(m, "pub/sub connection lost", lab_now_ns());
                continue;
            }
            if (rsn_ps_take_permit(&a->ps, &exit_ns, &arrive_ns)) {
                act = rsn_sm_message(m, exit_ns, arrive_ns, lab_now_ns());
                continue;
            }
            rsn_ps_park(&a->ps);
            arm(a, T_WAIT, m->wake_at);
            return;
        }
        case RSN_DONE:
            if (a->acquired)
                rsn_ps_leave(&a->ps);
            if (a->in_hook)
                arm(a, T_DELIVER, 0);
            else
                deliver(a);
            return;
        }
    }
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    struct lock_client *c = priv;
    struct rsn_gc *a = c ? gc(c) : NULL;
    if (!a || ac != a->seek.ac || !a->inflight || a->seek.checking)
        return;
    a->inflight = false;
    evloop_timer_cancel(a->L, &a->cmd_timer);
    redisReply *r = reply;
    if (!r) {
        a->seek.ac = NULL; /* hiredis frees it after this */
        run(a, rsn_sm_lost(&a->m, ac->errstr[0] ? ac->errstr : "connection lost",
                           lab_now_ns()));
        return;
    }
    struct rsn_reply rr;
    rsn_reply_from_hiredis(r, &rr);
    run(a, rsn_sm_reply(&a->m, &rr, lab_now_ns()));
}

static void on_timer(struct ev_timer *t)
{
    struct rsn_gc *a = (struct rsn_gc *)((char *)t - offsetof(struct rsn_gc, timer));
    enum tkind kind = a->tkind;
    a->tkind = T_NONE;
    switch (kind) {
    case T_DELIVER:
        deliver(a);
        break;
    case T_CONNECT:
        if (a->seek.ac)
            a->client->reconnects++;
        redis_seek_start(&a->seek);
        break;
    case T_WAIT:
        if (!awaits_ps(a))
            break;
        rsn_ps_unpark(&a->ps);
        run(a, rsn_sm_timer(&a->m, lab_now_ns()));
        break;
    case T_NONE:
        break;
    }
}

static void on_cmd_timeout(struct ev_timer *t)
{
    struct rsn_gc *a = (struct rsn_gc *)((char *)t - offsetof(struct rsn_gc, cmd_timer));
    if (!a->inflight)
        return;
    if (lab_now_ns() < a->cmd_deadline) { /* the run's stop made it due early */
        evloop_timer_at(a->L, &a->cmd_timer, a->cmd_deadline);
        return;
    }
    a->inflight = false;
    redis_seek_drop(&a->seek.ac);
    run(a, rsn_sm_lost(&a->m, "command timed out", lab_now_ns()));
}

/* ---------------------------------------------------------------- hooks */

static void rsn_group_close(struct lock_client *c)
{
    if (!c)
        return;
    struct rsn_gc *a = gc(c);
    a->opened = NULL;
    a->acquired = NULL;
    a->released = NULL;
    a->inflight = false;
    rsn_ps_leave(&a->ps);
    evloop_timer_cancel(a->L, &a->timer);
    evloop_timer_cancel(a->L, &a->cmd_timer);
    redis_seek_close(&a->seek);
    rsn_hub_put(a->ps.hub);
    free(a);
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
    struct rsn_gc *a = calloc(1, sizeof *a);
    struct rsn_hub *hub = c && a ? rsn_hub_get(loop, err) : NULL;
    if (!hub) {
        if (!c || !a)
            lab_err_set(err, ENOMEM, "out of memory");
        free(c);
        free(a);
        return -1;
    }
    c->env = env;
    c->ext = a;
    a->client = c;
    a->L = loop;
    a->ps = (struct rsn_member){.hub = hub, .env = env, .m = &a->m, .subscribed = ps_subscribed,
                                .woken = ps_woken, .down = ps_down};
    rsn_ps_init(&a->ps); /* the client's owner is current (the group opens it so) */
    evloop_timer_init(&a->timer, on_timer);
    evloop_timer_init(&a->cmd_timer, on_cmd_timeout);
    redis_seek_init(&a->seek, loop, env, "Redis", c, on_down, found);
    snprintf(c->token, sizeof c->token, "%s", rsn_hub_token(hub));
    char owner[80];
    snprintf(owner, sizeof owner, "%s:%d", rsn_hub_token(hub), env->client_id + 1);
    rsn_sm_init(&a->m, env, owner);
    a->opened = opened;
    a->arg = arg;
    a->in_hook = true;
    run(a, rsn_sm_open(&a->m, lab_now_ns()));
    a->in_hook = false;
    *out = c;
    return 0;
}

static void rsn_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                              lock_acquired_fn done, void *arg)
{
    struct rsn_gc *a = gc(c);
    a->acquired = done;
    a->arg = arg;
    a->in_hook = true;
    run(a, rsn_sm_acquire(&a->m, key, wait_ns, lab_now_ns()));
    a->in_hook = false;
}

static void rsn_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                              void *arg)
{
    struct rsn_gc *a = gc(c);
    a->released = done;
    a->arg = arg;
    a->in_hook = true;
    run(a, rsn_sm_release(&a->m, key, lab_now_ns()));
    a->in_hook = false;
}

const struct lock_async_ops rsn_group_ops = {
    .client_faults = true, /* all its own but the hub, which hands over as its owner */
    .open = rsn_group_open,
    .acquire = rsn_group_acquire,
    .release = rsn_group_release,
    .close = rsn_group_close,
};
