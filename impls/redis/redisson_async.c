/*
 * redisson_async.c - the Redisson RLock protocol for client groups
 * (lock_ops.async): the scripts, channel and outcomes of redisson.c, with
 * the group's process behaving as one Redisson JVM does.
 *
 * One process per client is one JVM per client: each waiter holds a
 * subscription of its own, so every release wakes every waiter. Inside one
 * JVM, Redisson (PublishSubscribe, RedissonLockEntry, LockPubSub) keeps
 * one entry per lock: its counter is the number of threads waiting through
 * it, the first one SUBSCRIBEs to the lock's channel and the last one to
 * leave UNSUBSCRIBEs, and an unlock message releases one permit of the
 * entry's semaphore, which wakes one waiting thread (a permit nobody waits
 * for stays, and the next thread to wait takes it at once). Here the group
 * is the JVM: one pub/sub connection per group, shared by its logical
 * clients (as Redisson's subscription connection is shared by its
 * threads), one entry per channel, and a message wakes the waiter parked
 * longest. Each logical client keeps its own command connection, its own
 * identity (Redisson's owner "<uuid>:<thread id>": the group's random uuid
 * and the client's index + 1 as its thread id) and its own counters.
 *
 * A client's acquire, step by step: the acquire script; taken, it joins
 * the channel's entry (subscribing when it is the first), and once the
 * subscription is confirmed tries again; taken again, it takes a permit if
 * the entry has one (and tries at once), else parks until a message wakes
 * it, the holder's PTTL runs out or the wait budget does, as redisson.c's
 * blocking waiter sleeps. Granted, timed out or failed, it leaves the
 * entry. The handoff's split (handoff_split.h) is taken as redisson.c
 * takes it: the unlock message carries the release's send time, the
 * shared socket's kernel timestamp is its arrival, and the woken attempt's
 * send and answer are noted; in a group the scheduling part is the
 * group's loop getting from that read to the attempt.
 *
 * The shared pub/sub connection is a plain non-blocking hiredis context on
 * the loop (not a hiredis asynchronous one: its socket must be peeked for
 * the arrival stamp before hiredis reads it). When it breaks, the server
 * has dropped every subscription: it is opened again and every entry with
 * waiters subscribes again, its waiters trying the lock once the
 * subscription is confirmed (the unlock they waited for may have gone to
 * nobody), as redisson.c's waiter does. A connection that breaks before it
 * ever answered (no server) fails the waiters' acquires. A command
 * connection that breaks fails the operation under way and is replaced
 * before the next command (the simple designs' machine, redis_machine.h,
 * resends once instead: redisson's turn comes).
 *
 * Not in groups: the watchdog (a lock without a lease, redisson.c's
 * thread; the scenario must give lock.ttl, Redisson's leaseTime; the
 * loader says so) and Redis sentinels; the reentrant workload is refused
 * for every design in groups by the loader.
 */
#include "redisson.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evloop_redis.h"
#include "handoff_split.h"
#include "redis_drive.h"
#include "redis_common.h"

struct rsn_async;

/* One channel of the group: Redisson's RedissonLockEntry. */
struct rsn_entry {
    char channel[300];
    int members;                /* clients waiting through it (Redisson's counter) */
    int permits;                /* its semaphore's permits */
    bool want;                  /* the last command sent for it was SUBSCRIBE */
    int pending;                /* SUBSCRIBE confirmations not read yet */
    struct lock_stats *stats;   /* where a message that woke nobody is counted */
    int64_t msg_exit_ns, msg_arrive_ns; /* the latest message's stamps (a permit's) */
    struct rsn_async *members_head;
    struct rsn_async *park_head, *park_tail; /* parked waiters, the longest first */
    struct rsn_entry *next;
};

