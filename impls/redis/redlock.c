/*
 * redlock.c - the Redlock algorithm on N independent Redis masters.
 *
 * What people ship as "the safe Redis lock" when one master is not enough
 * (antirez's Redlock; Redisson's RedissonRedLock in seed 000): N masters
 * with no replication between them. An attempt draws a fresh random token,
 * notes the time, and sends SET key token NX PX ttl to every master at once
 * (the commands are written to all connections before any reply is read).
 * It is granted when a majority (N/2+1) said OK and some validity is left:
 * validity = ttl - elapsed - drift, drift = ttl/100 + 2 ms for the clocks of
 * the masters running at slightly different rates. Otherwise the attempt
 * unlocks every master (Lua compare-and-delete of its token), as the
 * algorithm says and node-redlock does, those it believes it did not lock
 * included: no judgement of which answers to trust. (A master
 * that answered nil cannot hold this attempt's fresh token, so under
 * contention this costs compare-and-deletes that delete nothing.) Then the
 * client sleeps a random delay before the next attempt, so that clients
 * that split the votes between them do not collide again. Every master has
 * short connect and command timeouts: a dead or stopped master is a "no"
 * after 50 ms, not a stalled client, and its connection (unusable after a
 * timeout) is reopened before it is used again; a command that finds its
 * connection closed by the server (the master restarted since) is sent
 * once more on a new one, as clients that reconnect do. Release is
 * compare-and-delete on every master, best-effort: a master that does not
 * answer keeps the key until its TTL, and the release still counts as one.
 *
 * How it breaks, all of it by timing: the validity is checked once, at the
 * grant, and nothing checks it again. A client that pauses (GC, SIGSTOP)
 * or whose critical section outlasts the TTL keeps acting after the keys
 * expired on every master, as with redis-lua. A master whose clock jumps
 * forward (or that restarts without having persisted the key) forgets the
 * key early, and a second client can build a majority with it while the
 * first still holds its own. And there is no fencing token: the resource
 * cannot tell the stale holder's write from the new holder's, so a lapse
 * turns straight into lost updates. One cannot be made up either: an INCR
 * on each master gives N counters that count different grants (a master
 * misses the grants it did not vote for, or forgets its count when it
 * restarts empty), and no majority of them orders two grants the way the
 * lock's own history does. So redlock does not claim LOCK_CAP_FENCING,
 * and a fencing step runs it unfenced and says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "lock.h"
#include "lock_poll.h"
#include "redis_conn.h"
#include "redlock_common.h"

/* ------------------------------------------------------------------------
 * Client state
 * --------------------------------------------------------------------- */

struct master {
    const struct lock_endpoint *ep; /* address, owned by the harness */
    redisContext *rc;               /* NULL while down: reconnected before the next use */
    redisReply *reply;              /* reply of the current fan-out, NULL if none */
    int sent;                       /* a request of the current fan-out is in flight */
    int reloading;                  /* a SCRIPT LOAD precedes that request (reconnected) */
    int timeout_cut;                /* its timeout was cut to a fan-out's deadline */
};

struct lock_client {
    const struct lock_env *env; /* harness settings and counters */
    struct redlock_params p;    /* masters, quorum, TTL */
    struct master *m;           /* p.n of them */
    char sha[41];               /* SHA1 of redlock_unlock_lua (loaded at open) */
    char token[33];             /* token of the current (or last) attempt */
    int answered;               /* masters that answered the last fan-out */
    struct lab_err last;        /* the last master failure, for error messages */
};

/* ------------------------------------------------------------------------
 * Connections
 * --------------------------------------------------------------------- */

static void set_timeout_ns(redisContext *rc, int64_t ns)
{
    struct timeval tv = {(time_t)(ns / 1000000000), (suseconds_t)(ns % 1000000000 / 1000)};
    redisSetTimeout(rc, tv);
}

/* Forget master i's connection after a failure, keeping why in c->last. */
static void master_drop(struct lock_client *c, int i, const char *why)
{
    struct master *m = &c->m[i];
    lab_err_set(&c->last, EIO, "redlock master %d (%s:%d): %s", i, m->ep->host, m->ep->port, why);
    if (m->rc)
        redisFree(m->rc);
    m->rc = NULL;
}

