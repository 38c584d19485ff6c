/*
 * redis_link_loop.c - the loop link (redis_link.h): one hiredis
 * asynchronous connection to the store on the group's event loop, found
 * by the search (redis_link_seek.c), a command at a time with its
 * timeout; and the hand-over of a group hook's outcome to its caller.
 */
#include "redis_link.h"

#include <stddef.h>

#include "redis_common.h"

#define CMD_TIMEOUT_NS ((int64_t)REDIS_TIMEOUT_MS * 1000000)

static void on_down(redisAsyncContext *ac)
{
    struct redis_alink *l = ac->data;
    if (l)
        redis_seek_down(&l->seek, ac);
}

static void found(struct redis_seek *s, bool ok, const struct lab_err *err)
{
    struct redis_alink *l = (struct redis_alink *)((char *)s - offsetof(struct redis_alink, seek));
    l->connected(l, ok, err);
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    struct redis_alink *l = priv;
    if (!ac->data || ac != l->seek.ac || !l->inflight || l->seek.checking)
        return; /* a connection dropped on purpose, or a ROLE check's */
    l->inflight = false;
    evloop_timer_cancel(l->seek.L, &l->cmd_timer);
    redisReply *r = reply;
    if (!r) {
        l->seek.ac = NULL; /* hiredis frees it after this */
        l->replied(l, NULL, ac->errstr[0] ? ac->errstr : "connection lost");
        return;
    }
    struct redis_sm_reply rr;
    redis_sm_from_hiredis(r, &rr);
    l->replied(l, &rr, NULL);
}

/* The command timed out: drop the connection, fed as a loss. The run's
 * stop makes every timer due: a command not yet late is left to answer. */
static void on_cmd_timeout(struct ev_timer *t)
{
    struct redis_alink *l =
        (struct redis_alink *)((char *)t - offsetof(struct redis_alink, cmd_timer));
    if (!l->inflight)
        return;
    if (lab_now_ns() < l->cmd_deadline) {
        evloop_timer_at(l->seek.L, &l->cmd_timer, l->cmd_deadline);
        return;
    }
    l->inflight = false;
    redis_seek_drop(&l->seek.ac);
    l->replied(l, NULL, "command timed out");
}

static void on_reconnect(struct ev_timer *t)
{
    struct redis_alink *l =
        (struct redis_alink *)((char *)t - offsetof(struct redis_alink, reconnect));
    redis_seek_start(&l->seek);
}

void redis_alink_init(struct redis_alink *l, struct evloop *L, const struct lock_env *env,
                      redis_alink_reply_fn replied, redis_alink_connected_fn connected)
{
    redis_seek_init(&l->seek, L, env, "Redis", l, on_down, found);
    l->replied = replied;
    l->connected = connected;
    l->inflight = false;
    evloop_timer_init(&l->reconnect, on_reconnect);
    evloop_timer_init(&l->cmd_timer, on_cmd_timeout);
}

void redis_alink_send(struct redis_alink *l, int argc, const char **argv)
{
    redisAsyncContext *ac = l->seek.ac;
    if (!ac || redisAsyncCommandArgv(ac, on_reply, l, argc, argv, NULL) != REDIS_OK) {
        l->replied(l, NULL, ac ? ac->errstr : "connection lost");
        return;
    }
    l->inflight = true;
    l->cmd_deadline = lab_now_ns() + CMD_TIMEOUT_NS;
    evloop_timer_at(l->seek.L, &l->cmd_timer, l->cmd_deadline);
}

void redis_alink_reconnect(struct redis_alink *l)
{
    evloop_timer_at(l->seek.L, &l->reconnect, 0);
}

void redis_alink_close(struct redis_alink *l)
{
    if (!l->seek.L)
        return;
    evloop_timer_cancel(l->seek.L, &l->reconnect);
    evloop_timer_cancel(l->seek.L, &l->cmd_timer);
    l->inflight = false;
    redis_seek_close(&l->seek);
}
