/*
 * redis_drive_group.c - the client groups' driver of the Redis state
 * machine (redis_drive.h): the machine's acts on a loop link
 * (redis_link.h) and the group's event loop.
 *
 * SEND and RECONNECT go to the link, whose answer is fed back; SLEEP is a
 * timer. An outcome found inside the hook that started the operation is
 * handed over from the loop, never from inside that call (lock.h).
 *
 * A machine and its link are a lane: the client's commands go on one; a
 * design that renews its lock has a second for its renewals (a second
 * machine, redis_sm_init_renewal), run by a per-client timer on
 * watchdog.h's schedule, as the blocking driver's watchdog thread renews
 * on a connection of its own. Every socket and timer is the client's.
 */
#include "redis_drive.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lock_caller.h"
#include "redis_link.h"
#include "watchdog.h"

/* A machine and its link. */
struct lane {
    struct lock_client *c;
    struct redis_sm *m;      /* NULL: no such lane (a design that renews not) */
    struct redis_alink link;
    struct ev_timer timer;   /* SLEEP */
};

struct lock_client {
    const struct lock_env *env;
    struct evloop *L;
    char token[40];          /* this client's identity: 128 random bits in hex */
    struct redis_sm m, renewal;
    struct lane cmd;         /* the client's commands */
    struct lane renew;       /* its renewals */
    struct watch_plan plan;  /* the renewals' schedule */
    struct ev_timer watch_timer;
    bool armed, renewing;    /* a hold to renew; a renewal under way */
    unsigned gen, renew_gen; /* bumped by every arm and disarm; the renewal's */
    int64_t armed_at, renew_sent;
    char watch_key[256];
    struct lock_caller k;
};

static void run(struct lane *l, enum redis_sm_act act);

/* ------------------------------------------------------------ renewals */

static void watch_next(struct lock_client *c)
{
    if (c->armed && !c->renewing)
        evloop_timer_at(c->L, &c->watch_timer, watch_plan_next(&c->plan, lab_now_ns()));
}

static void watch(struct lock_client *c)
{
    struct redis_sm *m = &c->m;
    if (m->watch == RSM_WATCH_ARM && c->renew.m) {
        snprintf(c->watch_key, sizeof c->watch_key, "%s", m->key);
        c->armed = true;
        c->gen++;
        c->armed_at = lab_now_ns();
        watch_plan_arm(&c->plan, c->armed_at);
        watch_next(c);
    } else if (m->watch == RSM_WATCH_DISARM) {
        c->armed = false;
        c->gen++;
        evloop_timer_cancel(c->L, &c->watch_timer);
    }
    m->watch = RSM_WATCH_NONE;
}

static void on_watch_timer(struct ev_timer *t)
{
    struct lock_client *c =
        (struct lock_client *)((char *)t - offsetof(struct lock_client, watch_timer));
    if (!c->armed || c->renewing || *c->env->stop)
        return;
    c->renewing = true;
    c->renew_gen = c->gen;
    c->renew_sent = lab_now_ns();
    run(&c->renew, redis_sm_renew(&c->renewal, c->watch_key, c->renew_sent));
}

static void renewed(struct lock_client *c)
{
    c->renewing = false;
    bool keep = watch_plan_renewed(&c->plan, c->renewal.renewed, c->renew_sent, lab_now_ns(),
                                   c->env->stats);
    if (c->renew_gen != c->gen) /* a hold that ended meanwhile: the new one's plan */
        watch_plan_arm(&c->plan, c->armed_at);
    else if (!keep)
        c->armed = false;
    watch_next(c);
}

/* ------------------------------------------------------------ the acts */

static struct lane *of_link(struct redis_alink *link)
{
    return (struct lane *)((char *)link - offsetof(struct lane, link));
}

static void replied(struct redis_alink *link, const struct redis_sm_reply *r, const char *why)
{
    struct lane *l = of_link(link);
    run(l, r ? redis_sm_reply(l->m, r, lab_now_ns()) : redis_sm_lost(l->m, why, lab_now_ns()));
}

