/*
 * zk_drive_block.c - the per-process driver of the ZooKeeper state
 * machine (zk_drive.h): the machine's acts on one session of the
 * multi-threaded C client (zookeeper_mt).
 *
 * SEND is one synchronous call (counted as a round trip; a watch it sets
 * signals the client's condition variable), SESSION opens a session when
 * there is none and waits for its state, WAIT waits on the condition
 * variable for an event counted since the last SEND, with the machine's
 * deadline and a look at env->stop every 50 ms. m->drop closes the
 * session (zookeeper_close joins the client's threads).
 *
 * Threads: the C client runs an I/O and a completion thread per session.
 * Watch callbacks run on the completion thread and touch nothing but the
 * event counter and the condition variable, under the mutex (and
 * lock_env.lost); everything else belongs to the client's own thread. The
 * client threads start with the run's signals blocked, so SIGUSR1 at the
 * end of a run is taken by the client's thread.
 *
 * lock.on_disconnect: abort (Curator's tech note 14): the completion
 * thread raises lock_env.lost at the first session event that is not
 * "connected" (the C client's CONNECTING after a lost connection, which
 * Curator calls SUSPENDED; or EXPIRED), so the client leaves its critical
 * section before writing; the release then closes the session.
 */
#include "zk_drive.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#define STOP_CHECK_NS (50LL * 1000000) /* longest wait between looks at env->stop */

struct zk_block {
    zhandle_t *zh;       /* the session; NULL when none */
    pthread_mutex_t mu;  /* guards what the completion thread writes: */
    pthread_cond_t cv;   /*   broadcast on every watch or session event */
    uint64_t wakes;      /*   events received */
    uint64_t seen;       /* wakes at the last SEND */
};

/* ------------------------------------------------------------ the setting */

static const char *const on_disconnect_words[] = {"ignore", "abort", NULL}; /* index = value */

const struct opt zk_option_rows[] = {
    { .name = "on_disconnect", .type = OPT_CHOICE, OPT_FIELD(struct zk_options, on_disconnect),
      .choices = on_disconnect_words, .def = "ignore",
      .help = "ZooKeeper designs: abort treats a lost connection as a lost lock (Curator TN14): "
              "the holder leaves before its write" },
    { .name = NULL }
};

