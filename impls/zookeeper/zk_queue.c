/*
 * zk_queue.c - the sequential queue recipe of the ZooKeeper designs (see
 * zk_common.h): zk-sequential's lock, and the internal mutex zk-semaphore
 * takes under locks/ before it takes a lease.
 *
 * Each waiter creates an ephemeral-sequential node named after its client
 * id and attempt ("lock-<id>-<n>-<sequence>") and lists its siblings: the
 * lowest sequence holds. Any other waiter reads its predecessor (the next
 * lower node) with a watch and lists again when the watch fires. It reads
 * with getData, not exists, as Curator does since exists on a node already
 * gone would leave a watch that nothing ever fires (a sequential name is
 * never created again): getData answers ZNONODE and sets nothing, and the
 * waiter lists again at once. A release thus wakes exactly one waiter.
 *
 * The unique name is what survives a connection loss: a create whose reply
 * was lost may or may not have been applied, so once the same session is
 * back the waiter lists the directory and takes the node carrying its name
 * if it is there (Curator's protected mode). A waiter that gives up, or
 * that cannot tell what became of its node, deletes it or closes its
 * session, so that no node outlives the attempt and blocks everyone.
 */
#include "zk_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define ZK_SEQ_DIGITS 10        /* ZooKeeper's sequence suffix: %010d */
#define ZK_QUEUE_PREFIX "lock-" /* names of the queue's nodes */

/* Sequence number of a node of the recipe ("lock-...-0000000042"), or -1
 * for a name that is not one. */
