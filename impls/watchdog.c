/*
 * watchdog.c - the renewal thread (see watchdog.h).
 *
 * One mutex and one condition variable on CLOCK_MONOTONIC guard the state;
 * the renewal call itself runs without the mutex held, and `generation`
 * tells the thread that the lock was released (and perhaps taken again)
 * while it slept, so it never renews a hold that has already ended.
 *
 * When a renewal fails, the thread does what Redisson's watchdog does
 * (RedissonBaseLock.renewExpiration up to Redisson 3.43): Redisson sends
 * the renewal through its command executor, which retries a failed
 * command on a new connection (retryAttempts 3, retryInterval 1.5 s by
 * default) before it reports an error; on an error the watchdog logs it
 * and renews that lock no more, and when the renew script answers false
 * (the lock is gone or someone else's) it cancels the renewal. Here the
 * times scale with the lease: a failed renewal is retried up to
 * WATCHDOG_RETRIES times, lease/20 apart (Redisson's 1.5 s for its 30 s
 * lockWatchdogTimeout), but never once the lease set by the last
 * successful renewal (or by the grant) has run out; the design's renew
 * function replaces a failed connection before each call. When the retries
 * fail too, the watchdog stops renewing that hold and the lock expires
 * under its holder. A cut connection thus costs one failed attempt, not
 * the lock, while a store that stays unreachable or keeps answering with
 * an error is not asked again every period for as long as the holder
 * works. (Since 3.44 Redisson renews all locks in one batched task that
 * keeps its schedule after an error; the lab keeps the per-lock rule.)
 */
#include "watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WATCHDOG_RETRIES 3        /* retries of a failed renewal (Redisson's retryAttempts) */
#define WATCHDOG_RETRY_DIV 20     /* lease / this between them (1.5 s of 30 s, as Redisson) */
#define WATCHDOG_MIN_NS 1000000LL /* no period or pause below 1 ms */

struct watchdog {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct watch_plan plan;    /* the schedule (the thread's own) */
    watchdog_renew_fn renew;   /* the design's compare-and-extend */
    void *arg;                 /* its argument */
    struct lock_stats *stats;  /* renewals / renewal_failures (written by this thread only) */
    bool armed;                /* a lock is held and renewed */
    bool in_renew;             /* a renewal call is in flight */
    bool quit;                 /* watchdog_stop() was called */
    uint64_t generation;       /* bumped by every arm and disarm */
    int64_t armed_ns;          /* when the current hold was armed (its grant) */
    char key[256];             /* the key being renewed */
};

static void deadline_at(struct timespec *ts, int64_t t)
{
    ts->tv_sec = t / 1000000000;
    ts->tv_nsec = t % 1000000000;
}

void watch_plan_init(struct watch_plan *p, int64_t lease_ns)
{
    memset(p, 0, sizeof *p);
    p->lease_ns = lease_ns;
    p->period_ns = lease_ns / 3 > WATCHDOG_MIN_NS ? lease_ns / 3 : WATCHDOG_MIN_NS;
    p->retry_ns = lease_ns / WATCHDOG_RETRY_DIV > WATCHDOG_MIN_NS ? lease_ns / WATCHDOG_RETRY_DIV
                                                                  : WATCHDOG_MIN_NS;
}

void watch_plan_arm(struct watch_plan *p, int64_t t)
{
    p->expires = t + p->lease_ns; /* a new hold: its lease runs from the grant */
    p->retries = 0;
}

int64_t watch_plan_next(const struct watch_plan *p, int64_t now)
{
    return now + (p->retries ? p->retry_ns : p->period_ns);
}

bool watch_plan_renewed(struct watch_plan *p, int r, int64_t sent, int64_t done,
                        struct lock_stats *stats)
{
    if (r > 0) {
        stats->renewals++;
        p->expires = sent + p->lease_ns;
        p->retries = 0;
        return true;
    }
    stats->renewal_failures++;
    /* not ours any more, or failed again and again, or no lease left to
     * save: stop renewing this hold */
    if (r == 0 || p->retries == WATCHDOG_RETRIES || done + p->retry_ns >= p->expires)
        return false;
    p->retries++;
    return true;
}

static void *watchdog_main(void *p)
{
    struct watchdog *w = p;
    uint64_t gen = 0;     /* the hold being renewed */
    pthread_mutex_lock(&w->mu);
    while (!w->quit) {
        if (!w->armed) {
            pthread_cond_wait(&w->cv, &w->mu);
            continue;
        }
        if (w->generation != gen) { /* a new hold */
            gen = w->generation;
            watch_plan_arm(&w->plan, w->armed_ns);
        }
        struct timespec ts;
        deadline_at(&ts, watch_plan_next(&w->plan, lab_now_ns()));
        int rc = 0;
        while (w->armed && w->generation == gen && !w->quit && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        if (!w->armed || w->generation != gen || w->quit)
            continue;
        char key[sizeof w->key];
        memcpy(key, w->key, sizeof key);
        w->in_renew = true;
        pthread_mutex_unlock(&w->mu);
        int64_t sent = lab_now_ns();
        int r = w->renew(w->arg, key);
        int64_t done = lab_now_ns();
        pthread_mutex_lock(&w->mu);
        w->in_renew = false;
        if (!watch_plan_renewed(&w->plan, r, sent, done, w->stats) && w->generation == gen)
            w->armed = false;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

struct watchdog *watchdog_start(int64_t lease_ns, watchdog_renew_fn renew, void *arg,
                                struct lock_stats *stats, struct lab_err *err)
{
    struct watchdog *w = calloc(1, sizeof *w);
    if (!w) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    watch_plan_init(&w->plan, lease_ns);
    w->renew = renew;
    w->arg = arg;
    w->stats = stats;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&w->mu, NULL);
    int rc = pthread_create(&w->thread, NULL, watchdog_main, w);
    if (rc != 0) {
        lab_err_set(err, rc, "cannot start the watchdog thread: %s", strerror(rc));
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

void watchdog_arm(struct watchdog *w, const char *key)
{
    pthread_mutex_lock(&w->mu);
    snprintf(w->key, sizeof w->key, "%s", key);
    w->armed = true;
    w->generation++;
    w->armed_ns = lab_now_ns();
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void watchdog_disarm(struct watchdog *w)
{
    pthread_mutex_lock(&w->mu);
    w->armed = false;
    w->generation++;
    pthread_cond_broadcast(&w->cv);
    while (w->in_renew)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

void watchdog_stop(struct watchdog *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->quit = true;
    w->armed = false;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