/* Check a SCRIPT LOAD reply from master i (NULL when none came) and keep
 * the SHA1; drops the master when it is not one. 0 or -1. */
static int master_script_loaded(struct lock_client *c, int i, redisReply *r)
{
    int ok = r && r->type == REDIS_REPLY_STRING && r->len == 40;
    if (ok && c->sha[0] == '\0')
        memcpy(c->sha, r->str, 41);
    if (!ok)
        master_drop(c, i, r && r->type == REDIS_REPLY_ERROR ? r->str
                          : r ? "SCRIPT LOAD returned no SHA1"
                          : c->m[i].rc->err ? c->m[i].rc->errstr : "no reply");
    if (r)
        freeReplyObject(r);
    return ok ? 0 : -1;
}

/* Connect master i with a connect timeout of timeout_ms and the short
 * command timeout. 0, or -1 with c->last set. */
static int master_connect(struct lock_client *c, int i, int timeout_ms)
{
    struct master *m = &c->m[i];
    char what[32];
    snprintf(what, sizeof what, "redlock master %d", i);
    m->rc = redis_conn_open(what, m->ep->host, m->ep->port, timeout_ms, &c->last);
    if (!m->rc)
        return -1;
    set_timeout_ns(m->rc, REDLOCK_TIMEOUT_MS * 1000000LL);
    m->timeout_cut = 0;
    return 0;
}

/* ------------------------------------------------------------------------
 * Fan-out: one command to the masters in mask, all written before any
 * reply is read and all replies awaited against one deadline, so an
 * attempt costs one round trip of wall time, and a stopped master 50 ms,
 * however many there are.
 * --------------------------------------------------------------------- */

static void replies_free(struct lock_client *c)
{
    for (int i = 0; i < c->p.n; i++) {
        if (c->m[i].reply)
            freeReplyObject(c->m[i].reply);
        c->m[i].reply = NULL;
    }
}

/* Queue argv (after a SCRIPT LOAD on a fresh connection) on master i and
 * write it out. */
static void master_send(struct lock_client *c, int i, int argc, const char **argv)
{
    struct master *m = &c->m[i];
    if (m->timeout_cut) {
        set_timeout_ns(m->rc, REDLOCK_TIMEOUT_MS * 1000000LL);
        m->timeout_cut = 0;
    }
    if ((m->reloading &&
         redisAppendCommand(m->rc, "SCRIPT LOAD %s", redlock_unlock_lua) != REDIS_OK) ||
        redisAppendCommandArgv(m->rc, argc, argv, NULL) != REDIS_OK) {
        master_drop(c, i, m->rc->errstr);
        return;
    }
    int done = 0;
    while (!done)
        if (redisBufferWrite(m->rc, &done) != REDIS_OK) {
            master_drop(c, i, m->rc->errstr);
            return;
        }
    m->sent = 1;
    c->env->stats->round_trips++;
}

/* Read one reply from master i, waiting no later than deadline. */
static redisReply *master_reply(struct lock_client *c, int i, int64_t deadline)
{
    struct master *m = &c->m[i];
    int64_t left = deadline - lab_now_ns();
    if (left < REDLOCK_TIMEOUT_MS * 1000000LL - 1000000) {
        set_timeout_ns(m->rc, left > 1000000 ? left : 1000000);
        m->timeout_cut = 1;
    }
    void *r = NULL;
    if (redisGetReply(m->rc, &r) != REDIS_OK)
        return NULL;
    return r;
}

/* Did the connection fail because the server closed or reset it (rather
 * than by a timeout)? Read right after the failed call, errno included. */
static int connection_broken(const redisContext *rc)
{
    return rc->err == REDIS_ERR_EOF ||
           (rc->err == REDIS_ERR_IO && (errno == ECONNRESET || errno == EPIPE));
}

/* One round of a fan-out to the masters in mask (see fanout). Returns the
 * masters whose connection, open before this round, turned out closed by
 * the server when the reply was read: the master restarted since, and the
 * command died with the old socket. */
