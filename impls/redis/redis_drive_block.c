/*
 * redis_drive_block.c - the per-process driver of the Redis state machine
 * (redis_drive.h): the machine's acts on a blocking link (redis_link.h).
 *
 * SEND is one call on the link (no reply: a loss), RECONNECT a new
 * connection to the store, SLEEP a sleep cut short by the run's stop,
 * FAILPOINT the failpoint's own action; the loop ends when the machine
 * says DONE. A design that renews its lock gets the watchdog thread
 * (watchdog.h), armed and disarmed as the machine says; its renewals are
 * a second machine's, on a link of the thread's own opened with the
 * client.
 */
#include "redis_drive.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "redis_link.h"
#include "watchdog.h"

struct lock_client {
    const struct lock_env *env;
    char token[40];          /* this client's identity: 128 random bits in hex */
    struct redis_sm m;
    struct redis_blink link;
    struct redis_sm renewal; /* the watchdog thread's machine (wd set) */
    struct redis_blink wd_link;
    struct watchdog *wd;     /* NULL for a design that renews not */
};

static void watch(struct lock_client *c, struct redis_sm *m)
{
    if (m->watch == RSM_WATCH_ARM && c->wd)
        watchdog_arm(c->wd, m->key);
    else if (m->watch == RSM_WATCH_DISARM && c->wd)
        watchdog_disarm(c->wd);
    m->watch = RSM_WATCH_NONE;
}

/* Do m's acts on link l until it is done. */
static void run(struct lock_client *c, struct redis_blink *l, struct redis_sm *m,
                enum redis_sm_act act)
{
    for (watch(c, m); act != REDIS_SM_DONE; watch(c, m)) {
        struct redis_sm_reply r;
        struct lab_err err = {0};
        const char *why;
        switch (act) {
        case REDIS_SM_SEND:
            act = redis_blink_call(l, m->argc, m->argv, &r, &why)
                      ? redis_sm_reply(m, &r, lab_now_ns())
                      : redis_sm_lost(m, why, lab_now_ns());
            break;
        case REDIS_SM_RECONNECT: {
            bool ok = redis_blink_reconnect(l, &err);
            act = redis_sm_reconnected(m, ok, &err, lab_now_ns());
            break;
        }
        case REDIS_SM_SLEEP: {
            int64_t left = m->wake_at - lab_now_ns();
            if (left > 0)
                lab_sleep_ns(left, c->env->stop);
            act = redis_sm_timer(m, lab_now_ns());
            break;
        }
        case REDIS_SM_FAILPOINT:
            failpoint_hit(m->fp, c->env->stop);
            act = redis_sm_resume(m, lab_now_ns());
            break;
        case REDIS_SM_DONE:
            break;
        }
    }
}

/* The watchdog thread's renewal: 1 extended, 0 no longer ours, -1 failed. */
static int renew(void *arg, const char *key)
{
    struct lock_client *c = arg;
    run(c, &c->wd_link, &c->renewal, redis_sm_renew(&c->renewal, key, lab_now_ns()));
    return c->renewal.renewed;
}

struct redis_sm *redis_block_machine(struct lock_client *c)
{
    return &c->m;
}

void redis_block_close(struct lock_client *c)
{
    if (!c)
        return;
    watchdog_stop(c->wd); /* first: its renewals use c->renewal */
    redis_blink_close(&c->wd_link);
    redis_blink_close(&c->link);
    free(c);
}

int redis_block_open(struct lock_client **out, const struct lock_env *env,
                     const struct redis_sm_design *d, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    redis_blink_init(&c->link, env, "Redis");
    redis_blink_init(&c->wd_link, env, "Redis");
    int rc = lab_random_hex(c->token, 16);
    if (rc) {
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
        redis_block_close(c);
        return -1;
    }
    struct redis_sm *m = &c->m;
    redis_sm_init(m, d, env, c->token);
    run(c, &c->link, m, redis_sm_open(m, lab_now_ns()));
    if (m->open_rc != 0) {
        *err = m->err;
        redis_block_close(c);
        return -1;
    }
    if (redis_sm_renews(m)) { /* the watchdog's connection from the start, as one opened */
        redis_sm_init_renewal(&c->renewal, m);
        run(c, &c->wd_link, &c->renewal, redis_sm_open(&c->renewal, lab_now_ns()));
        if (c->renewal.open_rc != 0)
            *err = c->renewal.err;
        if (c->renewal.open_rc != 0 ||
            !(c->wd = watchdog_start(env->ttl_ns, renew, c, env->stats, err))) {
            redis_block_close(c);
            return -1;
        }
    }
    *out = c;
    return 0;
}

enum lock_status redis_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                     struct lab_err *err)
{
    run(c, &c->link, &c->m, redis_sm_acquire(&c->m, key, wait_ns, lab_now_ns()));
    if (c->m.status == LOCK_ERROR)
        *err = c->m.err;
    return c->m.status;
}

enum release_status redis_block_release(struct lock_client *c, const char *key,
                                        struct lab_err *err)
{
    run(c, &c->link, &c->m, redis_sm_release(&c->m, key, lab_now_ns()));
    if (c->m.release == RELEASE_ERROR)
        *err = c->m.err;
    return c->m.release;
}
