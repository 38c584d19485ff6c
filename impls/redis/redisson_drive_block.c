/*
 * redisson_drive_block.c - the per-process driver of redisson's state
 * machine (redis_drive.h): its acts on blocking hiredis connections.
 *
 * SEND and RECONNECT go to the command link (redis_link.h: a reply, or a
 * loss; a new connection to the store). The client's own pub/sub connection,
 * opened with the client and anew at the next SUBSCRIBE after it broke:
 * SUBSCRIBE sends the command and reads until it is confirmed (every
 * earlier SUBSCRIBE too: UNSUBSCRIBE's confirmations are not waited for,
 * they are read with the next wait's replies); WAIT reads until a message
 * on the channel. Reads poll() the socket in slices of RSN_STOP_CHECK_NS
 * so that a stopping run is noticed (hiredis's SO_RCVTIMEO would leave
 * the context dead on a timeout), and note when bytes reached the socket
 * (the handoff split's arrival). Every message read is a notification.
 * A pub/sub connection that breaks is a ps_lost, an error reply a
 * ps_error, one that cannot be opened a ps_failed. The watchdog thread
 * renews on a link of its own with the machine's renewal.
 */
#include "redis_drive.h"

#include <errno.h>
#include <sys/poll.h> /* not <poll.h>: impls/poll.h shadows it on the include path */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "handoff_split.h"
#include "redis_common.h"
#include "redis_link.h"
#include "watchdog.h"

#define RSN_STOP_CHECK_NS (50LL * 1000000) /* longest sleep between looks at env->stop */
#define RSN_THREAD_ID "1"                 /* a client process is one thread */

struct lock_client {
    const struct lock_env *env;
    char token[40];        /* the JVM's uuid: 128 random bits in hex */
    struct rsn_sm m;
    struct redis_blink link;
    struct rsn_sm w;       /* the watchdog thread's renewals, on wd_link */
    struct redis_blink wd_link;
    struct watchdog *wd;   /* NULL: a lock with a lease */
    redisContext *ps;      /* pub/sub connection; NULL or failed: a new one at the next use */
    int pending_sub;       /* SUBSCRIBEs sent whose confirmation is not read yet */
    int64_t read_arrival_ns; /* when the latest bytes reached ps */
    int64_t msg_exit_ns, msg_arrive_ns; /* the latest message on the channel */
};


/* ---------------------------------------------------------------- pub/sub */

static void ps_drop(struct lock_client *c)
{
    if (c->ps)
        redisFree(c->ps);
    c->ps = NULL;
    c->pending_sub = 0;
}

/* Keep the pub/sub connection while it has not failed, else open a new
 * one. 0, or -1 with err filled. */
static int ps_ready(struct lock_client *c, struct lab_err *err)
{
    if (c->ps && !c->ps->err)
        return 0;
    ps_drop(c);
    c->ps = redis_store_open("Redis (pub/sub)", c->env, REDIS_TIMEOUT_MS, err);
    if (c->ps)
        handoff_split_arm(c->ps->fd);
    return c->ps ? 0 : -1;
}

/* One command without reading its confirmation. 0 or -1. */
static int ps_send(struct lock_client *c, const char *cmd, const char *channel)
{
    redisContext *ps = c->ps;
    const char *argv[] = {cmd, channel};
    int done = 0;
    c->env->stats->round_trips++;
    if (redisAppendCommandArgv(ps, 2, argv, NULL) != REDIS_OK)
        return -1;
    while (!done)
        if (redisBufferWrite(ps, &done) != REDIS_OK)
            return -1;
    return 0;
}

/* One reply by deadline: 1 with *out, 0 deadline or stop, -1 broken. */
static int ps_read(struct lock_client *c, int64_t deadline, redisReply **out)
{
    redisContext *ps = c->ps;
    for (;;) {
        void *reply = NULL;
        if (redisGetReplyFromReader(ps, &reply) != REDIS_OK)
            return -1;
        if (reply) {
            *out = reply;
            return 1;
        }
        int64_t left = deadline - lab_now_ns();
        if (left <= 0 || *c->env->stop)
            return 0;
        if (left > RSN_STOP_CHECK_NS)
            left = RSN_STOP_CHECK_NS;
        struct pollfd pfd = {.fd = ps->fd, .events = POLLIN};
        struct timespec ts = {left / 1000000000, left % 1000000000};
        int n = ppoll(&pfd, 1, &ts, NULL);
        if (n < 0 && errno != EINTR)
            return -1;
        if (n > 0)
            c->read_arrival_ns = handoff_split_arrival(ps->fd);
        if (n > 0 && redisBufferRead(ps) != REDIS_OK)
            return -1;
    }
}

enum ps_kind { PS_OTHER, PS_SUBSCRIBED, PS_MESSAGE, PS_ERROR, PS_BROKEN, PS_LATE };

/* Read until a reply of kind want (or a failure, or the deadline). An
 * error reply's text goes into why. */
