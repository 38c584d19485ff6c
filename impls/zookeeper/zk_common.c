/*
 * zk_common.c - session, calls, watches and holds for the ZooKeeper
 * designs (see zk_common.h; the queue recipe is in zk_queue.c).
 *
 * Threads: the C client runs an I/O thread and a completion thread per
 * session. Watch callbacks run on the completion thread and touch nothing
 * but c->wakes, the notification counter and the condition variable, under
 * c->mu; everything else belongs to the client's own thread. The client
 * threads are created with the termination signals blocked, so SIGUSR1 at
 * the end of a run (and SIGINT/SIGTERM) is taken by the client's thread,
 * whose waits look at env->stop at least every 50 ms.
 *
 * Failures: a connection loss or an operation timeout leaves the session
 * alive, and with it our ephemeral nodes, but the request may or may not
 * have been applied; the callers wait for the connection to come back
 * (within their budget) and find out. A session that expired took our
 * nodes with it: holds created in it are no longer ours, and the next call
 * opens a new session. When a node of ours cannot be deleted because
 * ZooKeeper cannot be reached, the session is closed instead, so that the
 * node cannot outlive us and block every other client.
 *
 * lock.on_disconnect: abort (Curator's tech note 14): the completion
 * thread raises lock_env.lost at the first session event that is not
 * "connected" (the C client's CONNECTING after a lost connection, which
 * Curator calls SUSPENDED; or EXPIRED), so the client leaves its critical
 * section before writing; the release then closes the session.
 */
#include "zk_common.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZK_CONNECT_TIMEOUT_NS (10LL * 1000000000)  /* first connect, at open */
#define ZK_STOP_CHECK_NS (50LL * 1000000)          /* longest wait between looks at env->stop */
#define ZK_DEFAULT_SESSION_MS 10000

/* ---------------------------------------------------------------- setting */

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

/* ---------------------------------------------------------------- events */

/* Every watch and session event of the client's session: count it and wake
 * the client's thread. Runs on the C client's completion thread. */
static void zk_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh, (void)state, (void)path;
    struct lock_client *c = ctx;
    pthread_mutex_lock(&c->mu);
    /* once the run is stopping, waiters give up and delete their nodes, which
     * wakes their successors without any release: not part of the measure */
    if (type != ZOO_SESSION_EVENT && type != ZOO_NOTWATCHING_EVENT && !*c->env->stop)
        c->env->stats->notifications++;
    /* lock.on_disconnect: abort: the session suspended (disconnected, not
     * yet expired) or gone, the lock counts as lost from now */
    if (type == ZOO_SESSION_EVENT && state != ZOO_CONNECTED_STATE &&
        state != ZOO_READONLY_STATE && c->abort_on_disconnect && c->env->lost)
        lab_flag_raise(c->env->lost);
    c->wakes++;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

uint64_t zk_wakes(struct lock_client *c)
{
    pthread_mutex_lock(&c->mu);
    uint64_t w = c->wakes;
    pthread_mutex_unlock(&c->mu);
    return w;
}

