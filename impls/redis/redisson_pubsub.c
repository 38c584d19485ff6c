/*
 * redisson_pubsub.c - one Redisson JVM's PublishSubscribe on an event
 * loop (redisson_pubsub.h): the hub's pub/sub connection, its entries and
 * their semaphores, and what each event means to a waiting machine.
 *
 * The connection is a plain non-blocking hiredis context on the loop (not
 * a hiredis asynchronous one: its socket is peeked for the handoff split's
 * arrival stamp before hiredis reads it), opened at the first SUBSCRIBE,
 * to the single server or to the master the sentinels name (the loop
 * links' search, redis_link_seek.c, whose checked connection gives the
 * address) unless the member that needs it knows the master its command
 * connection uses (rsn_ps_master). Every channel wanted is subscribed on a new connection. When
 * the connection goes, every subscription goes with it: entries are
 * marked unsubscribed and each member waiting on the pub/sub is told
 * (down); a member trying the lock meanwhile finds its entry unsubscribed
 * when it next waits. The connection was made once its socket became
 * writable without an error, took a whole write, or gave bytes (a cut
 * after that is a loss, not a failure to connect). Messages are counted as
 * notifications of the member they wake, or of the entry's latest
 * subscriber when they wake nobody; SUBSCRIBE and UNSUBSCRIBE as round
 * trips of the member that sent them. The connection and the search are
 * nobody's on the loop (armed with no owner current, watch()); what is
 * handed to a member goes through its own timer (hand()).
 */
#include "redisson_pubsub.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <hiredis/hiredis.h>

#include "handoff_split.h"
#include "redis_link.h"

/* One channel of the group: Redisson's RedissonLockEntry. */
struct rsn_entry {
    char channel[300];
    int members;                /* clients waiting through it */
    int permits;                /* its semaphore's permits */
    bool want;                  /* it should be subscribed */
    bool sent;                  /* its SUBSCRIBE went on the current connection */
    int pending;                /* SUBSCRIBE confirmations not read yet */
    struct lock_stats *stats;   /* where a message that woke nobody is counted */
    int64_t msg_exit_ns, msg_arrive_ns; /* the latest message's stamps (a permit's) */
    struct rsn_member *members_head;
    uint64_t parks;             /* members parked so far: each one's place in the queue */
    struct rsn_entry *next;
};

struct rsn_hub {
    struct evloop *L;
    int users;
    char token[40];             /* the JVM's uuid */
    redisContext *ps;           /* the connection; NULL: opened at its next use */
    struct ev_io io;
    unsigned gen;               /* bumped when ps goes */
    bool connected;             /* ps's socket connected */
    bool seeking;               /* the sentinels are being asked for ps's server */
    struct redis_seek seek;
    struct rsn_entry *entries;
    struct rsn_hub *next;
};

static struct rsn_hub *hubs;

enum { HAND_NONE, HAND_SUBSCRIBED, HAND_WOKEN, HAND_DOWN };
enum { PS_LOST, PS_ERROR, PS_FAILED }; /* how the connection went */

static bool awaits(const struct rsn_member *me)
{
    return me->m->step == RS_SUBSCRIBING || me->m->step == RS_WAITING;
}

/* ---------------------------------------------------------------- members */

/* An event to its member's machine, from the loop and as its owner:
 * held, the member gets it once released; a machine no longer waiting
 * for it (its own clock came first) drops it. */
static void hand_over(struct ev_timer *t)
{
    struct rsn_member *me = (struct rsn_member *)((char *)t - offsetof(struct rsn_member, later));
    struct rsn_sm *m = me->m;
    int what = me->hand;
    int64_t now = lab_now_ns();
    me->hand = HAND_NONE;
    if (what == HAND_SUBSCRIBED && m->step == RS_SUBSCRIBING) {
        me->next(me, rsn_sm_subscribed(m, now));
    } else if (what == HAND_WOKEN && m->step == RS_WAITING) {
        me->next(me, rsn_sm_message(m, me->exit_ns, me->arrive_ns, now));
    } else if (what == HAND_DOWN && awaits(me)) {
        struct lab_err err;
        lab_err_set(&err, me->ev == PS_FAILED ? EHOSTUNREACH : EIO, "redis pub/sub: %s",
                    me->why);
        me->next(me, me->ev == PS_LOST    ? rsn_sm_ps_lost(m, err.msg, now)
                     : me->ev == PS_ERROR ? rsn_sm_ps_error(m, err.msg, now)
                                          : rsn_sm_ps_failed(m, &err, now));
    }
}

static void hand(struct rsn_member *me, int what)
{
    struct evloop *L = me->hub->L;
    me->hand = what;
    struct ev_owner *prev = evloop_owner_enter(L, me->owner);
    evloop_timer_at(L, &me->later, 0);
    evloop_owner_enter(L, prev);
}