static void connected(struct redis_alink *link, bool ok, const struct lab_err *err)
{
    struct lane *l = of_link(link);
    run(l, redis_sm_reconnected(l->m, ok, err, lab_now_ns()));
}

static void run(struct lane *l, enum redis_sm_act act)
{
    struct lock_client *c = l->c;
    struct redis_sm *m = l->m;
    for (;;) {
        watch(c);
        switch (act) {
        case REDIS_SM_SEND:
            redis_alink_send(&l->link, m->argc, m->argv);
            return;
        case REDIS_SM_RECONNECT:
            redis_alink_reconnect(&l->link);
            return;
        case REDIS_SM_SLEEP:
            evloop_timer_at(c->L, &l->timer, m->wake_at);
            return;
        case REDIS_SM_FAILPOINT: /* its action stops the whole group */
            failpoint_hit(m->fp, c->env->stop);
            act = redis_sm_resume(m, lab_now_ns());
            continue;
        case REDIS_SM_DONE:
            if (l == &c->renew) {
                renewed(c);
                return;
            }
            if (c->k.opened && m->open_rc == 0 && c->renew.m) /* its script loaded */
                redis_sm_init_renewal(&c->renewal, m);
            lock_caller_done(&c->k, m->open_rc, m->status, m->release, &m->err);
            return;
        }
    }
}

static void on_timer(struct ev_timer *t)
{
    struct lane *l = (struct lane *)((char *)t - offsetof(struct lane, timer));
    run(l, redis_sm_timer(l->m, lab_now_ns()));
}

/* ---------------------------------------------------------------- hooks */

static void lane_init(struct lane *l, struct lock_client *c, struct redis_sm *m)
{
    l->c = c;
    l->m = m;
    evloop_timer_init(&l->timer, on_timer);
    redis_alink_init(&l->link, c->L, c->env, replied, connected);
}

static void lane_close(struct lane *l)
{
    if (!l->m)
        return;
    evloop_timer_cancel(l->c->L, &l->timer);
    redis_alink_close(&l->link);
}

int redis_group_open(struct lock_client **out, const struct lock_env *env, struct evloop *loop,
                     const struct redis_sm_design *d, lock_opened_fn opened, void *arg,
                     struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    c->L = loop;
    lock_caller_init(&c->k, loop);
    evloop_timer_init(&c->watch_timer, on_watch_timer);
    lane_init(&c->cmd, c, &c->m);
    int rc = lab_random_hex(c->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        redis_group_close(c);
        return -1;
    }
    redis_sm_init(&c->m, d, env, c->token);
    if (redis_sm_renews(&c->m)) {
        lane_init(&c->renew, c, &c->renewal);
        watch_plan_init(&c->plan, env->ttl_ns);
    }
    lock_caller_begin(&c->k, opened, NULL, NULL, arg);
    run(&c->cmd, redis_sm_open(&c->m, lab_now_ns()));
    lock_caller_end(&c->k);
    *out = c;
    return 0;
}

void redis_group_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                         lock_acquired_fn done, void *arg)
{
    lock_caller_begin(&c->k, NULL, done, NULL, arg);
    run(&c->cmd, redis_sm_acquire(&c->m, key, wait_ns, lab_now_ns()));
    lock_caller_end(&c->k);
}

void redis_group_release(struct lock_client *c, const char *key, lock_released_fn done,
                         void *arg)
{
    lock_caller_begin(&c->k, NULL, NULL, done, arg);
    run(&c->cmd, redis_sm_release(&c->m, key, lab_now_ns()));
    lock_caller_end(&c->k);
}

void redis_group_close(struct lock_client *c)
{
    if (!c)
        return;
    evloop_timer_cancel(c->L, &c->watch_timer);
    lock_caller_close(&c->k);
    lane_close(&c->cmd);
    lane_close(&c->renew);
    free(c);
}