/* What a group's clients share (one per event loop: the group's process). */
struct rsn_group {
    struct evloop *L;
    int users;                  /* clients open on it */
    char token[40];             /* the JVM's uuid: half of every owner id */
    char host[64];
    int port;
    redisContext *ps;           /* the pub/sub connection; NULL: opened at its next use */
    struct ev_io io;
    unsigned ps_gen;            /* bumped when ps goes */
    bool ps_answered;           /* ps has answered something (it was connected) */
    struct rsn_entry *entries;
    struct rsn_group *next;
};

static struct rsn_group *rsn_groups;

enum rsn_phase {
    PH_IDLE,
    PH_TRY,         /* an acquire attempt is under way */
    PH_SUBSCRIBING, /* in an entry whose subscription is not confirmed yet */
    PH_PARKED,      /* on the entry's semaphore */
    PH_RELEASE
};

/* One logical client's side, in lock_client.ext. */
struct rsn_async {
    struct lock_client *client;
    struct rsn_group *g;
    redisAsyncContext *ac;      /* its command connection; NULL: a new one at the next use */
    struct ev_timer timer;      /* the wait of a parked or subscribing waiter, or an error */
    char acquire_sha[41], release_sha[41];
    char owner[80];             /* "<group uuid>:<thread id>" */
    char lease[24];             /* the lease in ms, as sent */
    int64_t lease_ns;
    int opening;                /* SCRIPT LOAD replies still owed */
    /* the operation under way */
    enum rsn_phase phase;
    bool eval_src;              /* the script goes as source (the server lost it) */
    const char *key;
    char fence_key[300];
    char channel[300];
    char message[24];
    int64_t deadline, sent;
    long long ttl;              /* the holder's PTTL from the latest refusal, -1 none */
    bool woken;                 /* a message (or its permit) woke this attempt */
    int64_t msg_exit_ns, msg_arrive_ns;
    struct rsn_entry *entry;    /* the entry it waits through, or NULL */
    struct rsn_async *mprev, *mnext, *pprev, *pnext;
    bool parked;
    unsigned op_gen;            /* bumped when an acquire ends */
    bool failed;                /* the timer delivers err */
    struct lab_err err;
    lock_opened_fn opened;
    lock_acquired_fn acquired;
    lock_released_fn released;
    void *arg;
};

static struct rsn_async *ras(struct lock_client *c)
{
    return c->ext;
}

static void ps_broke(struct rsn_group *g, const char *why);
static void attempt(struct lock_client *c);
static void acquire_done(struct lock_client *c, enum lock_status st);

/* ---------------------------------------------------------------- pub/sub */

static void ps_flush(struct rsn_group *g)
{
    int done = 0;
    if (redisBufferWrite(g->ps, &done) != REDIS_OK) {
        ps_broke(g, g->ps->errstr);
        return;
    }
    evloop_io(g->L, &g->io, EV_READ | (done ? 0 : EV_WRITE));
}

static void ps_on_reply(struct rsn_group *g, redisReply *r, int64_t arrival);

static void ps_on_io(struct ev_io *io, unsigned events)
{
    struct rsn_group *g = (struct rsn_group *)((char *)io - offsetof(struct rsn_group, io));
    unsigned gen = g->ps_gen;
    if (events & EV_WRITE)
        ps_flush(g);
    if (g->ps_gen != gen || !(events & EV_READ))
        return;
    int64_t arrival = handoff_split_arrival(g->ps->fd);
    if (redisBufferRead(g->ps) != REDIS_OK) {
        ps_broke(g, g->ps->errstr);
        return;
    }
    for (;;) {
        void *reply = NULL;
        if (redisGetReplyFromReader(g->ps, &reply) != REDIS_OK) {
            ps_broke(g, g->ps->errstr);
            return;
        }
        if (!reply)
            return;
        ps_on_reply(g, reply, arrival);
        freeReplyObject(reply);
        if (g->ps_gen != gen)
            return; /* the connection went while the reply was handled */
    }
}