void rsn_ps_init(struct rsn_member *me, struct rsn_hub *h, const struct lock_env *env,
                 struct rsn_sm *m, void (*next)(struct rsn_member *me, enum rsn_act act))
{
    *me = (struct rsn_member){.hub = h, .env = env, .m = m, .next = next,
                              .owner = evloop_owner_current(h->L)};
    evloop_timer_init(&me->later, hand_over);
}

/* ---------------------------------------------------------------- the connection */

static void ps_down(struct rsn_hub *h, int ev, const char *why);
static void ps_on_reply(struct rsn_hub *h, redisReply *r, int64_t arrival);

static int broke(const struct rsn_hub *h)
{
    return h->connected ? PS_LOST : PS_FAILED;
}

/* The group's socket: nobody's, whichever client's call arms it. */
static void watch(struct rsn_hub *h, unsigned want)
{
    struct ev_owner *prev = evloop_owner_enter(h->L, NULL);
    evloop_io(h->L, &h->io, want);
    evloop_owner_enter(h->L, prev);
}

static void ps_flush(struct rsn_hub *h)
{
    int done = 0;
    if (redisBufferWrite(h->ps, &done) != REDIS_OK) {
        ps_down(h, broke(h), h->ps->errstr);
        return;
    }
    if (done) /* all written: the socket is connected */
        h->connected = true;
    watch(h, EV_READ | (done ? 0 : EV_WRITE));
}

