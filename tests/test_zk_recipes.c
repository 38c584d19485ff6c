/*
 * test_zk_recipes.c - the ZooKeeper recipes on a real embedded ZooKeeper,
 * node by node and watch by watch.
 *
 * zk-semaphore is Curator's InterProcessSemaphoreMutex, that is
 * InterProcessSemaphoreV2 with one lease: an internal mutex queue under
 * /locklab/<key>/locks, lease nodes under /locklab/<key>/leases. The test
 * looks at those nodes while clients hold, wait and give up: the holder
 * keeps one lease and no lock node; the next waiter holds the internal lock
 * and watches leases/; the one after queues under locks/; a nested acquire
 * by the holder waits on its own lease and times out, cleaning up behind
 * it; each waiter gets exactly the watch events the recipe implies: a
 * granted waiter takes its leases/ watch back (Curator's removeWatchers),
 * so the next client's lease does not wake it.
 *
 * zk-sequential's waiter watches its predecessor with getData, as Curator
 * does, so that a predecessor gone between the listing and the watch leaves
 * no watch behind (an exists on a missing node sets one that never fires).
 * That race is made certain here by wrapping zoo_get_children (the link
 * uses -Wl,--wrap): once armed, the wrapper deletes the predecessor right
 * after the waiter's listing. The server's zk_watch_count (mntr) tells.
 *
 * Regression tests for issue 8: before it, zk-semaphore was zk-sequential's
 * queue without the hold count, and zk-sequential watched with exists.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "check.h"
#include "lock.h"
#include "servers_zk.h"

#define SEC 1000000000LL

static zhandle_t *admin;            /* a plain session to look at the nodes */
static volatile int no_stop;        /* the clients' stop flag: never set */
static int zk_port;                 /* the embedded server's client port */

/* ---------------------------------------------------------------- wrapper */

int __real_zoo_get_children(zhandle_t *zh, const char *path, int watch,
                            struct String_vector *strings);

static char armed_dir[256];   /* "" or the listing after which to delete armed_victim */
static char armed_victim[1024];

/* The real listing, then (once, when armed for this path) the predecessor
 * goes: the waiter's next call finds it gone. */
int __wrap_zoo_get_children(zhandle_t *zh, const char *path, int watch,
                            struct String_vector *strings)
{
    int rc = __real_zoo_get_children(zh, path, watch, strings);
    if (rc == ZOK && armed_dir[0] && zh != admin && strcmp(path, armed_dir) == 0) {
        armed_dir[0] = '\0';
        CHECK(zoo_delete(admin, armed_victim, -1) == ZOK, "could not delete %s", armed_victim);
    }
    return rc;
}

/* ---------------------------------------------------------------- helpers */

static void silent(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh, (void)type, (void)state, (void)path, (void)ctx;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Children of path: their count (-1 when path is missing), the names
 * joined by ',' in sorted order into out when out is given. */
static int kids(const char *path, char *out, size_t n)
{
    struct String_vector sv = {0, NULL};
    if (__real_zoo_get_children(admin, path, 0, &sv) != ZOK)
        return -1;
    int count = sv.count;
    if (out) {
        qsort(sv.data, (size_t)sv.count, sizeof sv.data[0], by_name);
        out[0] = '\0';
        for (int i = 0; i < sv.count; i++)
            snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? "," : "", sv.data[i]);
    }
    deallocate_String_vector(&sv);
    return count;
}

/* Watches the server holds now (mntr's zk_watch_count), -1 when unknown. */
static long watch_count(void)
{
    char buf[8192];
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)zk_port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    size_t got = 0;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 && write(fd, "mntr", 4) == 4) {
        ssize_t r;
        while (got + 1 < sizeof buf && (r = read(fd, buf + got, sizeof buf - 1 - got)) > 0)
            got += (size_t)r;
    }
    buf[got] = '\0';
    close(fd);
    const char *line = strstr(buf, "zk_watch_count");
    return line ? strtol(line + strlen("zk_watch_count"), NULL, 10) : -1;
}

/* Poll until locks/ and leases/ of key have these many children (10 s at
 * most): the state a client's acquire is expected to reach. */
static int reaches(const char *key, int locks, int leases)
{
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/%s/locks", LOCK_ZK_ROOT, key);
    snprintf(b, sizeof b, "%s/%s/leases", LOCK_ZK_ROOT, key);
    for (int64_t end = lab_now_ns() + 10 * SEC; lab_now_ns() < end;) {
        if (kids(a, NULL, 0) == locks && kids(b, NULL, 0) == leases)
            return 1;
        lab_sleep_ns(5 * 1000000, NULL);
    }
    return 0;
}

