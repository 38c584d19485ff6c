/*
 * bare_zk_loop.c - the yardstick for locklab's overhead on ZooKeeper.
 *
 * The smallest honest program doing what an uncontended `zk-sequential`
 * acquire and release do per cycle: create an ephemeral-sequential node
 * under a persistent parent, list the parent's children (the lowest node
 * holds; alone, ours is it), delete the node. One session of the
 * multi-threaded C client with the synchronous API, for a fixed time. It
 * links nothing of locklab's harness. `locklab bench` runs it side by side
 * with locklab itself and compares the two cycle rates.
 *
 *   usage: locklab-bare-zk HOSTS SECONDS      (HOSTS: "127.0.0.1:2181[,...]")
 *   prints: cycles=N elapsed_ns=E
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zookeeper/zookeeper.h>

#define SESSION_TIMEOUT_MS 10000
#define CONNECT_TIMEOUT_NS (10LL * 1000000000)

static const char root[] = "/locklab";
static const char parent[] = "/locklab/locklab-bare";

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int connected; /* set by the watcher, under mu */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Session events only: note when the session is connected. */
static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh, (void)path, (void)ctx;
    if (type != ZOO_SESSION_EVENT)
        return;
    pthread_mutex_lock(&mu);
    connected = state == ZOO_CONNECTED_STATE;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static int wait_connected(void)
{
    long long deadline = now_ns() + CONNECT_TIMEOUT_NS;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* the default condvar clock */
    ts.tv_sec += CONNECT_TIMEOUT_NS / 1000000000LL;
    pthread_mutex_lock(&mu);
    while (!connected && now_ns() < deadline)
        pthread_cond_timedwait(&cv, &mu, &ts);
    int ok = connected;
    pthread_mutex_unlock(&mu);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s HOSTS SECONDS\n", argv[0]);
        return 2;
    }
    double seconds = atof(argv[2]);
    zoo_set_debug_level((ZooLogLevel)0);
    zhandle_t *zh = zookeeper_init(argv[1], watcher, SESSION_TIMEOUT_MS, NULL, NULL, 0);
    if (zh) /* no routine getaddrinfo per socket check: as the lab's clients (zk_common.c) */
        zoo_set_servers_resolution_delay(zh, -1);
    if (!zh || !wait_connected()) {
        fprintf(stderr, "bare loop: no ZooKeeper session with %s\n", argv[1]);
        if (zh)
            zookeeper_close(zh);
        return 3;
    }
    const char *parents[] = {root, parent};
    for (int i = 0; i < 2; i++) {
        int rc = zoo_create(zh, parents[i], "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
        if (rc != ZOK && rc != ZNODEEXISTS) {
            fprintf(stderr, "bare loop: create %s: %s\n", parents[i], zerror(rc));
            zookeeper_close(zh);
            return 3;
        }
    }
    char prefix[sizeof parent + 16], mine[256];
    snprintf(prefix, sizeof prefix, "%s/lock-", parent);

    long long cycles = 0, start = now_ns(), end = start + (long long)(seconds * 1e9), t = start;
    int status = 0;
    while (t < end) {
        int rc = zoo_create(zh, prefix, "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL,
                            mine, sizeof mine);
        if (rc != ZOK) {
            fprintf(stderr, "bare loop: create: %s\n", zerror(rc));
            status = 1;
            break;
        }
        struct String_vector children = {0, NULL};
        rc = zoo_get_children(zh, parent, 0, &children);
        if (rc != ZOK) {
            fprintf(stderr, "bare loop: get children: %s\n", zerror(rc));
            status = 1;
            break;
        }
        deallocate_String_vector(&children);
        rc = zoo_delete(zh, mine, -1);
        if (rc != ZOK) {
            fprintf(stderr, "bare loop: delete %s: %s\n", mine, zerror(rc));
            status = 1;
            break;
        }
        cycles++;
        t = now_ns();
    }
    if (status == 0)
        printf("cycles=%lld elapsed_ns=%lld\n", cycles, t - start);
    zookeeper_close(zh);
    return status;
}