/* The pub/sub connection, opened when there is none. 0 or -1 with err. */
static int ps_ready(struct rsn_group *g, struct lab_err *err)
{
    if (g->ps)
        return 0;
    redisContext *ps = redisConnectNonBlock(g->host, g->port);
    if (!ps || ps->err) {
        lab_err_set(err, ps ? ps->err : ENOMEM, "cannot connect to Redis (pub/sub) at %s:%d: %s",
                    g->host, g->port, ps ? ps->errstr : "out of memory");
        if (ps)
            redisFree(ps);
        return -1;
    }
    handoff_split_arm(ps->fd);
    g->ps = ps;
    g->ps_answered = false;
    g->io = (struct ev_io){.fd = ps->fd, .ready = ps_on_io};
    evloop_io(g->L, &g->io, EV_READ | EV_WRITE); /* writable: connected */
    return 0;
}

/* Send SUBSCRIBE or UNSUBSCRIBE for channel, counted in stats. A command
 * that cannot be sent drops the connection (ps_broke). */
static void ps_send(struct rsn_group *g, struct lock_stats *stats, const char *cmd,
                    const char *channel)
{
    struct lab_err err = {0};
    if (ps_ready(g, &err) != 0) {
        ps_broke(g, err.msg);
        return;
    }
    const char *argv[] = {cmd, channel};
    stats->round_trips++;
    if (redisAppendCommandArgv(g->ps, 2, argv, NULL) != REDIS_OK) {
        ps_broke(g, g->ps->errstr);
        return;
    }
    ps_flush(g);
}

/* ---------------------------------------------------------------- entries */

static bool entry_ready(const struct rsn_entry *e)
{
    return e->want && e->pending == 0;
}

static void entry_subscribe(struct rsn_group *g, struct rsn_entry *e, struct lock_stats *stats)
{
    e->want = true;
    e->pending++;
    e->stats = stats;
    ps_send(g, stats, "SUBSCRIBE", e->channel);
}

static void park_remove(struct rsn_async *a)
{
    struct rsn_entry *e = a->entry;
    if (!a->parked)
        return;
    if (a->pprev)
        a->pprev->pnext = a->pnext;
    else
        e->park_head = a->pnext;
    if (a->pnext)
        a->pnext->pprev = a->pprev;
    else
        e->park_tail = a->pprev;
    a->pprev = a->pnext = NULL;
    a->parked = false;
}

/* Join the entry of a->channel (Redisson's subscribe): the first member
 * subscribes. 0, or -1 when the channel name does not fit. */
static int entry_join(struct lock_client *c)
{
    struct rsn_async *a = ras(c);
    struct rsn_group *g = a->g;
    struct rsn_entry *e = g->entries;
    while (e && strcmp(e->channel, a->channel) != 0)
        e = e->next;
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e) {
            lab_err_set(&a->err, ENOMEM, "out of memory");
            return -1;
        }
        snprintf(e->channel, sizeof e->channel, "%s", a->channel);
        e->next = g->entries;
        g->entries = e;
    }
    a->entry = e;
    a->mprev = NULL;
    a->mnext = e->members_head;
    if (e->members_head)
        e->members_head->mprev = a;
    e->members_head = a;
    if (e->members++ == 0 && !e->want)
        entry_subscribe(g, e, c->env->stats); /* may fail this very client: see ps_broke */
    return 0;
}

/* Leave the entry (Redisson's unsubscribe): the last member unsubscribes,
 * and the entry's permits go with it. */
static void entry_leave(struct lock_client *c)
{
    struct rsn_async *a = ras(c);
    struct rsn_entry *e = a->entry;
    if (!e)
        return;
    park_remove(a);
    if (a->mprev)
        a->mprev->mnext = a->mnext;
    else
        e->members_head = a->mnext;
    if (a->mnext)
        a->mnext->mprev = a->mprev;
    a->mprev = a->mnext = NULL;
    a->entry = NULL;
    if (--e->members > 0)
        return;
    e->permits = 0;
    if (e->want && a->g->ps) {
        e->want = false;
        ps_send(a->g, c->env->stats, "UNSUBSCRIBE", e->channel);
    }
}

