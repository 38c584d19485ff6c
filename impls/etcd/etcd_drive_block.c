/*
 * etcd_drive_block.c - the per-process driver of the etcd state machine
 * (etcd_drive.h): the machine's acts over blocking libcurl
 * (common/etcd_conn.h).
 *
 * CALL is one etcd_call (every member in turn until one answers), STREAM
 * one etcd_stream until the machine's message function has it, its
 * deadline passes or the run stops, SLEEP a sleep cut short by the stop
 * (after moving to the next member when the machine says so). The loop
 * ends when the machine says DONE.
 *
 * The keep-alive lane runs on a thread of its own over a second
 * connection, as Go's client keeps its lease alive beside the calls: it
 * sleeps until the machine's next renewal (or until the operation lane
 * arms or disarms it), sends it and feeds the answer back. The machine is
 * shared by both threads: every call into it holds the client's mutex,
 * no request does.
 */
#include "etcd_drive.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etcd_conn.h"

struct etcd_block {
    struct etcd_conn *ec;  /* the client's requests (round trips) */
    struct etcd_conn *kc;  /* the keep-alive's; NULL without one */
    pthread_mutex_t mu;    /* the machine */
    pthread_cond_t cv;     /* the keep-alive lane changed, or quit */
    pthread_t ka_thread;
    bool ka_running, quit;
};

struct lock_client *etcd_client_new(const struct lock_env *env, const struct etcd_sm_design *d,
                                    bool keepalive, struct lab_err *err)
{
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    char ident[32];
    snprintf(ident, sizeof ident, "%d.%d", env->client_id, (int)getpid());
    c->env = env;
    etcd_sm_init(&c->sm, d, env, ident, keepalive);
    return c;
}

static void set_deadline(struct timespec *ts, int64_t t)
{
    int64_t wall = t - lab_now_ns(); /* the condition variable waits on CLOCK_REALTIME */
    clock_gettime(CLOCK_REALTIME, ts);
    int64_t ns = ts->tv_nsec + (wall > 0 ? wall : 0);
    ts->tv_sec += ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
}