int zk_finish_options(void *options, const struct lock_opts_ctx *ctx, struct lab_err *err)
{
    const struct zk_options *o = options;
    if (ctx->listed && ctx->clients_per_process > 1 && o->on_disconnect == ZK_DISCONNECT_ABORT) {
        lab_err_set(err, EINVAL, "lock.on_disconnect: abort cannot run in client groups; use "
                    "run.clients_per_process 1");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ events */

/* Every watch and session event of the session: count it and wake the
 * client's thread. Runs on the C client's completion thread. */
static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh, (void)path;
    struct lock_client *c = ctx;
    struct zk_block *b = c->bk;
    pthread_mutex_lock(&b->mu);
    /* once the run is stopping, waiters give up and delete their nodes, which
     * wakes their successors without any release: not part of the measure */
    if (type != ZOO_SESSION_EVENT && type != ZOO_NOTWATCHING_EVENT && !*c->env->stop)
        c->env->stats->notifications++;
    if (type == ZOO_SESSION_EVENT && state != ZOO_CONNECTED_STATE &&
        state != ZOO_READONLY_STATE && c->sm.abort_on_disconnect && c->env->lost)
        lab_flag_raise(c->env->lost);
    b->wakes++;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

static uint64_t wakes(struct zk_block *b)
{
    pthread_mutex_lock(&b->mu);
    uint64_t w = b->wakes;
    pthread_mutex_unlock(&b->mu);
    return w;
}

/* Until an event after `seen`, the deadline or the stop: 1 woke, 0 not. */
static int wait_event(struct lock_client *c, uint64_t seen, int64_t deadline)
{
    struct zk_block *b = c->bk;
    pthread_mutex_lock(&b->mu);
    while (b->wakes == seen) {
        int64_t now = lab_now_ns();
        if (now >= deadline || *c->env->stop)
            break;
        int64_t until = deadline - now > STOP_CHECK_NS ? now + STOP_CHECK_NS : deadline;
        struct timespec ts = {until / 1000000000, until % 1000000000};
        pthread_cond_timedwait(&b->cv, &b->mu, &ts);
    }
    int woke = b->wakes != seen;
    pthread_mutex_unlock(&b->mu);
    return woke;
}

/* ------------------------------------------------------------ the session */

/* zookeeper_init with env's ensemble and session timeout, the client's
 * threads started with the run's signals blocked. NULL with err. */
static zhandle_t *handle_init(struct lock_client *c, struct lab_err *err)
{
    const struct lock_env *env = c->env;
    if (!env->servers->conn[0]) {
        lab_err_set(err, EINVAL, "zookeeper: no ensemble given (lock_env.servers)");
        return NULL;
    }
    sigset_t block, old;
    sigemptyset(&block);
    int sigs[] = {SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP, SIGQUIT, SIGALRM, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&block, sigs[i]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    errno = 0;
    zhandle_t *zh = zookeeper_init(env->servers->conn, watcher, zk_sm_session_ms(env), NULL, c, 0);
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* The C client resolves its host list again on every request unless
     * told not to; the lab's hosts are addresses: only after a loss. */
    if (zh)
        zoo_set_servers_resolution_delay(zh, -1);
    else
        lab_err_set(err, e ? e : EINVAL, "zookeeper: cannot start a session with %s: %s",
                    env->servers->conn, strerror(e ? e : EINVAL));
    return zh;
}

static void session_close(struct zk_block *b)
{
    if (b->zh)
        zookeeper_close(b->zh); /* joins the client's threads: no callback after this */
    b->zh = NULL;
}

/* SESSION: a connected session, opened when there is none. */
static enum zk_sm_act session(struct lock_client *c)
{
    struct zk_block *b = c->bk;
    struct zk_sm *m = &c->sm;
    for (;;) {
        int st = b->zh ? zoo_state(b->zh) : 0;
        if (st == ZOO_CONNECTED_STATE)
            return zk_sm_session(m, ZK_SM_CONNECTED, zoo_client_id(b->zh)->client_id, NULL,
                                 lab_now_ns());
        if (st == ZOO_EXPIRED_SESSION_STATE || st == ZOO_AUTH_FAILED_STATE)
            return zk_sm_session(m, ZK_SM_EXPIRED, 0, NULL, lab_now_ns());
        if (lab_now_ns() >= m->deadline || *c->env->stop)
            return zk_sm_session(m, ZK_SM_NOT_YET, 0, NULL, lab_now_ns());
        struct lab_err err = {0};
        if (!b->zh && !(b->zh = handle_init(c, &err)))
            return zk_sm_session(m, ZK_SM_FAILED, 0, &err, lab_now_ns());
        uint64_t seen = wakes(b);
        st = zoo_state(b->zh);
        if (st != ZOO_CONNECTED_STATE && st != ZOO_EXPIRED_SESSION_STATE &&
            st != ZOO_AUTH_FAILED_STATE)
            wait_event(c, seen, m->deadline);
    }
}

/* ------------------------------------------------------------ requests */

/* SEND: the request as one synchronous call; its reply fed back. */
static enum zk_sm_act request(struct lock_client *c)
{
    struct zk_block *b = c->bk;
    struct zk_sm *m = &c->sm;
    struct zk_sm_reply r = {.rc = ZINVALIDSTATE, .path = ""};
    struct String_vector sv = {0, NULL};
    struct Stat st = {0};
    char out[ZK_PATH_MAX], data[16];
    int len = sizeof data;
    b->seen = wakes(b);
    if (b->zh) {
        c->env->stats->round_trips++;
        switch (m->req) {
        case ZK_REQ_CREATE:
            r.rc = zoo_create(b->zh, m->path, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
            break;
        case ZK_REQ_CREATE_SEQ:
            r.rc = zoo_create(b->zh, m->path, "", 0, &ZOO_OPEN_ACL_UNSAFE,
                              ZOO_EPHEMERAL_SEQUENTIAL, out, sizeof out);
            r.path = out;
            break;
        case ZK_REQ_CREATE_EPH:
            r.rc = m->want_stat ? zoo_create2(b->zh, m->path, "", 0, &ZOO_OPEN_ACL_UNSAFE,
                                              ZOO_EPHEMERAL, NULL, 0, &st)
                                : zoo_create(b->zh, m->path, "", 0, &ZOO_OPEN_ACL_UNSAFE,
                                             ZOO_EPHEMERAL, NULL, 0);
            break;
        case ZK_REQ_CHILDREN:
            r.rc = zoo_get_children(b->zh, m->path, 0, &sv);
            break;
        case ZK_REQ_CHILDREN_WATCH:
            r.rc = zoo_wget_children(b->zh, m->path, watcher, c, &sv);
            break;
        case ZK_REQ_GET_WATCH: /* the nodes are empty: the data itself is not wanted */
            r.rc = zoo_wget(b->zh, m->path, watcher, c, data, &len, &st);
            break;
        case ZK_REQ_EXISTS_WATCH:
            r.rc = zoo_wexists(b->zh, m->path, watcher, c, &st);
            break;
        case ZK_REQ_EXISTS:
            r.rc = zoo_exists(b->zh, m->path, 0, &st);
            break;
        case ZK_REQ_DELETE:
            r.rc = zoo_delete(b->zh, m->path, -1);
            break;
        case ZK_REQ_UNWATCH_CHILDREN:
            r.rc = zoo_remove_watches(b->zh, m->path, ZWATCHTYPE_CHILD, watcher, c, 0);
            if (r.rc == ZNOWATCHER) /* fired already: forgotten locally, no round trip */
                c->env->stats->round_trips--;
            break;
        }
    }
    r.czxid = st.czxid;
    r.owner = st.ephemeralOwner;
    r.n = sv.count;
    r.names = sv.data;
    enum zk_sm_act act = zk_sm_reply(m, &r, lab_now_ns());
    deallocate_String_vector(&sv);
    return act;
}

/* Do the machine's acts until it is done. */
static void run(struct lock_client *c, enum zk_sm_act act)
{
    struct zk_sm *m = &c->sm;
    for (;;) {
        if (m->drop) {
            session_close(c->bk);
            m->drop = false;
        }
        switch (act) {
        case ZK_SM_SEND:
            act = request(c);
            break;
        case ZK_SM_SESSION:
            act = session(c);
            break;
        case ZK_SM_WAIT:
            act = wait_event(c, c->bk->seen, m->deadline) ? zk_sm_event(m, lab_now_ns())
                                                           : zk_sm_timer(m, lab_now_ns());
            break;
        case ZK_SM_DONE:
        case ZK_SM_IGNORED:
            return;
        }
    }
}

/* ------------------------------------------------------------ hooks */

int zk_block_open(struct lock_client **out, const struct lock_env *env,
                  const struct zk_sm_design *d, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    struct zk_block *b = calloc(1, sizeof *b);
    char id[33];
    int rc = c && b ? lab_random_hex(id, 16) : -ENOMEM;
    if (rc != 0) {
        lab_err_set(err, -rc, "cannot open a client: %s", strerror(-rc));
        free(c);
        free(b);
        return -1;
    }
    c->env = env;
    c->bk = b;
    zk_sm_init(&c->sm, d, env, id);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, &ca);
    pthread_condattr_destroy(&ca);
    zoo_set_debug_level((ZooLogLevel)0); /* failures reach the report through err */
    run(c, zk_sm_open(&c->sm, lab_now_ns()));
    if (c->sm.open_rc != 0) {
        *err = c->sm.err;
        zk_block_close(c);
        return -1;
    }
    *out = c;
    return 0;
}

enum lock_status zk_block_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                  struct lab_err *err)
{
    run(c, zk_sm_acquire(&c->sm, key, wait_ns, lab_now_ns()));
    if (c->sm.status != LOCK_GRANTED)
        *err = c->sm.err;
    return c->sm.status;
}

enum release_status zk_block_release(struct lock_client *c, const char *key,
                                     struct lab_err *err)
{
    run(c, zk_sm_release(&c->sm, key, lab_now_ns()));
    if (c->sm.release == RELEASE_ERROR)
        *err = c->sm.err;
    return c->sm.release;
}

void zk_block_close(struct lock_client *c)
{
    if (!c)
        return;
    session_close(c->bk);
    pthread_cond_destroy(&c->bk->cv);
    pthread_mutex_destroy(&c->bk->mu);
    free(c->bk);
    free(c);
}