/* A message on e's channel: one permit; the waiter parked longest takes it. */
static void entry_message(struct rsn_entry *e, int64_t exit_ns, int64_t arrive_ns)
{
    struct rsn_async *a = e->park_head;
    e->msg_exit_ns = exit_ns;
    e->msg_arrive_ns = arrive_ns;
    if (!a) {
        if (e->stats)
            e->stats->notifications++;
        if (e->members > 0)
            e->permits++;
        return;
    }
    struct lock_client *c = a->client;
    c->env->stats->notifications++;
    park_remove(a);
    evloop_timer_cancel(a->g->L, &a->timer);
    a->woken = true;
    a->msg_exit_ns = exit_ns;
    a->msg_arrive_ns = arrive_ns;
    attempt(c);
}

/* The subscription of e is confirmed: its subscribing members try. */
static void entry_confirmed(struct rsn_group *g, struct rsn_entry *e)
{
    for (struct rsn_async *a = e->members_head, *next; a; a = next) {
        next = a->mnext;
        if (a->phase == PH_SUBSCRIBING) {
            evloop_timer_cancel(g->L, &a->timer);
            attempt(a->client);
        }
    }
}

static void ps_on_reply(struct rsn_group *g, redisReply *r, int64_t arrival)
{
    g->ps_answered |= r->type != REDIS_REPLY_ERROR; /* a refusal is no answer: fail, not retry */
    if (r->type == REDIS_REPLY_ERROR) {
        char why[200];
        snprintf(why, sizeof why, "%s", r->str);
        ps_broke(g, why);
        return;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING)
        return;
    const char *what = r->element[0]->str;
    struct rsn_entry *e = g->entries;
    while (e && strcmp(e->channel, r->element[1]->str) != 0)
        e = e->next;
    if (!e)
        return;
    if (strcmp(what, "subscribe") == 0) {
        if (e->pending > 0 && --e->pending == 0 && e->want)
            entry_confirmed(g, e);
    } else if (strcmp(what, "message") == 0) {
        int64_t exit_ns = r->element[2]->type == REDIS_REPLY_STRING
                              ? strtoll(r->element[2]->str, NULL, 10)
                              : 0;
        entry_message(e, exit_ns, arrival);
    }
}

/* The pub/sub connection is gone, and every subscription with it. If it
 * had been answering, a new one subscribes again for every entry with
 * members, which try the lock once confirmed; if it never answered (no
 * server) or cannot be replaced, their acquires fail. */
static void ps_broke(struct rsn_group *g, const char *why)
{
    if (g->ps) {
        evloop_io(g->L, &g->io, 0);
        redisFree(g->ps);
        g->ps = NULL;
    }
    g->ps_gen++;
    bool fail = !g->ps_answered;
    g->ps_answered = false;
    for (struct rsn_entry *e = g->entries; e; e = e->next) {
        e->want = false;
        e->pending = 0;
    }
    for (struct rsn_entry *e = g->entries; e; e = e->next) {
        if (e->members == 0)
            continue;
        if (!fail) {
            for (struct rsn_async *a = e->members_head; a; a = a->mnext)
                if (a->phase == PH_PARKED) {
                    park_remove(a);
                    a->phase = PH_SUBSCRIBING; /* its timer: the wait budget still */
                    evloop_timer_at(g->L, &a->timer, a->deadline);
                }
            entry_subscribe(g, e, e->members_head->client->env->stats);
            if (g->ps)
                continue;
        }
        for (struct rsn_async *a = e->members_head, *next; a; a = next) {
            next = a->mnext;
            if (a->phase == PH_TRY)
                continue; /* its attempt's reply finds the entry unsubscribed */
            lab_err_set(&a->err, EIO, "redis pub/sub: %s", why && why[0] ? why : "connection lost");
            acquire_done(a->client, LOCK_ERROR);
        }
    }
}