static void *ka_main(void *arg)
{
    struct lock_client *c = arg;
    struct etcd_block *b = c->bk;
    struct etcd_sm *m = &c->sm;
    pthread_mutex_lock(&b->mu);
    while (!b->quit) {
        enum etcd_ka_act act = etcd_sm_ka_timer(m, lab_now_ns());
        if (act == ETCD_KA_IDLE) {
            pthread_cond_wait(&b->cv, &b->mu);
            continue;
        }
        if (act == ETCD_KA_WAIT) {
            struct timespec ts;
            set_deadline(&ts, m->ka.wake_at);
            pthread_cond_timedwait(&b->cv, &b->mu, &ts);
            continue;
        }
        json_t *body = etcd_sm_ka_take(m), *resp = NULL;
        struct lab_err err;
        pthread_mutex_unlock(&b->mu);
        int rc = etcd_call(b->kc, ETCD_KEEPALIVE, body, &resp, &err);
        pthread_mutex_lock(&b->mu);
        etcd_sm_ka_reply(m, rc == 0 ? resp : NULL, lab_now_ns());
        json_decref(resp);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* Under the mutex: the keep-alive thread sees what the last call changed. */
static void sm_locked_done(struct etcd_block *b)
{
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

static int on_msg(void *arg, json_t *msg, struct lab_err *err)
{
    struct lock_client *c = arg;
    pthread_mutex_lock(&c->bk->mu);
    int r = etcd_sm_msg(&c->sm, msg, err);
    pthread_mutex_unlock(&c->bk->mu);
    return r;
}

/* Do the machine's acts until it is done; act was returned under the
 * mutex, which is held on entry and released on return. */
static void run(struct lock_client *c, enum etcd_sm_act act)
{
    struct etcd_block *b = c->bk;
    struct etcd_sm *m = &c->sm;
    while (act != ETCD_SM_DONE && act != ETCD_SM_IGNORED) {
        const char *path = m->path;
        json_t *body = act == ETCD_SM_SLEEP ? NULL : etcd_sm_take(m), *resp = NULL;
        bool next = m->next_member;
        int64_t wake_at = m->wake_at, deadline = m->deadline;
        struct lab_err err = {0};
        sm_locked_done(b);
        int r = 0;
        switch (act) {
        case ETCD_SM_CALL:
            r = etcd_call(b->ec, path, body, &resp, &err);
            break;
        case ETCD_SM_STREAM:
            r = etcd_stream(b->ec, path, body, on_msg, c, deadline, c->env->stop, &err);
            break;
        case ETCD_SM_SLEEP:
            if (next)
                etcd_conn_next(b->ec);
            if (wake_at > lab_now_ns())
                lab_sleep_ns(wake_at - lab_now_ns(), c->env->stop);
            break;
        case ETCD_SM_DONE:
        case ETCD_SM_IGNORED:
            break;
        }
        pthread_mutex_lock(&b->mu);
        int64_t now = lab_now_ns();
        if (act == ETCD_SM_CALL)
            act = etcd_sm_reply(m, r == 0 ? resp : NULL, &err, now);
        else if (act == ETCD_SM_STREAM)
            act = etcd_sm_stream_end(m, r, &err, now);
        else
            act = etcd_sm_timer(m, now);
        json_decref(resp);
    }
    sm_locked_done(b);
}

int etcd_block_open(struct lock_client **out, const struct lock_env *env,
                    const struct etcd_sm_design *d, bool keepalive, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = etcd_client_new(env, d, keepalive, err);
    struct etcd_block *b = c ? calloc(1, sizeof *b) : NULL;
    if (!b) {
        free(c);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->bk = b;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    b->ec = etcd_conn_new(env->servers->conn, ETCD_CALL_TIMEOUT_MS, err);
    if (!b->ec)
        goto fail;
    etcd_conn_count(b->ec, &env->stats->round_trips);
    if (c->sm.keepalive) {
        b->kc = etcd_conn_new(env->servers->conn, ETCD_CALL_TIMEOUT_MS, err);
        if (!b->kc)
            goto fail;
        int rc = pthread_create(&b->ka_thread, NULL, ka_main, c);
        if (rc) {
            lab_err_set(err, rc, "cannot start the keep-alive thread: %s", strerror(rc));
            goto fail;
        }
        b->ka_running = true;
    }
    *out = c;
    return 0;
fail:
    etcd_block_close(c);
    return -1;
}

enum lock_status etcd_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err)
{
    pthread_mutex_lock(&c->bk->mu);
    run(c, etcd_sm_acquire(&c->sm, key, wait_ns, lab_now_ns()));
    if (c->sm.status == LOCK_ERROR)
        *err = c->sm.err;
    return c->sm.status;
}

enum release_status etcd_block_release(struct lock_client *c, const char *key,
                                       struct lab_err *err)
{
    pthread_mutex_lock(&c->bk->mu);
    run(c, etcd_sm_release(&c->sm, key, lab_now_ns()));
    if (c->sm.release == RELEASE_ERROR)
        *err = c->sm.err;
    return c->sm.release;
}

void etcd_block_close(struct lock_client *c)
{
    if (!c)
        return;
    struct etcd_block *b = c->bk;
    if (b->ka_running) { /* the keep-alive stops first, as Session.Close */
        pthread_mutex_lock(&b->mu);
        b->quit = true;
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
        pthread_join(b->ka_thread, NULL);
    }
    if (b->ec) {
        pthread_mutex_lock(&b->mu);
        run(c, etcd_sm_close(&c->sm, lab_now_ns()));
    }
    etcd_sm_free(&c->sm);
    etcd_conn_free(b->kc);
    etcd_conn_free(b->ec);
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
    free(b);
    free(c);
}
