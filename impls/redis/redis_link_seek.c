/*
 * redis_link_seek.c - finding the Redis store on the event loop
 * (redis_link.h), for the loop link (redis_link_loop.c) and redisson's
 * group pub/sub connection (redisson_pubsub.c).
 *
 * A single server is connected to at once. With sentinels the store is
 * found as the blocking redis_store_open finds it: ask each sentinel for
 * the master, connect to the one named and check with ROLE that it says
 * master; while a failover is under way, ask again every
 * REDIS_SENTINEL_RETRY_NS until REDIS_SENTINEL_SEARCH_NS has passed or the
 * run stops (redis_common.h: the same steps and times in either mode).
 */
#include "redis_link.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_common.h"


void redis_seek_drop(redisAsyncContext **slot)
{
    redisAsyncContext *ac = *slot;
    *slot = NULL;
    if (!ac)
        return;
    ac->data = NULL;
    redisAsyncFree(ac);
}

void redis_seek_down(struct redis_seek *s, redisAsyncContext *ac)
{
    if (s->ac == ac)
        s->ac = NULL;
    if (s->sac == ac)
        s->sac = NULL;
}

static void connected(struct redis_seek *s, bool ok, const struct lab_err *err)
{
    s->checking = false;
    if (!ok)
        redis_seek_drop(&s->ac);
    s->found(s, ok, err);
}

/* This round found nothing: again shortly, or give up. */
static void search_again(struct redis_seek *s, const struct lab_err *err)
{
    redis_seek_drop(&s->sac);
    redis_seek_drop(&s->ac);
    s->checking = false;
    if (lab_now_ns() + REDIS_SENTINEL_RETRY_NS >= s->deadline || *s->env->stop) {
        connected(s, false, err);
        return;
    }
    s->sentinel = 0;
    evloop_timer_at(s->L, &s->timer, lab_now_ns() + REDIS_SENTINEL_RETRY_NS);
}

static void ask_sentinel(struct redis_seek *s);

static void on_role(redisAsyncContext *ac, void *reply, void *priv)
{
    struct redis_seek *s = priv;
    if (!ac->data || ac != s->ac || !s->checking)
        return;
    redisReply *r = reply;
    if (redis_says_master(r)) {
        connected(s, true, NULL);
        return;
    }
    struct lab_err err;
    lab_err_set(&err, EAGAIN, "the server the sentinels name is not a master");
    search_again(s, &err); /* the master they name is down or demoted: wait for the switch */
}

static void on_sentinel(redisAsyncContext *ac, void *reply, void *priv)
{
    struct redis_seek *s = priv;
    if (!ac->data || ac != s->sac)
        return;
    redisReply *r = reply;
    struct lab_err err = {0};
    bool named = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                 r->element[0]->type == REDIS_REPLY_STRING &&
                 r->element[1]->type == REDIS_REPLY_STRING;
    char host[64] = "";
    int port = 0;
    if (named) {
        snprintf(host, sizeof host, "%s", r->element[0]->str);
        port = atoi(r->element[1]->str);
    }
    redis_seek_drop(&s->sac); /* done with (hiredis frees it after this callback) */
    if (!named) { /* down, or it knows no such master: ask the next */
        s->sentinel++;
        ask_sentinel(s);
        return;
    }
    s->ac = evloop_redis_connect(s->L, s->what, host, port, s->data, s->down, &err);
    if (!s->ac || redisAsyncCommand(s->ac, on_role, s, "ROLE") != REDIS_OK) {
        search_again(s, &err);
        return;
    }
    s->checking = true;
}

static void ask_sentinel(struct redis_seek *s)
{
    const struct lock_servers *sv = s->env->servers;
    struct lab_err err = {0};
    while (s->sentinel < sv->n) {
        const struct lock_endpoint *ep = &sv->node[s->sentinel];
        s->sac = evloop_redis_connect(s->L, "Redis sentinel", ep->host, ep->port, s->data,
                                      s->down, &err);
        if (s->sac && redisAsyncCommand(s->sac, on_sentinel, s,
                                        "SENTINEL get-master-addr-by-name %s",
                                        sv->sentinel_master) == REDIS_OK)
            return;
        redis_seek_drop(&s->sac);
        s->sentinel++;
    }
    lab_err_set(&err, EHOSTUNREACH, "no sentinel named a master for %s", sv->sentinel_master);
    search_again(s, &err);
}

static void on_timer(struct ev_timer *t)
{
    struct redis_seek *s = (struct redis_seek *)((char *)t - offsetof(struct redis_seek, timer));
    if (*s->env->stop) {
        struct lab_err err;
        lab_err_set(&err, ECANCELED, "redis: the run is stopping");
        connected(s, false, &err);
        return;
    }
    ask_sentinel(s);
}

void redis_seek_init(struct redis_seek *s, struct evloop *L, const struct lock_env *env,
                     const char *what, void *data, evloop_redis_down_fn down, redis_seek_fn found)
{
    memset(s, 0, sizeof *s);
    s->L = L;
    s->env = env;
    s->what = what;
    s->data = data;
    s->down = down;
    s->found = found;
    evloop_timer_init(&s->timer, on_timer);
}

void redis_seek_start(struct redis_seek *s)
{
    struct lab_err err = {0};
    evloop_timer_cancel(s->L, &s->timer);
    redis_seek_drop(&s->ac);
    redis_seek_drop(&s->sac);
    s->checking = false;
    if (*s->env->stop) {
        lab_err_set(&err, ECANCELED, "redis: the run is stopping");
        connected(s, false, &err);
        return;
    }
    const struct lock_servers *sv = s->env->servers;
    if (sv->sentinel_master[0]) {
        s->deadline = lab_now_ns() + REDIS_SENTINEL_SEARCH_NS;
        s->sentinel = 0;
        ask_sentinel(s);
        return;
    }
    const struct lock_endpoint *ep = &sv->node[0];
    s->ac = evloop_redis_connect(s->L, s->what, ep->host, ep->port, s->data, s->down, &err);
    connected(s, s->ac != NULL, &err);
}

void redis_seek_close(struct redis_seek *s)
{
    if (!s->L)
        return;
    evloop_timer_cancel(s->L, &s->timer);
    s->checking = false;
    redis_seek_drop(&s->ac);
    redis_seek_drop(&s->sac);
}