/* ---------------------------------------------------------------- commands */

static void on_reply(redisAsyncContext *ac, void *reply, void *priv);

static void on_down(redisAsyncContext *ac)
{
    struct lock_client *c = ac->data;
    if (c && ras(c)->ac == ac)
        ras(c)->ac = NULL;
}

static int conn_ready(struct lock_client *c, struct lab_err *err)
{
    struct rsn_async *a = ras(c);
    if (a->ac)
        return 0;
    a->ac = evloop_redis_connect(a->g->L, "Redis", a->g->host, a->g->port, c, on_down, err);
    c->reconnects++;
    return a->ac ? 0 : -1;
}

/* Send the acquire or the release script (its SHA1, or its source once
 * the server lost it), counting the round trip. 0 or -1 with a->err. */
static int send_script(struct lock_client *c, bool release)
{
    struct rsn_async *a = ras(c);
    if (conn_ready(c, &a->err) != 0)
        return -1;
    const char *src = release ? rsn_release_lua
                      : c->env->fencing ? rsn_fenced_acquire_lua
                                        : rsn_acquire_lua;
    const char *argv[10];
    int n = 0;
    argv[n++] = a->eval_src ? "EVAL" : "EVALSHA";
    argv[n++] = a->eval_src ? src : release ? a->release_sha : a->acquire_sha;
    argv[n++] = release || c->env->fencing ? "2" : "1";
    argv[n++] = a->key;
    if (release) {
        argv[n++] = a->channel;
        argv[n++] = a->message;
    } else if (c->env->fencing) {
        argv[n++] = a->fence_key;
    }
    argv[n++] = a->lease;
    argv[n++] = a->owner;
    c->env->stats->round_trips++;
    if (redisAsyncCommandArgv(a->ac, on_reply, c, n, argv, NULL) != REDIS_OK) {
        lab_err_set(&a->err, EIO, "redis: cannot send (%s)", a->ac->errstr);
        return -1;
    }
    return 0;
}

/* A failure found while starting something is delivered from the loop. */
static void fail_later(struct lock_client *c)
{
    struct rsn_async *a = ras(c);
    a->failed = true;
    evloop_timer_at(a->g->L, &a->timer, 0);
}

static void attempt(struct lock_client *c)
{
    struct rsn_async *a = ras(c);
    a->phase = PH_TRY;
    a->eval_src = false;
    a->sent = lab_now_ns();
    if (send_script(c, false) != 0)
        fail_later(c);
}

/* ------------------------------------------------------------ outcomes */

static void acquire_done(struct lock_client *c, enum lock_status st)
{
    struct rsn_async *a = ras(c);
    entry_leave(c);
    evloop_timer_cancel(a->g->L, &a->timer);
    a->phase = PH_IDLE;
    a->woken = false;
    a->op_gen++;
    if (st == LOCK_GRANTED && c->holds++ == 0)
        snprintf(c->held_key, sizeof c->held_key, "%s", a->key);
    lock_deliver_acquired(&a->acquired, a->arg, st, &a->err);
}

static void release_done(struct lock_client *c, enum release_status rs)
{
    struct rsn_async *a = ras(c);
    a->phase = PH_IDLE;
    lock_deliver_released(&a->released, a->arg, rs, &a->err);
}

static void open_done(struct lock_client *c, int rc)
{
    struct rsn_async *a = ras(c);
    a->opening = 0;
    a->opened(a->arg, rc, &a->err);
}

static void op_failed(struct lock_client *c)
{
    struct rsn_async *a = ras(c);
    if (a->opening)
        open_done(c, -1);
    else if (a->acquired)
        acquire_done(c, LOCK_ERROR);
    else if (a->released) {
        if (c->holds > 0 && strcmp(a->key, c->held_key) == 0)
            c->holds--; /* as redisson.c's release counts a hold given up on error */
        release_done(c, RELEASE_ERROR);
    }
}