static void ps_on_io(struct ev_io *io, unsigned events)
{
    struct rsn_hub *h = (struct rsn_hub *)((char *)io - offsetof(struct rsn_hub, io));
    unsigned gen = h->gen;
    if ((events & EV_WRITE) && !h->connected) {
        int soerr = 0;
        socklen_t len = sizeof soerr;
        if (getsockopt(h->ps->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr == 0)
            h->connected = true;
    }
    if (events & EV_WRITE)
        ps_flush(h);
    if (h->gen != gen || !(events & EV_READ))
        return;
    int64_t arrival = handoff_split_arrival(h->ps->fd);
    if (redisBufferRead(h->ps) != REDIS_OK) {
        ps_down(h, broke(h), h->ps->errstr);
        return;
    }
    h->connected = true;
    for (;;) {
        void *reply = NULL;
        if (redisGetReplyFromReader(h->ps, &reply) != REDIS_OK) {
            ps_down(h, PS_LOST, h->ps->errstr);
            return;
        }
        if (!reply)
            return;
        ps_on_reply(h, reply, arrival);
        freeReplyObject(reply);
        if (h->gen != gen)
            return; /* the connection went while the reply was handled */
    }
}

/* SUBSCRIBE or UNSUBSCRIBE on the current connection, counted in stats. */
static void ps_send(struct rsn_hub *h, struct lock_stats *stats, const char *cmd,
                    const char *channel)
{
    const char *argv[] = {cmd, channel};
    stats->round_trips++;
    if (redisAppendCommandArgv(h->ps, 2, argv, NULL) != REDIS_OK) {
        ps_down(h, broke(h), h->ps->errstr);
        return;
    }
    ps_flush(h);
}

static void entry_send_subscribe(struct rsn_hub *h, struct rsn_entry *e)
{
    e->sent = true;
    e->pending++;
    ps_send(h, e->stats, "SUBSCRIBE", e->channel);
}

/* A new connection to host:port, and every wanted channel subscribed on it. */
static void ps_connect(struct rsn_hub *h, const char *host, int port)
{
    redisContext *ps = redisConnectNonBlock(host, port);
    if (!ps || ps->err) {
        char why[200];
        snprintf(why, sizeof why, "cannot connect to Redis (pub/sub) at %s:%d: %s", host, port,
                 ps ? ps->errstr : "out of memory");
        if (ps)
            redisFree(ps);
        ps_down(h, PS_FAILED, why);
        return;
    }
    handoff_split_arm(ps->fd);
    h->ps = ps;
    h->connected = false;
    h->io = (struct ev_io){.fd = ps->fd, .ready = ps_on_io};
    watch(h, EV_READ | EV_WRITE); /* writable: connected */
    unsigned gen = h->gen;
    for (struct rsn_entry *e = h->entries; e && h->gen == gen; e = e->next)
        if (e->want && !e->sent)
            entry_send_subscribe(h, e);
}

/* The sentinels named the master (its ROLE checked): connect there. */
static void ps_found(struct redis_seek *s, bool ok, const struct lab_err *err)
{
    struct rsn_hub *h = (struct rsn_hub *)((char *)s - offsetof(struct rsn_hub, seek));
    h->seeking = false;
    if (!ok) {
        ps_down(h, PS_FAILED, err ? err->msg : "no master found");
        return;
    }
    char host[64];
    snprintf(host, sizeof host, "%s", s->ac->c.tcp.host ? s->ac->c.tcp.host : "");
    int port = s->ac->c.tcp.port;
    redis_seek_drop(&s->ac); /* only its address was wanted */
    ps_connect(h, host, port);
}

static void ps_seek_down(redisAsyncContext *ac)
{
    struct rsn_hub *h = ac->data;
    if (h)
        redis_seek_down(&h->seek, ac);
}

/* Open the connection when there is none (nor one being found): to the
 * single server, to the master me's command connection uses, or to the
 * one the sentinels name. */
static void ps_open(struct rsn_hub *h, const struct rsn_member *me)
{
    if (h->ps || h->seeking)
        return;
    const struct lock_env *env = me->env;
    const struct lock_servers *sv = env->servers;
    if (!sv->sentinel_master[0]) {
        ps_connect(h, sv->node[0].host, sv->node[0].port); /* the connection: watch() */
        return;
    }
    if (me->master_port > 0) {
        ps_connect(h, me->master_host, me->master_port);
        return;
    }
    h->seeking = true;
    struct ev_owner *prev = evloop_owner_enter(h->L, NULL); /* the group's search */
    redis_seek_init(&h->seek, h->L, env, "Redis (pub/sub)", h, ps_seek_down, ps_found);
    redis_seek_start(&h->seek);
    evloop_owner_enter(h->L, prev);
}

/* The connection is gone (or never came), every subscription with it. */
static void ps_down(struct rsn_hub *h, int ev, const char *why_in)
{
    char why[200]; /* (often the connection's own errstr, freed below) */
    snprintf(why, sizeof why, "%s", why_in && why_in[0] ? why_in : "connection lost");
    if (h->ps) {
        watch(h, 0);
        redisFree(h->ps);
        h->ps = NULL;
    }
    h->gen++;
    h->connected = false;
    for (struct rsn_entry *e = h->entries; e; e = e->next) {
        e->want = e->sent = false;
        e->pending = 0;
        for (struct rsn_member *me = e->members_head; me; me = me->mnext) {
            if (!awaits(me))
                continue; /* a member trying the lock finds it unsubscribed at its wait */
            me->parked = 0;
            me->ev = ev;
            snprintf(me->why, sizeof me->why, "%s", why);
            hand(me, HAND_DOWN);
        }
    }
}

/* ---------------------------------------------------------------- entries */

static void entry_message(struct rsn_entry *e, int64_t exit_ns, int64_t arrive_ns)
{
    struct rsn_member *me = NULL; /* the member parked longest */
    for (struct rsn_member *m = e->members_head; m; m = m->mnext)
        if (m->parked && (!me || m->parked < me->parked))
            me = m;
    e->msg_exit_ns = exit_ns;
    e->msg_arrive_ns = arrive_ns;
    if (!me) { /* a permit for the next to wait */
        if (e->stats)
            e->stats->notifications++;
        if (e->members > 0)
            e->permits++;
        return;
    }
    me->env->stats->notifications++;
    me->parked = 0;
    me->exit_ns = exit_ns;
    me->arrive_ns = arrive_ns;
    hand(me, HAND_WOKEN);
}

static void ps_on_reply(struct rsn_hub *h, redisReply *r, int64_t arrival)
{
    if (r->type == REDIS_REPLY_ERROR) {
        char why[200];
        snprintf(why, sizeof why, "%s", r->str);
        ps_down(h, PS_ERROR, why);
        return;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING)
        return;
    const char *what = r->element[0]->str;
    struct rsn_entry *e = h->entries;
    while (e && strcmp(e->channel, r->element[1]->str) != 0)
        e = e->next;
    if (!e)
        return;
    if (strcmp(what, "subscribe") == 0) {
        if (e->pending > 0 && --e->pending == 0 && e->want && e->sent)
            for (struct rsn_member *me = e->members_head; me; me = me->mnext)
                if (me->m->step == RS_SUBSCRIBING)
                    hand(me, HAND_SUBSCRIBED);
    } else if (strcmp(what, "message") == 0) {
        int64_t exit_ns = r->element[2]->type == REDIS_REPLY_STRING
                              ? strtoll(r->element[2]->str, NULL, 10)
                              : 0;
        entry_message(e, exit_ns, arrival);
    }
}

static int join(struct rsn_member *me)
{
    struct rsn_hub *h = me->hub;
    if (me->entry)
        return 0;
    struct rsn_entry *e = h->entries;
    while (e && strcmp(e->channel, me->m->channel) != 0)
        e = e->next;
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e)
            return -1;
        snprintf(e->channel, sizeof e->channel, "%s", me->m->channel);
        e->next = h->entries;
        h->entries = e;
    }
    me->entry = e;
    me->mprev = NULL;
    me->mnext = e->members_head;
    if (e->members_head)
        e->members_head->mprev = me;
    e->members_head = me;
    e->members++;
    return 0;
}