static long queue_seq(const char *name)
{
    size_t n = strlen(name), p = sizeof ZK_QUEUE_PREFIX - 1;
    if (n < p + ZK_SEQ_DIGITS + 1 || strncmp(name, ZK_QUEUE_PREFIX, p) != 0 ||
        name[n - ZK_SEQ_DIGITS - 1] != '-')
        return -1;
    long v = 0;
    for (const char *s = name + n - ZK_SEQ_DIGITS; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

/* (zk_common.h) */
int zk_queue_position(const struct String_vector *sv, const char *mine, char *pred,
                      size_t predlen)
{
    long my = queue_seq(mine), best = -1;
    const char *best_name = NULL;
    bool found = false;
    for (int i = 0; i < sv->count; i++) {
        const char *name = sv->data[i];
        if (strcmp(name, mine) == 0) {
            found = true;
            continue;
        }
        long s = queue_seq(name);
        if (s >= 0 && s < my && s > best) {
            best = s;
            best_name = name;
        }
    }
    if (!found || my < 0)
        return -1;
    if (!best_name)
        return 1;
    snprintf(pred, predlen, "%s", best_name);
    return 0;
}

/* The directory our nodes go in: c->parent, or its subdirectory sub. */
static void queue_dir(const struct lock_client *c, const char *sub, char *dir, size_t len)
{
    snprintf(dir, len, "%s%s%s", c->parent, sub ? "/" : "", sub ? sub : "");
}

/* Look for a child of dir whose name starts with `name` (our create whose
 * reply was lost). 1 found (mine set), 0 not there, or a ZooKeeper code < 0
 * when the listing failed. */
static int queue_find(struct lock_client *c, const char *dir, const char *name, char *mine,
                      size_t len)
{
    struct String_vector sv = {0, NULL};
    int rc = zk_children(c, dir, &sv);
    if (rc != ZOK)
        return rc < 0 ? rc : ZSYSTEMERROR;
    int found = 0;
    for (int i = 0; i < sv.count && !found; i++)
        if (strncmp(sv.data[i], name, strlen(name)) == 0) {
            int n = snprintf(mine, len, "%s/%s", dir, sv.data[i]);
            found = n > 0 && (size_t)n < len;
        }
    deallocate_String_vector(&sv);
    return found;
}

int zk_enter(struct lock_client *c, const char *key, const char *sub, const char *name,
             char *mine, size_t len, int64_t deadline, struct lab_err *err)
{
    char dir[ZK_PATH_MAX], want[ZK_PATH_MAX + 96];
    bool unknown = false; /* a create whose outcome we do not know, in this session */
    for (bool first = true;; first = false) {
        if (!first && (lab_now_ns() >= deadline || *c->env->stop)) {
            if (unknown)
                zk_session_drop(c); /* it may exist: it must not outlive the attempt */
            return 0;
        }
        int r = zk_prepare(c, key, deadline, err);
        if (r <= 0) {
            if (unknown)
                zk_session_drop(c);
            return r;
        }
        queue_dir(c, sub, dir, sizeof dir);
        snprintf(want, sizeof want, "%s/%s", dir, name);
        uint64_t gen = c->session_gen;
        int rc = ZSYSTEMERROR;
        if (unknown) {
            rc = queue_find(c, dir, name, mine, len);
            if (rc == 1)
                return 1;
            if (rc == 0)
                unknown = false; /* it never happened: create again */
        }
        if (!unknown) {
            rc = zk_create(c, want, ZOO_EPHEMERAL_SEQUENTIAL, mine, (int)len, NULL);
            if (rc == ZOK)
                return 1;
            if (rc == ZNONODE) { /* someone removed the parent: make it again */
                c->parent_key[0] = '\0';
                continue;
            }
            if (zk_transient(rc))
                unknown = true;
        }
        if (!zk_transient(rc) && !zk_session_gone(rc))
            return zk_fail(err, rc, "create", want);
        r = zk_session_ready(c, deadline, err);
        if (r < 0) {
            zk_session_drop(c);
            return -1;
        }
        if (c->session_gen != gen)
            unknown = false; /* whatever it created went with the old session */
    }
}

void zk_leave(struct lock_client *c, const char *path, uint64_t gen)
{
    if (c->session_gen != gen)
        return;
    int rc = zk_delete(c, path);
    if (rc != ZOK && rc != ZNONODE)
        zk_session_drop(c);
}

int zk_queue_lock(struct lock_client *c, const char *key, const char *sub, char *mine,
                  size_t len, int64_t deadline, struct lab_err *err)
{
    char name[96], dir[ZK_PATH_MAX], pred[ZK_PATH_MAX], predpath[ZK_PATH_MAX + ZK_PATH_MAX];
    snprintf(name, sizeof name, ZK_QUEUE_PREFIX "%s-%llu-", c->id,
             (unsigned long long)++c->creates);
    int r = zk_enter(c, key, sub, name, mine, len, deadline, err);
    if (r <= 0)
        return r;
    uint64_t gen = c->session_gen;
    queue_dir(c, sub, dir, sizeof dir);
    const char *base = mine + strlen(dir) + 1;

    for (;;) {
        struct String_vector sv = {0, NULL};
        int rc = zk_children(c, dir, &sv);
        if (rc == ZOK) {
            int pos = zk_queue_position(&sv, base, pred, sizeof pred);
            deallocate_String_vector(&sv);
            if (pos > 0)
                return 1;
            if (pos < 0) {
                lab_err_set(err, ZNONODE, "zookeeper: our node %s vanished while queued", base);
                return -1;
            }
            if (lab_now_ns() >= deadline || *c->env->stop)
                break;
            snprintf(predpath, sizeof predpath, "%s/%s", dir, pred);
            uint64_t seen = zk_wakes(c);
            rc = zk_get_watch(c, predpath);
            if (rc == ZOK) {
                if (!zk_wait(c, seen, deadline))
                    break;
                continue;
            }
            if (rc == ZNONODE)
                continue; /* gone between the listing and the read, no watch set: list again */
        }
        if (zk_session_gone(rc)) {
            zk_session_drop(c);
            return zk_fail(err, rc, "queue", base);
        }
        if (!zk_transient(rc)) {
            zk_fail(err, rc, "queue", base);
            zk_leave(c, mine, gen);
            return -1;
        }
        r = zk_recover(c, gen, deadline, err);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
    }
    zk_leave(c, mine, gen);
    return 0;
}

enum lock_status zk_queue_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                  struct lab_err *err)
{
    int64_t deadline = lab_now_ns() + wait_ns;
    if (c->n_held >= ZK_MAX_HOLDS) {
        lab_err_set(err, ENOSPC, "zookeeper: more than %d locks held at once", ZK_MAX_HOLDS);
        return LOCK_ERROR;
    }
    char mine[ZK_PATH_MAX];
    int r = zk_queue_lock(c, key, NULL, mine, sizeof mine, deadline, err);
    if (r <= 0)
        return r < 0 ? LOCK_ERROR : LOCK_TIMEOUT;
    if (zk_hold_push(c, key, mine, zk_sequence_of(mine), err) != 0) {
        zk_leave(c, mine, c->session_gen);
        return LOCK_ERROR;
    }
    return LOCK_GRANTED;
}