/* The lock is someone else's: give up, wait for the subscription, take a
 * permit, or park until a message, the holder's PTTL or the budget. */
static void taken(struct lock_client *c)
{
    struct rsn_async *a = ras(c);
    int64_t now = lab_now_ns();
    if (now >= a->deadline || *c->env->stop) {
        acquire_done(c, LOCK_TIMEOUT);
        return;
    }
    /* wait for a subscription: the first refusal joins the entry (and
     * tries again once it is confirmed); one lost with its connection is
     * made again */
    a->phase = PH_SUBSCRIBING;
    evloop_timer_at(a->g->L, &a->timer, a->deadline);
    unsigned gen = a->op_gen;
    bool joined = !a->entry;
    if (joined && entry_join(c) != 0) {
        acquire_done(c, LOCK_ERROR);
        return;
    }
    if (!joined && !a->entry->want)
        entry_subscribe(a->g, a->entry, c->env->stats);
    if (a->op_gen != gen)
        return; /* failed with the pub/sub connection */
    struct rsn_entry *e = a->entry;
    if (!entry_ready(e))
        return;
    evloop_timer_cancel(a->g->L, &a->timer);
    if (joined) {
        attempt(c);
        return;
    }
    if (e->permits > 0) { /* a message that came while nobody was parked */
        e->permits--;
        a->woken = true; /* by the latest message */
        a->msg_exit_ns = e->msg_exit_ns;
        a->msg_arrive_ns = e->msg_arrive_ns;
        attempt(c);
        return;
    }
    int64_t until = a->deadline; /* the holder's lease ends first, or the budget */
    if (a->ttl >= 0 && a->ttl < (a->deadline - now) / 1000000)
        until = now + (a->ttl > 0 ? a->ttl : 1) * 1000000;
    a->phase = PH_PARKED;
    a->parked = true;
    a->pnext = NULL;
    a->pprev = e->park_tail;
    if (e->park_tail)
        e->park_tail->pnext = a;
    else
        e->park_head = a;
    e->park_tail = a;
    evloop_timer_at(a->g->L, &a->timer, until);
}

static void on_timer(struct ev_timer *t)
{
    struct rsn_async *a = (struct rsn_async *)((char *)t - offsetof(struct rsn_async, timer));
    struct lock_client *c = a->client;
    if (a->failed) {
        a->failed = false;
        op_failed(c);
        return;
    }
    if (a->phase == PH_PARKED && !*c->env->stop && lab_now_ns() < a->deadline) {
        park_remove(a); /* the holder's lease ran out: try again */
        attempt(c);
        return;
    }
    if (a->phase == PH_PARKED || a->phase == PH_SUBSCRIBING)
        acquire_done(c, LOCK_TIMEOUT);
}

/* The acquire script's answer. */
static void on_try(struct lock_client *c, const redisReply *r)
{
    struct rsn_async *a = ras(c);
    const redisReply *v = r;
    bool granted = r->type == REDIS_REPLY_NIL;
    if (c->env->fencing && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[0]->type == REDIS_REPLY_INTEGER && r->element[1]->type == REDIS_REPLY_INTEGER) {
        v = r->element[1];
        granted = r->element[0]->integer == 1;
        if (granted)
            c->env->stats->fence_token = v->integer;
    }
    if (!granted && v->type != REDIS_REPLY_INTEGER) {
        lab_err_set(&a->err, EPROTO, "redisson: acquire script returned reply type %d", r->type);
        acquire_done(c, LOCK_ERROR);
        return;
    }
    int64_t now = lab_now_ns();
    if (a->woken)
        handoff_split_note(c->env->stats, granted, a->msg_exit_ns, a->msg_arrive_ns, a->sent,
                           now);
    a->woken = false;
    if (granted) {
        c->env->stats->lease_floor_ns = a->sent + a->lease_ns; /* PEXPIRE ran after sent */
        acquire_done(c, LOCK_GRANTED);
        return;
    }
    a->ttl = v->integer;
    taken(c);
}