int zk_wait(struct lock_client *c, uint64_t seen, int64_t deadline)
{
    pthread_mutex_lock(&c->mu);
    while (c->wakes == seen) {
        int64_t now = lab_now_ns();
        if (now >= deadline || *c->env->stop)
            break;
        int64_t until = deadline - now > ZK_STOP_CHECK_NS ? now + ZK_STOP_CHECK_NS : deadline;
        struct timespec ts = {until / 1000000000, until % 1000000000};
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    int woke = c->wakes != seen;
    pthread_mutex_unlock(&c->mu);
    return woke;
}

/* ---------------------------------------------------------------- errors */

bool zk_transient(int rc)
{
    return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONMOVED;
}

bool zk_session_gone(int rc)
{
    return rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE || rc == ZAUTHFAILED;
}

int zk_fail(struct lab_err *err, int rc, const char *what, const char *path)
{
    lab_err_set(err, rc, "zookeeper %s %s: %s", what, path, zerror(rc));
    return -1;
}

/* ---------------------------------------------------------------- session */

int zk_session_timeout_ms(const struct lock_env *env)
{
    int64_t ms = env->servers->session_timeout_ns / 1000000;
    if (ms <= 0)
        return ZK_DEFAULT_SESSION_MS;
    return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

zhandle_t *zk_handle_init(const struct lock_env *env, watcher_fn watcher, void *ctx,
                          struct lab_err *err)
{
    if (!env->servers->conn[0]) {
        lab_err_set(err, EINVAL, "zookeeper: no ensemble given (lock_env.servers)");
        return NULL;
    }
    /* The client's threads inherit this mask: keep the run's signals for
     * the client's own thread. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGUSR2);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGQUIT);
    sigaddset(&block, SIGALRM);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    errno = 0;
    zhandle_t *zh = zookeeper_init(env->servers->conn, watcher, zk_session_timeout_ms(env), NULL,
                                   ctx, 0);
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* The C client resolves its host list again each time its I/O thread
     * looks at the socket (every request and reply), unless told not to:
     * a getaddrinfo with a netlink dump each time, about a third of a
     * group's CPU at 256 sessions. The lab's hosts are addresses, never
     * names that could move: resolve only when a connection is lost. */
    if (zh)
        zoo_set_servers_resolution_delay(zh, -1);
    if (!zh)
        lab_err_set(err, e ? e : EINVAL, "zookeeper: cannot start a session with %s: %s",
                    env->servers->conn, strerror(e ? e : EINVAL));
    return zh;
}

/* Start a new session (not yet connected). 0 or -1 with err filled. */
static int session_open(struct lock_client *c, struct lab_err *err)
{
    c->zh = zk_handle_init(c->env, zk_watcher, c, err);
    c->session_gen++;
    return c->zh ? 0 : -1;
}

void zk_session_drop(struct lock_client *c)
{
    if (!c->zh)
        return;
    zookeeper_close(c->zh); /* joins the client's threads: no callback runs after this */
    c->zh = NULL;
    c->session_gen++;
    c->parent_key[0] = '\0';
}

int zk_session_ready(struct lock_client *c, int64_t deadline, struct lab_err *err)
{
    for (;;) {
        if (c->zh) {
            int st = zoo_state(c->zh);
            if (st == ZOO_CONNECTED_STATE)
                return 1;
            if (st == ZOO_EXPIRED_SESSION_STATE || st == ZOO_AUTH_FAILED_STATE)
                zk_session_drop(c); /* its nodes are gone: start over */
        }
        if (lab_now_ns() >= deadline || *c->env->stop) {
            lab_err_set(err, ETIMEDOUT, "zookeeper: not connected to %s", c->env->servers->conn);
            return 0;
        }
        if (!c->zh && session_open(c, err) != 0)
            return -1;
        uint64_t seen = zk_wakes(c);
        int st = zoo_state(c->zh);
        if (st != ZOO_CONNECTED_STATE && st != ZOO_EXPIRED_SESSION_STATE &&
            st != ZOO_AUTH_FAILED_STATE)
            zk_wait(c, seen, deadline); /* until a session event, the deadline or stop */
    }
}

int zk_recover(struct lock_client *c, uint64_t gen, int64_t deadline, struct lab_err *err)
{
    int r = zk_session_ready(c, deadline, err);
    if (r <= 0)
        return r;
    if (c->session_gen != gen) {
        lab_err_set(err, ZSESSIONEXPIRED,
                    "zookeeper: the session expired while disconnected; its nodes are gone");
        return -1;
    }
    return 1;
}

/* ---------------------------------------------------------------- calls */

int zk_create(struct lock_client *c, const char *path, int mode, char *out, int outlen,
              struct Stat *stat)
{
    if (!c->zh)
        return ZINVALIDSTATE;
    c->env->stats->round_trips++;
    if (stat) /* create2: the same one request, answered with the node's Stat */
        return zoo_create2(c->zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, mode, out, outlen, stat);
    return zoo_create(c->zh, path, "", 0, &ZOO_OPEN_ACL_UNSAFE, mode, out, outlen);
}

int zk_exists_watch(struct lock_client *c, const char *path, struct Stat *stat)
{
    if (!c->zh)
        return ZINVALIDSTATE;
    struct Stat ignored;
    c->env->stats->round_trips++;
    return zoo_wexists(c->zh, path, zk_watcher, c, stat ? stat : &ignored);
}

int zk_get_watch(struct lock_client *c, const char *path)
{
    if (!c->zh)
        return ZINVALIDSTATE;
    char data[16]; /* the designs' nodes are empty: the data itself is not wanted */
    int len = sizeof data;
    struct Stat st;
    c->env->stats->round_trips++;
    return zoo_wget(c->zh, path, zk_watcher, c, data, &len, &st);
}

int zk_children(struct lock_client *c, const char *path, struct String_vector *names)
{
    if (!c->zh)
        return ZINVALIDSTATE;
    c->env->stats->round_trips++;
    return zoo_get_children(c->zh, path, 0, names);
}

int zk_children_watch(struct lock_client *c, const char *path, struct String_vector *names)
{
    if (!c->zh)
        return ZINVALIDSTATE;
    c->env->stats->round_trips++;
    return zoo_wget_children(c->zh, path, zk_watcher, c, names);
}

int zk_unwatch_children(struct lock_client *c, const char *path)
{
    if (!c->zh)
        return ZINVALIDSTATE;
    int rc = zoo_remove_watches(c->zh, path, ZWATCHTYPE_CHILD, zk_watcher, c, 0);
    if (rc != ZNOWATCHER) /* no watch left to forget: answered locally */
        c->env->stats->round_trips++;
    return rc;
}

int zk_delete(struct lock_client *c, const char *path)
{
    if (!c->zh)
        return ZINVALIDSTATE;
    c->env->stats->round_trips++;
    return zoo_delete(c->zh, path, -1);
}

/* ---------------------------------------------------------------- parent */

/* (zk_common.h) */
int zk_key_check(const char *key, struct lab_err *err)
{
    size_t n = strlen(key);
    if (n == 0 || n >= ZK_KEY_MAX || strchr(key, '/') || strcmp(key, ".") == 0 ||
        strcmp(key, "..") == 0) {
        lab_err_set(err, EINVAL, "zookeeper: lock key '%.60s' is not a valid node name", key);
        return -1;
    }
    return 0;
}

/* The persistent node path, created unless it exists: 1, 0 deadline or
 * stop, -1 with err filled. */
static int ensure_node(struct lock_client *c, const char *path, int64_t deadline,
                       struct lab_err *err)
{
    for (;;) {
        int rc = zk_create(c, path, ZOO_PERSISTENT, NULL, 0, NULL);
        if (rc == ZOK || rc == ZNODEEXISTS)
            return 1;
        if (!zk_transient(rc) && !zk_session_gone(rc))
            return zk_fail(err, rc, "create", path);
        int r = zk_session_ready(c, deadline, err); /* any session will do */
        if (r <= 0)
            return r;
    }
}

int zk_prepare(struct lock_client *c, const char *key, int64_t deadline, struct lab_err *err)
{
    int r = zk_session_ready(c, deadline, err);
    if (r <= 0)
        return r;
    if (c->parent_key[0] && strcmp(c->parent_key, key) == 0)
        return 1;
    if (zk_key_check(key, err) != 0)
        return -1;
    char parent[sizeof c->parent], sub[sizeof c->parent + ZK_KEY_MAX];
    snprintf(parent, sizeof parent, "%s/%s", ZK_ROOT, key);
    if ((r = ensure_node(c, ZK_ROOT, deadline, err)) <= 0 ||
        (r = ensure_node(c, parent, deadline, err)) <= 0)
        return r;
    for (const char *const *d = c->subdirs; d && *d; d++) {
        snprintf(sub, sizeof sub, "%s/%s", parent, *d);
        if ((r = ensure_node(c, sub, deadline, err)) <= 0)
            return r;
    }
    snprintf(c->parent, sizeof c->parent, "%s", parent);
    snprintf(c->parent_key, sizeof c->parent_key, "%s", key);
    return 1;
}

/* ---------------------------------------------------------------- open/close */

int zk_lock_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err)
{
    *out = NULL;
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->env = env;
    const struct zk_options *o = env->options;
    c->abort_on_disconnect = o && o->on_disconnect == ZK_DISCONNECT_ABORT;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    int rc = lab_random_hex(c->id, 16);
    if (rc != 0) {
        lab_err_set(err, -rc, "cannot read random bytes: %s", strerror(-rc));
        zk_lock_close(c);
        return -1;
    }
    zoo_set_debug_level((ZooLogLevel)0); /* failures reach the report through err */
    int r = zk_session_ready(c, lab_now_ns() + ZK_CONNECT_TIMEOUT_NS, err);
    if (r <= 0) {
        if (r == 0)
            lab_err_set(err, ETIMEDOUT, "zookeeper: no session with %s within %lld s",
                        env->servers->conn, ZK_CONNECT_TIMEOUT_NS / 1000000000);
        zk_lock_close(c);
        return -1;
    }
    *out = c;
    return 0;
}

void zk_lock_close(struct lock_client *c)
{
    if (!c)
        return;
    zk_session_drop(c);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* ---------------------------------------------------------------- holds */

static int hold_index(struct lock_client *c, const char *key)
{
    for (int i = c->n_held - 1; i >= 0; i--)
        if (strcmp(c->held[i].key, key) == 0)
            return i;
    return -1;
}

struct zk_hold *zk_hold_find(struct lock_client *c, const char *key)
{
    int i = hold_index(c, key);
    return i < 0 ? NULL : &c->held[i];
}

int zk_hold_push(struct lock_client *c, const char *key, const char *path, int64_t token,
                 struct lab_err *err)
{
    if (c->n_held >= ZK_MAX_HOLDS) {
        lab_err_set(err, ENOSPC, "zookeeper: more than %d locks held at once", ZK_MAX_HOLDS);
        return -1;
    }
    struct zk_hold *h = &c->held[c->n_held++];
    zk_copy(h->key, sizeof h->key, key);
    zk_copy(h->path, sizeof h->path, path);
    h->gen = c->session_gen;
    h->count = 1;
    if (c->env->fencing)
        c->env->stats->fence_token = token;
    return 0;
}

int64_t zk_sequence_of(const char *path)
{
    size_t n = strlen(path);
    if (n < 10)
        return 0;
    int64_t v = 0;
    for (const char *p = path + n - 10; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (*p - '0');
    }
    return v + 1;
}

enum release_status zk_hold_release(struct lock_client *c, const char *key, struct lab_err *err)
{
    int i = hold_index(c, key);
    if (i < 0)
        return RELEASE_NOT_OWNER; /* nothing of ours to delete: never delete blindly */
    struct zk_hold h = c->held[i];
    memmove(&c->held[i], &c->held[i + 1], (size_t)(c->n_held - i - 1) * sizeof c->held[0]);
    c->n_held--;
    if (c->abort_on_disconnect && c->env->lost && __atomic_load_n(c->env->lost, __ATOMIC_SEQ_CST)) {
        /* the lock was given up at the disconnect: close the session, so
         * the node goes with it whether or not the connection is back */
        zk_session_drop(c);
        return RELEASE_NOT_OWNER;
    }
    return zk_delete_ours(c, h.path, h.gen, err);
}

enum release_status zk_delete_ours(struct lock_client *c, const char *path, uint64_t gen,
                                   struct lab_err *err)
{
    if (gen != c->session_gen)
        return RELEASE_NOT_OWNER; /* its session is gone, and the node with it */

    /* Two session timeouts: a server that stalls for most of one must not
     * turn a release into an error while the session still lives; by then
     * the client library has said CONNECTED again or EXPIRED. */
    int64_t deadline = lab_now_ns() + 2 * (int64_t)zk_session_timeout_ms(c->env) * 1000000;
    bool retried = false;
    for (;;) {
        if (retried) {
            /* The delete whose reply was lost may have been applied, and a
             * waiter may since have created a node at the same path (zk-
             * ephemeral's fixed name): delete again only a node that is
             * still our session's, never a path blindly. */
            struct Stat st;
            c->env->stats->round_trips++;
            int e = c->zh ? zoo_exists(c->zh, path, 0, &st) : ZINVALIDSTATE;
            const clientid_t *id = c->zh ? zoo_client_id(c->zh) : NULL;
            if (e == ZNONODE || (e == ZOK && (!id || st.ephemeralOwner != id->client_id)))
                return RELEASE_OK; /* our delete went through */
        }
        int rc = zk_delete(c, path);
        if (rc == ZOK)
            return RELEASE_OK;
        if (rc == ZNONODE) /* after a lost reply: our own delete went through */
            return retried ? RELEASE_OK : RELEASE_NOT_OWNER;
        if (zk_session_gone(rc)) {
            zk_session_drop(c);
            return RELEASE_NOT_OWNER; /* the session expired: the lock went with it */
        }
        if (!zk_transient(rc)) {
            zk_fail(err, rc, "delete", path);
            return RELEASE_ERROR;
        }
        int r = zk_recover(c, gen, deadline, err);
        if (r < 0 && c->session_gen != gen)
            return RELEASE_NOT_OWNER;
        if (r <= 0) {
            zk_fail(err, rc, "delete", path);
            zk_session_drop(c); /* the node must not outlive us */
            return RELEASE_ERROR;
        }
        retried = true;
    }
}