/* Poll until the server holds n watches (10 s at most): the waiters have
 * set theirs, so a release now must wake them through their watch. */
static int watches_reach(long n)
{
    for (int64_t end = lab_now_ns() + 10 * SEC; lab_now_ns() < end;) {
        if (watch_count() == n)
            return 1;
        lab_sleep_ns(5 * 1000000, NULL);
    }
    return 0;
}

/* One lock client with its own session and counters. */
struct tclient {
    const char *name;
    struct lock_env env;
    struct lock_servers servers;
    struct lock_stats stats;
    struct lock_client *c;
    const struct lock_ops *ops;
    const char *key;            /* for the acquire thread */
    enum lock_status got;       /* what the acquire thread's acquire returned */
    pthread_t th;
    struct lab_err err;
};

static int tc_open(struct tclient *t, const char *impl, const char *name, const char *hosts)
{
    memset(t, 0, sizeof *t);
    t->name = name;
    t->ops = lock_find(impl);
    snprintf(t->servers.conn, sizeof t->servers.conn, "%s", hosts);
    t->servers.n = 1;
    t->env.servers = &t->servers;
    t->servers.session_timeout_ns = 10 * SEC;
    t->env.stop = &no_stop;
    t->env.stats = &t->stats;
    int rc = t->ops ? t->ops->open(&t->c, &t->env, &t->err) : -1;
    CHECK(rc == 0, "%s: open %s: %s", name, impl, t->err.msg);
    return rc;
}

static enum lock_status tc_acquire(struct tclient *t, const char *key, int64_t wait_ns)
{
    return t->ops->acquire(t->c, key, wait_ns, &t->err);
}

static void *acquire_thread(void *arg)
{
    struct tclient *t = arg;
    t->got = tc_acquire(t, t->key, 10 * SEC);
    return NULL;
}

static void tc_start(struct tclient *t, const char *key)
{
    t->key = key;
    t->got = LOCK_ERROR;
    pthread_create(&t->th, NULL, acquire_thread, t);
}

/* ---------------------------------------------------------------- semaphore */

static void test_semaphore(const char *hosts)
{
    struct tclient a, b, c;
    char names[600];
    if (tc_open(&a, "zk-semaphore", "A", hosts) || tc_open(&b, "zk-semaphore", "B", hosts) ||
        tc_open(&c, "zk-semaphore", "C", hosts))
        return;

    CHECK(tc_acquire(&a, "sem", 5 * SEC) == LOCK_GRANTED, "A acquire: %s", a.err.msg);
    CHECK(kids(LOCK_ZK_ROOT "/sem", names, sizeof names) == 2 && strcmp(names, "leases,locks") == 0,
          "/locklab/sem holds '%s', expected the recipe's leases and locks", names);
    CHECK(kids(LOCK_ZK_ROOT "/sem/leases", names, sizeof names) == 1 &&
              strncmp(names, "lease-", 6) == 0,
          "the holder's lease: leases/ holds '%s'", names);
    CHECK(kids(LOCK_ZK_ROOT "/sem/locks", NULL, 0) == 0,
          "the internal lock is released once the lease is taken");

    /* not reentrant: the holder's nested acquire waits on its own lease */
    int64_t t0 = lab_now_ns();
    CHECK(tc_acquire(&a, "sem", 300 * 1000000LL) == LOCK_TIMEOUT, "A nested acquire: %s",
          a.err.msg);
    CHECK(lab_now_ns() - t0 >= 300 * 1000000LL, "the nested acquire waited its whole budget");
    CHECK(reaches("sem", 0, 1), "the nested acquire left its nodes behind");

    /* B takes the internal lock and waits on leases/; C queues under locks/ */
    tc_start(&b, "sem");
    CHECK(reaches("sem", 1, 2), "B should hold the internal lock and a lease node");
    tc_start(&c, "sem");
    CHECK(reaches("sem", 2, 2), "C should queue on the internal lock");
    CHECK(watches_reach(2), "B should watch leases/ and C B's lock node: %ld watches",
          watch_count());
    CHECK(b.stats.notifications == 0 && c.stats.notifications == 0,
          "no watch event before any release (B %lld, C %lld)",
          (long long)b.stats.notifications, (long long)c.stats.notifications);

    CHECK(a.ops->release(a.c, "sem", &a.err) == RELEASE_OK, "A release: %s", a.err.msg);
    pthread_join(b.th, NULL);
    CHECK(b.got == LOCK_GRANTED, "B acquire after A's release: %s", b.err.msg);
    /* C now holds the internal lock, has its lease, and waits on leases/ */
    CHECK(reaches("sem", 1, 2), "C should take the internal lock after B");
    CHECK(watches_reach(1), "C should watch leases/: %ld watches", watch_count());

    CHECK(b.ops->release(b.c, "sem", &b.err) == RELEASE_OK, "B release: %s", b.err.msg);
    pthread_join(c.th, NULL);
    CHECK(c.got == LOCK_GRANTED, "C acquire after B's release: %s", c.err.msg);
    CHECK(b.stats.notifications == 1,
          "B was woken once (A's lease went), not again by C's lease: %lld",
          (long long)b.stats.notifications);
    CHECK(c.stats.notifications == 2,
          "C was woken twice (B's lock node, then B's lease): %lld",
          (long long)c.stats.notifications);
    CHECK(reaches("sem", 0, 1), "C holds its lease only");
    CHECK(c.ops->release(c.c, "sem", &c.err) == RELEASE_OK, "C release: %s", c.err.msg);
    CHECK(reaches("sem", 0, 0), "every node gone after the last release");
    CHECK(a.ops->release(a.c, "sem", &a.err) == RELEASE_NOT_OWNER,
          "a second release is not the owner's");

    a.ops->close(a.c);
    b.ops->close(b.c);
    c.ops->close(c.c);
}