/* The release script's answer (redisson.c's rsn_release, reply for reply). */
static void on_release(struct lock_client *c, const redisReply *r)
{
    struct rsn_async *a = ras(c);
    bool ours = c->holds > 0 && strcmp(a->key, c->held_key) == 0;
    if (ours)
        c->holds--;
    enum release_status rs = RELEASE_ERROR;
    if (r->type == REDIS_REPLY_NIL)
        rs = RELEASE_NOT_OWNER;
    else if (r->type == REDIS_REPLY_INTEGER)
        rs = RELEASE_OK;
    else
        lab_err_set(&a->err, EPROTO, "redisson: release script returned reply type %d", r->type);
    if (ours && (r->type == REDIS_REPLY_NIL || (r->type == REDIS_REPLY_INTEGER && r->integer == 1)))
        c->holds = 0;
    release_done(c, rs);
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    struct lock_client *c = priv;
    struct rsn_async *a = ras(c);
    redisReply *r = reply;
    if (!r) {
        lab_err_set(&a->err, EIO, "redis: %s", ac && ac->errstr[0] ? ac->errstr
                                                                   : "connection lost");
        op_failed(c);
        return;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        if (!a->opening && strncmp(r->str, "NOSCRIPT", 8) == 0 && !a->eval_src) {
            a->eval_src = true; /* the server lost it: its source this once */
            if (send_script(c, a->phase == PH_RELEASE) != 0)
                fail_later(c);
            return;
        }
        lab_err_set(&a->err, EPROTO, "redis: %s", r->str);
        op_failed(c);
        return;
    }
    if (a->opening) {
        if (r->type != REDIS_REPLY_STRING || r->len != 40) {
            lab_err_set(&a->err, EPROTO, "SCRIPT LOAD returned no SHA1");
            open_done(c, -1);
            return;
        }
        memcpy(a->opening == 2 ? a->acquire_sha : a->release_sha, r->str, 41);
        if (--a->opening == 0)
            open_done(c, 0);
        return;
    }
    if (a->phase == PH_RELEASE)
        on_release(c, r);
    else if (a->phase == PH_TRY)
        on_try(c, r);
}

/* ---------------------------------------------------------------- hooks */

/* The group of loop (one per process), made by its first client. */
static struct rsn_group *group_of(struct evloop *L, const struct lock_endpoint *ep,
                                  struct lab_err *err)
{
    struct rsn_group *g = rsn_groups;
    while (g && g->L != L)
        g = g->next;
    if (g)
        return g;
    g = calloc(1, sizeof *g);
    if (!g) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    int rc = lab_random_hex(g->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        free(g);
        return NULL;
    }
    g->L = L;
    snprintf(g->host, sizeof g->host, "%s", ep->host);
    g->port = ep->port;
    g->next = rsn_groups;
    rsn_groups = g;
    return g;
}

static void group_put(struct rsn_group *g)
{
    if (--g->users > 0)
        return;
    for (struct rsn_group **p = &rsn_groups; *p; p = &(*p)->next)
        if (*p == g) {
            *p = g->next;
            break;
        }
    if (g->ps) {
        evloop_io(g->L, &g->io, 0);
        redisFree(g->ps);
    }
    while (g->entries) {
        struct rsn_entry *e = g->entries;
        g->entries = e->next;
        free(e);
    }
    free(g);
}

static void rsn_async_close(struct lock_client *c)
{
    if (!c)
        return;
    struct rsn_async *a = ras(c);
    a->opening = 0;
    a->acquired = NULL;
    a->released = NULL;
    entry_leave(c);
    evloop_timer_cancel(a->g->L, &a->timer);
    if (a->ac) {
        redisAsyncContext *ac = a->ac;
        a->ac = NULL;
        ac->data = NULL; /* its pending replies come back to nobody */
        redisAsyncFree(ac);
    }
    group_put(a->g);
    free(a);
    free(c);
}

