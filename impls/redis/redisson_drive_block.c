/*
 * redisson_drive_block.c - the per-process driver of redisson's state
 * machine (redis_drive.h): its acts on blocking links.
 *
 * SEND and RECONNECT go to the command link (redis_link.h: a reply, or a
 * loss; a new connection to the store). The pub/sub side is the
 * process's own Redisson JVM (redisson_pubsub.c, the hub the groups use
 * too) on a loop of the client's own: SUBSCRIBE and WAIT run that loop
 * until the hub feeds the machine an event or the machine's wake_at comes,
 * looking at the run's stop every RSN_STOP_CHECK_NS. The end of an
 * acquire leaves the channel's entry (Redisson's unsubscribe). The
 * watchdog thread renews on a link of its own with the machine's renewal.
 */
#include "redis_drive.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "redis_link.h"
#include "redisson_pubsub.h"
#include "watchdog.h"

#define RSN_STOP_CHECK_NS (50LL * 1000000) /* longest wait between looks at env->stop */
#define RSN_THREAD_ID "1"                 /* a client process is one thread */

struct lock_client {
    const struct lock_env *env;
    struct rsn_sm m;
    struct redis_blink link;
    struct rsn_sm w;       /* the watchdog thread's renewals, on wd_link */
    struct redis_blink wd_link;
    struct watchdog *wd;   /* NULL: a lock with a lease */
    struct evloop *L;      /* the pub/sub's loop */
    struct rsn_member ps;  /* the client in its hub */
    bool fed;              /* the hub fed the machine: next is its act */
    enum rsn_act next;
};

/* ---------------------------------------------------------------- pub/sub */

static void ps_next(struct rsn_member *me, enum rsn_act act)
{
    struct lock_client *c = (struct lock_client *)((char *)me - offsetof(struct lock_client, ps));
    c->fed = true;
    c->next = act;
}

/* SUBSCRIBE or WAIT: the next act at once, or when the hub feeds the
 * machine, or the machine's timer at its wake_at (or the run's stop). */
static enum rsn_act ps_act(struct lock_client *c, enum rsn_act act)
{
    if (c->link.rc)
        rsn_ps_master(&c->ps, c->link.rc->tcp.host, c->link.rc->tcp.port);
    if (rsn_ps_act(&c->ps, &act, lab_now_ns()))
        return act;
    c->fed = false;
    for (int64_t left; (left = c->m.wake_at - lab_now_ns()) > 0 && !*c->env->stop;) {
        evloop_run_once(c->L, left < RSN_STOP_CHECK_NS ? left : RSN_STOP_CHECK_NS);
        if (c->fed)
            return c->next;
    }
    rsn_ps_unpark(&c->ps);
    return rsn_sm_timer(&c->m, lab_now_ns());
}

/* ---------------------------------------------------------------- the acts */

static void watch(struct lock_client *c)
{
    struct rsn_sm *m = &c->m;
    if (m->watch == RS_WATCH_ARM && c->wd)
        watchdog_arm(c->wd, m->held_key);
    else if (m->watch == RS_WATCH_DISARM && c->wd)
        watchdog_disarm(c->wd);
    m->watch = RS_WATCH_NONE;
}

/* Do m's acts on link l (the client's, or the watchdog's for its
 * renewals) until it is done. */
static void run(struct lock_client *c, struct redis_blink *l, struct rsn_sm *m,
                enum rsn_act act)
{
    for (;;) {
        struct redis_sm_reply r;
        struct lab_err err = {0};
        const char *why;
        if (m == &c->m) /* never from the watchdog's own thread */
            watch(c);
        switch (act) {
        case RSN_SEND:
            act = redis_blink_call(l, m->argc, m->argv, &r, &why)
                      ? rsn_sm_reply(m, &r, lab_now_ns())
                      : rsn_sm_lost(m, why, lab_now_ns());
            break;
        case RSN_RECONNECT: {
            bool ok = redis_blink_reconnect(l, &err);
            act = rsn_sm_reconnected(m, ok, &err, lab_now_ns());
            break;
        }
        case RSN_SUBSCRIBE:
        case RSN_WAIT:
            act = ps_act(c, act);
            break;
        case RSN_DONE:
            return;
        }
    }
}

/* ---------------------------------------------------------------- watchdog */

/* The renewal, the machine's, on the watchdog's own link (the thread's
 * only user of wd_link and w): 1 extended, 0 no longer ours, -1 error. */
static int rsn_renew(void *arg, const char *key)
{
    struct lock_client *c = arg;
    run(c, &c->wd_link, &c->w, rsn_sm_renew(&c->w, key, lab_now_ns()));
    return c->w.renewed;
}

/* ---------------------------------------------------------------- hooks */

void rsn_block_close(struct lock_client *c)
{
    if (!c)
        return;
    watchdog_stop(c->wd); /* first: its renewals read the machine */
    redis_blink_close(&c->wd_link);
    redis_blink_close(&c->link);
    if (c->ps.hub) {
        rsn_ps_leave(&c->ps);
        rsn_hub_put(c->ps.hub);
    }
    if (c->L)
        evloop_free(c->L);
    free(c);
}

int rsn_block_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    redis_blink_init(&c->link, env, "Redis");
    redis_blink_init(&c->wd_link, env, "Redis (watchdog)");
    struct rsn_hub *hub = (c->L = evloop_new(err)) ? rsn_hub_get(c->L, err) : NULL;
    if (!hub)
        goto fail;
    rsn_ps_init(&c->ps, hub, env, &c->m, ps_next);
    char owner[80];
    snprintf(owner, sizeof owner, "%s:%s", rsn_hub_token(hub), RSN_THREAD_ID);
    rsn_sm_init(&c->m, env, owner);
    run(c, &c->link, &c->m, rsn_sm_open(&c->m, lab_now_ns()));
    if (c->m.open_rc != 0) {
        *err = c->m.err;
        goto fail;
    }
    if (c->m.watchdog) {
        rsn_sm_init_renewal(&c->w, &c->m);
        c->wd = watchdog_start(c->m.lease_ns, rsn_renew, c, env->stats, err);
        if (!c->wd)
            goto fail;
    }
    *out = c;
    return 0;
fail:
    rsn_block_close(c);
    return -1;
}

enum lock_status rsn_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                   struct lab_err *err)
{
    run(c, &c->link, &c->m, rsn_sm_acquire(&c->m, key, wait_ns, lab_now_ns()));
    rsn_ps_leave(&c->ps); /* as Redisson, stop listening */
    if (c->m.status == LOCK_ERROR)
        *err = c->m.err;
    return c->m.status;
}

enum release_status rsn_block_release(struct lock_client *c, const char *key,
                                      struct lab_err *err)
{
    run(c, &c->link, &c->m, rsn_sm_release(&c->m, key, lab_now_ns()));
    watch(c);
    if (c->m.release == RELEASE_ERROR)
        *err = c->m.err;
    return c->m.release;
}