/* ---------------------------------------------------------------- sequential */

static void test_sequential_watch(const char *hosts)
{
    struct tclient d, e;
    char names[600];
    if (tc_open(&d, "zk-sequential", "D", hosts) || tc_open(&e, "zk-sequential", "E", hosts))
        return;
    CHECK(tc_acquire(&d, "seq", 5 * SEC) == LOCK_GRANTED, "D acquire: %s", d.err.msg);
    CHECK(kids(LOCK_ZK_ROOT "/seq", names, sizeof names) == 1, "D's node: '%s'", names);
    snprintf(armed_victim, sizeof armed_victim, "%s/seq/%s", LOCK_ZK_ROOT, names);
    snprintf(armed_dir, sizeof armed_dir, "%s/seq", LOCK_ZK_ROOT);
    /* the closed sessions of the test before took their watches with them */
    watches_reach(0);
    long before = watch_count();

    /* E lists, sees D's node, and D's node is gone before E watches it */
    CHECK(tc_acquire(&e, "seq", 5 * SEC) == LOCK_GRANTED, "E acquire: %s", e.err.msg);
    CHECK(armed_dir[0] == '\0', "the wrapper did not see E's listing");
    CHECK(before == 0, "%ld watches before E's acquire", before);
    CHECK(watch_count() == 0,
          "E's watch on its vanished predecessor stays on the server (%ld watches): "
          "an exists-watch on a missing node",
          watch_count());
    CHECK(e.stats.notifications == 0, "E was never woken: %lld",
          (long long)e.stats.notifications);
    CHECK(e.ops->release(e.c, "seq", &e.err) == RELEASE_OK, "E release: %s", e.err.msg);
    CHECK(d.ops->release(d.c, "seq", &d.err) == RELEASE_NOT_OWNER,
          "D's node was deleted under it: not the owner");
    d.ops->close(d.c);
    e.ops->close(e.c);
}

int main(void)
{
    struct server srv[1];
    char hosts[256];
    struct lab_err err = {0};
    if (servers_zk_start(srv, 1, 0, NULL, hosts, sizeof hosts, &err) != 0) {
        CHECK(0, "zk start: %s", err.msg);
        return check_done();
    }
    zk_port = srv[0].port;
    zoo_set_debug_level((ZooLogLevel)0);
    admin = zookeeper_init(hosts, silent, 10000, NULL, NULL, 0);
    for (int64_t end = lab_now_ns() + 10 * SEC;
         admin && zoo_state(admin) != ZOO_CONNECTED_STATE && lab_now_ns() < end;)
        lab_sleep_ns(5 * 1000000, NULL);
    CHECK(admin && zoo_state(admin) == ZOO_CONNECTED_STATE, "admin session with %s", hosts);
    if (admin && zoo_state(admin) == ZOO_CONNECTED_STATE) {
        test_semaphore(hosts);
        test_sequential_watch(hosts);
    }
    if (admin)
        zookeeper_close(admin);
    servers_stop_all();
    return check_done();
}