static uint32_t fanout_round(struct lock_client *c, uint32_t mask, int argc, const char **argv)
{
    uint32_t old = 0, broken = 0;
    for (int i = 0; i < c->p.n; i++) {
        c->m[i].sent = c->m[i].reloading = 0;
        if ((mask & (1u << i)) && c->m[i].rc) {
            old |= 1u << i;
            master_send(c, i, argc, argv);
        }
    }
    /* the masters that were down are reconnected only now, so that a
     * connect timeout does not hold back the command to the others */
    for (int i = 0; i < c->p.n; i++) {
        struct master *m = &c->m[i];
        if (!(mask & (1u << i)) || m->sent || m->rc)
            continue;
        if (master_connect(c, i, REDLOCK_TIMEOUT_MS) != 0)
            continue;
        m->reloading = 1;
        master_send(c, i, argc, argv);
    }
    int64_t deadline = lab_now_ns() + REDLOCK_TIMEOUT_MS * 1000000LL;
    for (int i = 0; i < c->p.n; i++) {
        struct master *m = &c->m[i];
        if (!m->sent)
            continue;
        if (m->reloading && master_script_loaded(c, i, master_reply(c, i, deadline)) != 0)
            continue;
        m->reply = master_reply(c, i, deadline);
        if (!m->reply) {
            if ((old & (1u << i)) && connection_broken(m->rc))
                broken |= 1u << i;
            master_drop(c, i, m->rc->err ? m->rc->errstr : "no reply");
            continue;
        }
        if (m->reply->type == REDIS_REPLY_ERROR) {
            /* NOSCRIPT included: the reconnect reloads the script */
            master_drop(c, i, m->reply->str);
            freeReplyObject(m->reply);
            m->reply = NULL;
            continue;
        }
        c->answered++;
    }
    return broken;
}

/* Send argv to every master in mask and collect the replies into
 * c->m[i].reply (NULL for a master that failed: it is dropped, and an
 * -ERR answer counts as a failure). A master whose old connection the
 * server had closed (it restarted) gets the command once more on a new
 * connection, as client libraries that reconnect do (ioredis, redis-py):
 * a restarted master is a master that answers, not a silent one. A
 * timeout is not retried. Sets and returns c->answered. */
static int fanout(struct lock_client *c, uint32_t mask, int argc, const char **argv)
{
    c->answered = 0;
    for (int i = 0; i < c->p.n; i++)
        c->m[i].reply = NULL;
    uint32_t again = fanout_round(c, mask, argc, argv);
    if (again)
        fanout_round(c, again, argc, argv);
    return c->answered;
}

/* Compare-and-delete token on the masters in mask; returns how many
 * deleted it (c->answered says how many answered). */
static int unlock_masters(struct lock_client *c, uint32_t mask, const char *key, const char *token)
{
    const char *argv[] = {"EVALSHA", c->sha, "1", key, token};
    fanout(c, mask, 5, argv);
    int deleted = 0;
    for (int i = 0; i < c->p.n; i++) {
        redisReply *r = c->m[i].reply;
        deleted += r && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    }
    replies_free(c);
    return deleted;
}

/* ------------------------------------------------------------------------
 * The lock
 * --------------------------------------------------------------------- */

/* One Redlock attempt: 1 granted, 0 not (votes or validity short), -1 error. */
static int redlock_try(struct lock_client *c, const char *key, struct lab_err *err)
{
    /* the attempt's own token: a failed (e.g. nested) attempt must not
     * overwrite the token of a lock this client already holds */
    char token[sizeof c->token];
    if (redlock_new_token(token, err) != 0)
        return -1;
    int64_t t0 = lab_now_ns();
    const char *argv[] = {"SET", key, token, "NX", "PX", c->p.ttl_arg};
    fanout(c, redlock_all_masters(&c->p), 6, argv);
    int votes = 0;
    for (int i = 0; i < c->p.n; i++) {
        redisReply *r = c->m[i].reply;
        votes += r && r->type == REDIS_REPLY_STATUS;
    }
    replies_free(c);
    int answered = c->answered;
    if (redlock_granted(&c->p, votes, t0, lab_now_ns())) {
        memcpy(c->token, token, sizeof token);
        c->env->stats->lease_floor_ns = redlock_lease_floor(&c->p, t0);
        return 1;
    }
    unlock_masters(c, redlock_all_masters(&c->p), key, token);
    c->answered = answered; /* reachability is judged on the SETs */
    return 0;
}