static bool ready(const struct rsn_member *me)
{
    const struct rsn_entry *e = me->entry;
    return e && me->hub->ps && e->want && e->sent && e->pending == 0;
}

static void subscribe(struct rsn_member *me)
{
    struct rsn_entry *e = me->entry;
    if (!e || e->want)
        return;
    e->want = true;
    e->stats = me->env->stats;
    if (me->hub->ps)
        entry_send_subscribe(me->hub, e);
    else
        ps_open(me->hub, me);
}

void rsn_ps_master(struct rsn_member *me, const char *host, int port)
{
    snprintf(me->master_host, sizeof me->master_host, "%s", host ? host : "");
    me->master_port = host && host[0] ? port : 0;
}

static bool take_permit(struct rsn_member *me, int64_t *exit_ns, int64_t *arrive_ns)
{
    struct rsn_entry *e = me->entry;
    if (!e || e->permits == 0)
        return false;
    e->permits--;
    *exit_ns = e->msg_exit_ns;
    *arrive_ns = e->msg_arrive_ns;
    return true;
}

static void park(struct rsn_member *me)
{
    if (me->entry && !me->parked)
        me->parked = ++me->entry->parks;
}

bool rsn_ps_act(struct rsn_member *me, enum rsn_act *act, int64_t now)
{
    struct rsn_sm *m = me->m;
    int64_t exit_ns, arrive_ns;
    if (*act == RSN_SUBSCRIBE) {
        if (join(me) != 0) {
            struct lab_err err;
            lab_err_set(&err, ENOMEM, "out of memory");
            *act = rsn_sm_ps_failed(m, &err, now);
            return true;
        }
        if (ready(me)) {
            *act = rsn_sm_subscribed(m, now);
            return true;
        }
        subscribe(me); /* a failure is handed over as any later one */
        return false;
    }
    if (!ready(me)) { /* the subscription went while it tried */
        *act = rsn_sm_ps_lost(m, "pub/sub connection lost", now);
        return true;
    }
    if (take_permit(me, &exit_ns, &arrive_ns)) {
        *act = rsn_sm_message(m, exit_ns, arrive_ns, now);
        return true;
    }
    park(me);
    return false;
}

void rsn_ps_unpark(struct rsn_member *me)
{
    me->parked = 0;
    me->hand = HAND_NONE;
    evloop_timer_cancel(me->hub->L, &me->later);
}

void rsn_ps_leave(struct rsn_member *me)
{
    struct rsn_entry *e = me->entry;
    if (!e)
        return;
    rsn_ps_unpark(me);
    if (me->mprev)
        me->mprev->mnext = me->mnext;
    else
        e->members_head = me->mnext;
    if (me->mnext)
        me->mnext->mprev = me->mprev;
    me->mprev = me->mnext = NULL;
    me->entry = NULL;
    if (--e->members > 0)
        return;
    e->permits = 0;
    bool sent = e->sent;
    e->want = e->sent = false;
    if (sent && me->hub->ps)
        ps_send(me->hub, me->env->stats, "UNSUBSCRIBE", e->channel);
}

/* ---------------------------------------------------------------- hubs */

struct rsn_hub *rsn_hub_get(struct evloop *L, struct lab_err *err)
{
    struct rsn_hub *h = hubs;
    while (h && h->L != L)
        h = h->next;
    if (h) {
        h->users++;
        return h;
    }
    h = calloc(1, sizeof *h);
    if (!h) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    int rc = lab_random_hex(h->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        free(h);
        return NULL;
    }
    h->L = L;
    h->users = 1;
    h->next = hubs;
    hubs = h;
    return h;
}

void rsn_hub_put(struct rsn_hub *h)
{
    if (--h->users > 0)
        return;
    for (struct rsn_hub **p = &hubs; *p; p = &(*p)->next)
        if (*p == h) {
            *p = h->next;
            break;
        }
    if (h->ps) {
        watch(h, 0);
        redisFree(h->ps);
    }
    struct ev_owner *prev = evloop_owner_enter(h->L, NULL);
    redis_seek_close(&h->seek);
    evloop_owner_enter(h->L, prev);
    while (h->entries) {
        struct rsn_entry *e = h->entries;
        h->entries = e->next;
        free(e);
    }
    free(h);
}

const char *rsn_hub_token(const struct rsn_hub *h)
{
    return h->token;
}
