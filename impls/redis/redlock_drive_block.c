/*
 * redlock_drive_block.c - the per-process driver of redlock's state
 * machine (redlock_machine.h): its fan-outs on blocking hiredis
 * connections, one per master, with short connect and command timeouts
 * (REDLOCK_TIMEOUT_MS: a dead or stopped master is a "no" after 50 ms,
 * not a stalled client).
 *
 * A round writes the command to every master in the mask whose connection
 * is open before any reply is read, then reconnects the masters that were
 * down (each with a connect timeout of its own, so that a connect does not
 * hold back the command to the others) and sends them the script load
 * and the command, then reads every reply against one deadline: a round
 * costs one round trip of wall time, however many masters there are. A
 * connection that failed is dropped (hiredis leaves it unusable); one
 * that was open before the round and turns out closed by the server
 * (EOF, reset) is reported RL_BROKEN. Round trips count one per master a
 * command was written to. SLEEP is a sleep cut short by the run's stop.
 */
#include "redis_drive.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "redis_conn.h"
#include "redis_link.h"

struct master {
    const struct lock_endpoint *ep;
    redisContext *rc;   /* NULL while down: reconnected before the next use */
    bool sent;          /* a request of the current round is in flight */
    bool old;           /* its connection was open before this round */
    bool reloading;     /* a SCRIPT LOAD precedes that request (reconnected) */
    bool timeout_cut;   /* its timeout was cut to a round's deadline */
};

struct lock_client {
    const struct lock_env *env;
    struct rl_sm sm;
    struct master m[REDLOCK_MAX_MASTERS]; /* sm.p.n of them */
};

static void set_timeout_ns(redisContext *rc, int64_t ns)
{
    struct timeval tv = {(time_t)(ns / 1000000000), (suseconds_t)(ns % 1000000000 / 1000)};
    redisSetTimeout(rc, tv);
}

static void master_drop(struct lock_client *c, int i)
{
    if (c->m[i].rc)
        redisFree(c->m[i].rc);
    c->m[i].rc = NULL;
}

static int master_connect(struct lock_client *c, int i, int timeout_ms)
{
    struct master *m = &c->m[i];
    char what[32];
    struct lab_err err = {0};
    snprintf(what, sizeof what, "redlock master %d", i);
    m->rc = redis_conn_open(what, m->ep->host, m->ep->port, timeout_ms, &err);
    if (!m->rc) {
        c->sm.last = err;
        return -1;
    }
    set_timeout_ns(m->rc, REDLOCK_TIMEOUT_MS * 1000000LL);
    m->timeout_cut = false;
    return 0;
}

/* Queue the round's command (after a SCRIPT LOAD on a fresh connection)
 * on master i and write it out. */
static void master_send(struct lock_client *c, int i)
{
    struct master *m = &c->m[i];
    struct rl_sm *sm = &c->sm;
    if (m->timeout_cut) {
        set_timeout_ns(m->rc, REDLOCK_TIMEOUT_MS * 1000000LL);
        m->timeout_cut = false;
    }
    int done = 0;
    if ((m->reloading &&
         redisAppendCommand(m->rc, "SCRIPT LOAD %s", redlock_unlock_lua) != REDIS_OK) ||
        redisAppendCommandArgv(m->rc, sm->argc, sm->argv, NULL) != REDIS_OK)
        goto fail;
    while (!done)
        if (redisBufferWrite(m->rc, &done) != REDIS_OK)
            goto fail;
    m->sent = true;
    c->env->stats->round_trips++;
    return;
fail:
    rl_sm_master_failed(sm, i, m->rc->errstr);
    master_drop(c, i);
}

/* One reply from master i by deadline; NULL when none came. */
static redisReply *master_reply(struct lock_client *c, int i, int64_t deadline)
{
    struct master *m = &c->m[i];
    int64_t left = deadline - lab_now_ns();
    if (left < REDLOCK_TIMEOUT_MS * 1000000LL - 1000000) {
        set_timeout_ns(m->rc, left > 1000000 ? left : 1000000);
        m->timeout_cut = true;
    }
    void *r = NULL;
    if (redisGetReply(m->rc, &r) != REDIS_OK)
        return NULL;
    return r;
}

/* Closed or reset by the server, rather than timed out? Read right after
 * the failed call, errno included. */
static bool connection_broken(const redisContext *rc)
{
    return rc->err == REDIS_ERR_EOF ||
           (rc->err == REDIS_ERR_IO && (errno == ECONNRESET || errno == EPIPE));
}