static enum ps_kind ps_wait_for(struct lock_client *c, enum ps_kind want, int64_t deadline,
                                char *why, size_t len)
{
    for (;;) {
        redisReply *r = NULL;
        int got = ps_read(c, deadline, &r);
        if (got < 0) {
            snprintf(why, len, "%s", c->ps->errstr[0] ? c->ps->errstr : "connection lost");
            return PS_BROKEN;
        }
        if (got == 0)
            return PS_LATE;
        enum ps_kind kind = PS_OTHER;
        if (r->type == REDIS_REPLY_ERROR) {
            snprintf(why, len, "%s", r->str);
            kind = PS_ERROR;
        } else if (r->type == REDIS_REPLY_ARRAY && r->elements >= 3 &&
                   r->element[0]->type == REDIS_REPLY_STRING) {
            const char *what = r->element[0]->str;
            if (strcmp(what, "subscribe") == 0) {
                if (c->pending_sub > 0)
                    c->pending_sub--;
                kind = c->pending_sub == 0 ? PS_SUBSCRIBED : PS_OTHER;
            } else if (strcmp(what, "message") == 0) {
                c->env->stats->notifications++;
                const redisReply *ch = r->element[1];
                if (ch->type == REDIS_REPLY_STRING && strcmp(ch->str, c->m.channel) == 0) {
                    kind = PS_MESSAGE;
                    c->msg_arrive_ns = c->read_arrival_ns;
                    c->msg_exit_ns = r->element[2]->type == REDIS_REPLY_STRING
                                         ? strtoll(r->element[2]->str, NULL, 10)
                                         : 0;
                }
            }
        } else {
            snprintf(why, len, "unexpected reply type %d", r->type);
            kind = PS_ERROR;
        }
        freeReplyObject(r);
        if (kind == want || kind == PS_ERROR)
            return kind;
    }
}

/* The pub/sub side of an act: what happened, fed to the machine. */
static enum rsn_act ps_outcome(struct lock_client *c, enum ps_kind kind, const char *why)
{
    struct rsn_sm *m = &c->m;
    switch (kind) {
    case PS_SUBSCRIBED:
        return rsn_sm_subscribed(m, lab_now_ns());
    case PS_MESSAGE:
        return rsn_sm_message(m, c->msg_exit_ns, c->msg_arrive_ns, lab_now_ns());
    case PS_ERROR:
        ps_drop(c); /* its subscriptions are unknown now: the server drops them with it */
        return rsn_sm_ps_error(m, why, lab_now_ns());
    case PS_BROKEN:
        ps_drop(c);
        return rsn_sm_ps_lost(m, why, lab_now_ns());
    case PS_LATE:
    case PS_OTHER:
        break;
    }
    return rsn_sm_timer(m, lab_now_ns());
}

static enum rsn_act do_subscribe(struct lock_client *c)
{
    struct lab_err err = {0};
    char why[200] = "";
    if (ps_ready(c, &err) != 0)
        return rsn_sm_ps_failed(&c->m, &err, lab_now_ns());
    if (ps_send(c, "SUBSCRIBE", c->m.channel) != 0) {
        snprintf(why, sizeof why, "%s", c->ps->errstr[0] ? c->ps->errstr : "connection lost");
        return ps_outcome(c, PS_BROKEN, why);
    }
    c->pending_sub++;
    return ps_outcome(c, ps_wait_for(c, PS_SUBSCRIBED, c->m.wake_at, why, sizeof why), why);
}

static enum rsn_act do_wait(struct lock_client *c)
{
    char why[200] = "";
    if (!c->ps || c->ps->err)
        return ps_outcome(c, PS_BROKEN, "connection lost");
    return ps_outcome(c, ps_wait_for(c, PS_MESSAGE, c->m.wake_at, why, sizeof why), why);
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
            act = do_subscribe(c);
            break;
        case RSN_WAIT:
            act = do_wait(c);
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
    ps_drop(c);
    redis_blink_close(&c->wd_link);
    redis_blink_close(&c->link);
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
    int rc = lab_random_hex(c->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        goto fail;
    }
    char owner[80];
    snprintf(owner, sizeof owner, "%s:%s", c->token, RSN_THREAD_ID);
    rsn_sm_init(&c->m, env, owner);
    run(c, &c->link, &c->m, rsn_sm_open(&c->m, lab_now_ns()));
    if (c->m.open_rc != 0) {
        *err = c->m.err;
        goto fail;
    }
    if (ps_ready(c, err) != 0)
        goto fail;
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
    /* As Redisson, stop listening; the confirmation is read with the next
     * wait's replies. A connection that cannot take the UNSUBSCRIBE is
     * dropped, and its subscription with it. */
    if (c->m.asked && c->ps && !c->ps->err && ps_send(c, "UNSUBSCRIBE", c->m.channel) != 0)
        ps_drop(c);
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