static int rsn_async_open(struct lock_client **out, const struct lock_env *env,
                          struct evloop *loop, lock_opened_fn opened, void *arg,
                          struct lab_err *err)
{
    *out = NULL;
    const struct rsn_options *opt = env->options;
    if (redis_async_refuse_sentinel(env, err) != 0)
        return -1;
    if (opt->lease_ns <= 0) {
        lab_err_set(err, ENOTSUP, "redisson's watchdog cannot run in client groups: give "
                    "lock.ttl (its leaseTime) or use run.clients_per_process 1");
        return -1;
    }
    struct lock_client *c = calloc(1, sizeof *c);
    struct rsn_async *a = calloc(1, sizeof *a);
    if (!c || !a) {
        free(c);
        free(a);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    struct rsn_group *g = group_of(loop, &env->servers->node[0], err);
    if (!g) {
        free(c);
        free(a);
        return -1;
    }
    g->users++;
    c->env = env;
    c->ext = a;
    a->client = c;
    a->g = g;
    a->opened = opened;
    a->arg = arg;
    evloop_timer_init(&a->timer, on_timer);
    snprintf(c->token, sizeof c->token, "%s", g->token);
    snprintf(a->owner, sizeof a->owner, "%s:%d", g->token, env->client_id + 1);
    long long lease_ms = opt->lease_ns / 1000000;
    if (lease_ms < 1)
        lease_ms = 1;
    snprintf(a->lease, sizeof a->lease, "%lld", lease_ms);
    a->lease_ns = lease_ms * 1000000;
    /* both scripts loaded once: the acquire script's answer first */
    const char *scripts[] = {env->fencing ? rsn_fenced_acquire_lua : rsn_acquire_lua,
                             rsn_release_lua};
    if (conn_ready(c, err) != 0) {
        rsn_async_close(c);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        const char *argv[] = {"SCRIPT", "LOAD", scripts[i]};
        if (redisAsyncCommandArgv(a->ac, on_reply, c, 3, argv, NULL) != REDIS_OK) {
            lab_err_set(err, EIO, "redis: cannot send (%s)", a->ac->errstr);
            rsn_async_close(c);
            return -1;
        }
        a->opening++;
    }
    *out = c;
    return 0;
}

static void rsn_async_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                              lock_acquired_fn done, void *arg)
{
    struct rsn_async *a = ras(c);
    a->key = key;
    a->acquired = done;
    a->arg = arg;
    a->ttl = -1;
    a->woken = false;
    a->deadline = lab_now_ns() + wait_ns;
    if (c->holds > 0 && strcmp(key, c->held_key) != 0) {
        lab_err_set(&a->err, EINVAL, "redisson: this client holds '%s'; one key at a time",
                    c->held_key);
        fail_later(c);
        return;
    }
    if (rsn_channel(a->channel, sizeof a->channel, key, &a->err) != 0 ||
        (c->env->fencing && redis_fence_key(a->fence_key, sizeof a->fence_key, key, &a->err) != 0)) {
        fail_later(c);
        return;
    }
    attempt(c);
}

static void rsn_async_release(struct lock_client *c, const char *key, lock_released_fn done,
                              void *arg)
{
    struct rsn_async *a = ras(c);
    a->key = key;
    a->released = done;
    a->arg = arg;
    a->phase = PH_RELEASE;
    a->eval_src = false;
    /* the unlock message carries the release's send time (redisson.c) */
    snprintf(a->message, sizeof a->message, "%lld", (long long)lab_now_ns());
    if (rsn_channel(a->channel, sizeof a->channel, key, &a->err) != 0 ||
        send_script(c, true) != 0)
        fail_later(c);
}

const struct lock_async_ops redisson_async = {
    .open = rsn_async_open,
    .acquire = rsn_async_acquire,
    .release = rsn_async_release,
    .close = rsn_async_close,
};