/* Attempt until granted or the wait budget is spent. A master that did not
 * answer in time is a failed master, a "no", as the algorithm counts it: an
 * attempt short of a majority fails like one that lost the vote, and a
 * budget spent so is a timeout. Only a budget in which no attempt reached a
 * majority of masters at all is an error (the store was unreachable the
 * whole wait, not slow now and then: on a loaded machine a master misses
 * the 50 ms now and then, and the last attempt's count alone would turn
 * that into an error). */
static enum lock_status redlock_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                        struct lab_err *err)
{
    const struct lock_env *env = c->env;
    int64_t deadline = lab_now_ns() + wait_ns;
    int most = 0; /* most masters that answered one attempt */
    for (int n = 0;; n++) {
        int r = redlock_try(c, key, err);
        if (r > 0)
            return LOCK_GRANTED;
        if (r < 0)
            return LOCK_ERROR;
        if (c->answered > most)
            most = c->answered;
        env->stats->polls++;
        /* a random pause, so that clients that split the votes do not collide again */
        int next = lock_poll_pause(env, n, deadline, true);
        if (next > 0)
            continue;
        return redlock_gave_up(&c->p, next, most, c->last.msg, err);
    }
}

/* Release is best-effort on every master, as the algorithm has it: the
 * compare-and-delete goes to all of them, and a master that does not answer
 * (down, or late under load) keeps the key until its TTL, which is all a
 * missed unlock costs (later grants wait for it, nobody gets two holders).
 * So OK unless the masters that answered show the lock was no longer ours:
 * NOT_OWNER only when so many of them no longer held the token (it expired,
 * or was never ours there) that no quorum can still hold it (the harness
 * reads a NOT_OWNER before the lease ran out as "someone took it", so a
 * release that reached too few masters to tell must not pass for one).
 * Never an error: an unreachable master is not the lab failing to measure. */
static enum release_status redlock_release(struct lock_client *c, const char *key,
                                           struct lab_err *err)
{
    (void)err;
    int deleted = unlock_masters(c, redlock_all_masters(&c->p), key, c->token);
    return redlock_release_outcome(&c->p, deleted, c->answered);
}

static void redlock_close(struct lock_client *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->p.n; i++) {
        if (c->m[i].rc)
            redisFree(c->m[i].rc);
    }
    free(c->m);
    free(c);
}

static int redlock_open(struct lock_client **out, const struct lock_env *env,
                        struct lab_err *err)
{
    *out = NULL;
    struct redlock_params p;
    if (redlock_params_init(&p, env, err) != 0)
        return -1;
    struct lock_client *c = calloc(1, sizeof *c);
    if (c)
        c->m = calloc((size_t)p.n, sizeof *c->m);
    if (!c || !c->m) {
        free(c);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    c->p = p;
    int up = 0;
    for (int i = 0; i < c->p.n; i++) {
        c->m[i].ep = &env->servers->node[i];
        if (master_connect(c, i, REDLOCK_OPEN_TIMEOUT_MS) != 0)
            continue;
        /* every client loads at once before the run: the open timeout */
        set_timeout_ns(c->m[i].rc, REDLOCK_OPEN_TIMEOUT_MS * 1000000LL);
        c->env->stats->round_trips++;
        if (master_script_loaded(c, i, redisCommand(c->m[i].rc, "SCRIPT LOAD %s",
                                                    redlock_unlock_lua)) != 0)
            continue;
        set_timeout_ns(c->m[i].rc, REDLOCK_TIMEOUT_MS * 1000000LL);
        up++;
    }
    if (redlock_open_outcome(&c->p, up, c->last.msg, err) != 0) {
        redlock_close(c);
        return -1;
    }
    *out = c;
    return 0;
}

const struct lock_ops lock_redlock = {
    .name = "redlock",
    .backend = "redis",
    .summary = "Redlock: majority of N independent masters within validity; breaks on "
               "clock jumps and pauses, no fencing",
    .caps = LOCK_CAP_TTL | LOCK_CAP_MULTI_MASTER,
    .no_fencing = "tokens from N independent masters are not ordered: each master counts "
                  "only the grants it voted for and forgets them when it restarts empty",
    .open = redlock_open,
    .acquire = redlock_acquire,
    .release = redlock_release,
    .close = redlock_close,
    .async = &redlock_async_ops,
};
