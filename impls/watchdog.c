/*
 * watchdog.c - the renewal thread (see watchdog.h).
 *
 * One mutex and one condition variable on CLOCK_MONOTONIC guard the state;
 * the renewal call itself runs without the mutex held, and `generation`
 * tells the thread that the lock was released (and perhaps taken again)
 * while it slept, so it never renews a hold that has already ended.
 */
#include "watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct watchdog {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t period_ns;         /* time between renewals */
    watchdog_renew_fn renew;   /* the design's compare-and-extend */
    void *arg;                 /* its argument */
    struct lock_stats *stats;  /* renewals / renewal_failures (written by this thread only) */
    bool armed;                /* a lock is held: keep renewing */
    bool in_renew;             /* a renewal call is in flight */
    bool quit;                 /* watchdog_stop() was called */
    uint64_t generation;       /* bumped by every arm and disarm */
    char key[256];             /* the key being renewed */
};

static void deadline_after(struct timespec *ts, int64_t ns)
{
    int64_t t = lab_now_ns() + ns;
    ts->tv_sec = t / 1000000000;
    ts->tv_nsec = t % 1000000000;
}

static void *watchdog_main(void *p)
{
    struct watchdog *w = p;
    pthread_mutex_lock(&w->mu);
    while (!w->quit) {
        if (!w->armed) {
            pthread_cond_wait(&w->cv, &w->mu);
            continue;
        }
        uint64_t gen = w->generation;
        struct timespec ts;
        deadline_after(&ts, w->period_ns);
        int rc = 0;
        while (w->armed && w->generation == gen && !w->quit && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        if (!w->armed || w->generation != gen || w->quit)
            continue;
        char key[sizeof w->key];
        memcpy(key, w->key, sizeof key);
        w->in_renew = true;
        pthread_mutex_unlock(&w->mu);
        int r = w->renew(w->arg, key);
        pthread_mutex_lock(&w->mu);
        w->in_renew = false;
        if (r > 0) {
            w->stats->renewals++;
        } else {
            w->stats->renewal_failures++;
            if (r == 0 && w->generation == gen)
                w->armed = false; /* not ours any more: nothing left to keep alive */
        }
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

struct watchdog *watchdog_start(int64_t period_ns, watchdog_renew_fn renew, void *arg,
                                struct lock_stats *stats, struct lab_err *err)
{
    struct watchdog *w = calloc(1, sizeof *w);
    if (!w) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    w->period_ns = period_ns > 1000000 ? period_ns : 1000000;
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