/* One round of the machine's fan-out: every master in sm.mask is fed. */
static void fanout_round(struct lock_client *c)
{
    struct rl_sm *sm = &c->sm;
    int n = sm->p.n;
    for (int i = 0; i < n; i++) {
        struct master *m = &c->m[i];
        m->sent = m->reloading = m->old = false;
        if ((sm->mask & (1u << i)) && m->rc) {
            m->old = true;
            master_send(c, i);
        }
    }
    for (int i = 0; i < n; i++) { /* the masters that were down, only now */
        struct master *m = &c->m[i];
        if (!(sm->mask & (1u << i)) || m->sent || m->rc)
            continue;
        int timeout_ms = sm->kind == RL_OPEN ? REDLOCK_OPEN_TIMEOUT_MS : REDLOCK_TIMEOUT_MS;
        if (master_connect(c, i, timeout_ms) != 0)
            continue;
        if (sm->kind == RL_OPEN) /* every client loads at once before the run */
            set_timeout_ns(m->rc, REDLOCK_OPEN_TIMEOUT_MS * 1000000LL);
        m->reloading = sm->kind != RL_OPEN;
        master_send(c, i);
    }
    int64_t deadline = lab_now_ns() + sm->timeout_ns;
    for (int i = 0; i < n; i++) {
        struct master *m = &c->m[i];
        if (!m->sent)
            continue;
        if (m->reloading) {
            redisReply *lr = master_reply(c, i, deadline);
            struct redis_sm_reply rr;
            if (lr)
                redis_sm_from_hiredis(lr, &rr);
            bool ok = rl_sm_loaded(sm, i, lr ? &rr : NULL,
                                   m->rc->err ? m->rc->errstr : "no reply");
            if (lr)
                freeReplyObject(lr);
            if (!ok) {
                master_drop(c, i);
                continue;
            }
        }
        redisReply *r = master_reply(c, i, deadline);
        if (!r) {
            enum rl_result res = m->old && connection_broken(m->rc) ? RL_BROKEN : RL_FAILED;
            rl_sm_master(sm, i, res, NULL, m->rc->err ? m->rc->errstr : "no reply");
            master_drop(c, i);
            continue;
        }
        struct redis_sm_reply rr;
        redis_sm_from_hiredis(r, &rr);
        if (rl_sm_master(sm, i, RL_ANSWERED, &rr, NULL))
            master_drop(c, i);
        freeReplyObject(r);
    }
    if (sm->kind == RL_OPEN)
        for (int i = 0; i < n; i++)
            if (c->m[i].rc)
                set_timeout_ns(c->m[i].rc, REDLOCK_TIMEOUT_MS * 1000000LL);
}

static void run(struct lock_client *c, enum rl_act act)
{
    struct rl_sm *sm = &c->sm;
    for (;;) {
        switch (act) {
        case RL_FANOUT:
            fanout_round(c);
            act = rl_sm_round_done(sm, lab_now_ns());
            break;
        case RL_SLEEP: {
            int64_t left = sm->wake_at - lab_now_ns();
            if (left > 0)
                lab_sleep_ns(left, c->env->stop);
            act = rl_sm_timer(sm, lab_now_ns());
            break;
        }
        case RL_DONE:
            return;
        }
    }
}

void rl_block_close(struct lock_client *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->sm.p.n; i++)
        master_drop(c, i);
    free(c);
}

int rl_block_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    if (rl_sm_init(&c->sm, env, NULL, err) != 0) {
        free(c);
        return -1;
    }
    for (int i = 0; i < c->sm.p.n; i++)
        c->m[i].ep = &env->servers->node[i];
    run(c, rl_sm_open(&c->sm, lab_now_ns()));
    if (c->sm.open_rc != 0) {
        *err = c->sm.err;
        rl_block_close(c);
        return -1;
    }
    *out = c;
    return 0;
}

enum lock_status rl_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                  struct lab_err *err)
{
    run(c, rl_sm_acquire(&c->sm, key, wait_ns, lab_now_ns()));
    if (c->sm.status == LOCK_ERROR)
        *err = c->sm.err;
    return c->sm.status;
}

enum release_status rl_block_release(struct lock_client *c, const char *key,
                                     struct lab_err *err)
{
    (void)err; /* never an error */
    run(c, rl_sm_release(&c->sm, key, lab_now_ns()));
    return c->sm.release;
}
