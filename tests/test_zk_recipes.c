/*
 * test_zk_recipes.c - the ZooKeeper recipes on a real embedded ZooKeeper,
 * node by node and watch by watch.
 *
 * zk-sequential's waiter watches its predecessor with getData, as Curator
 * does, so that a predecessor gone between the listing and the watch leaves
 * no watch behind (an exists on a missing node sets one that never fires).
 * That race is made certain here by wrapping zoo_get_children (the link
 * uses -Wl,--wrap): once armed, the wrapper deletes the predecessor right
 * after the waiter's listing. The server's zk_watch_count (mntr) tells.
 *
 * Regression test for issue 8: before it, zk-sequential watched with exists.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "check.h"
#include "lock.h"
#include "servers.h"

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
    struct lock_stats stats;
    struct lock_client *c;
    const struct lock_ops *ops;
    struct lab_err err;
};

static int tc_open(struct tclient *t, const char *impl, const char *name, const char *hosts)
{
    memset(t, 0, sizeof *t);
    t->name = name;
    t->ops = lock_find(impl);
    t->env.zk_hosts = hosts;
    t->env.zk_session_timeout_ns = 10 * SEC;
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
    if (servers_zk_start(srv, 1, 0, hosts, sizeof hosts, &err) != 0) {
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
        test_sequential_watch(hosts);
    }
    if (admin)
        zookeeper_close(admin);
    servers_stop_all();
    return check_done();
}
