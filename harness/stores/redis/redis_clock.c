/*
 * redis_clock.c - move an embedded Redis's wall clock (see redis_clock.h).
 *
 * The server runs under the clock shim (clockshim.c), which adds the int64
 * in <its directory>/clock-offset to every wall-clock reading. A jump maps
 * that file and stores the new offset in place with one atomic store, so
 * the server never reads half a number and the file never shrinks under
 * its mapping. A fault that claims to have moved a clock must show it: the
 * server's own TIME is read just before and just after the store, and the
 * jump counts only when the server's clock moved by the offset beyond the
 * time that passed between the two readings (each reading is placed at the
 * middle of its round trip, so the error is at most a round trip).
 */
#include "redis_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clockshim.h"
#include "redis_conn.h"
#include "subproc.h"

/* A jump landed when the server's clock moved within this of what was asked. */
#define JUMP_TOLERANCE_NS (20 * 1000000LL)
#define TIME_TIMEOUT_MS 1000

const char *redis_clock_shim(struct lab_err *err)
{
    static char path[4096 + 64];
    const char *env = getenv("LOCKLAB_CLOCK_SHIM");
    int found;
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
        found = access(path, R_OK) == 0;
    } else {
        found = subproc_sibling(CLOCKSHIM_LIB, R_OK, path, sizeof path) == 0;
    }
    if (found)
        return path;
    lab_err_set(err, ENOENT, "clock-jump needs the clock shim; not found: %s (build it, or "
                "set LOCKLAB_CLOCK_SHIM)", path[0] ? path : CLOCKSHIM_LIB);
    return NULL;
}

/* Map the offset file of s for writing; NULL with err filled (ENOENT when
 * the server does not run under the shim). */
static int64_t *map_offset(const struct server *s, struct lab_err *err)
{
    char path[sizeof s->dir + 32];
    snprintf(path, sizeof path, "%s/%s", s->dir, CLOCKSHIM_FILE);
    int fd = s->preload ? open(path, O_RDWR | O_CLOEXEC) : -1;
    if (fd < 0) {
        lab_err_set(err, ENOENT, "%s runs without the clock shim (no %s)", s->role, path);
        return NULL;
    }
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(int64_t))
        p = mmap(NULL, sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        lab_err_set(err, EIO, "cannot map %s", path);
        return NULL;
    }
    return p;
}

static void unmap_offset(int64_t *off)
{
    munmap(off, sizeof *off);
}

int redis_clock_reset(const struct server *s, struct lab_err *err)
{
    struct lab_err why = {0};
    int64_t *off = map_offset(s, &why);
    if (!off) {
        if (why.code == ENOENT)
            return 0; /* no shim, no offset */
        *err = why;
        return -1;
    }
    __atomic_store_n(off, 0, __ATOMIC_SEQ_CST);
    unmap_offset(off);
    return 0;
}

/* The server's TIME in ns into *srv, and the local monotonic time at the
 * middle of the round trip into *mid. 0 or -1 with err filled. */
static int server_time(redisContext *c, const struct server *s, int64_t *srv, int64_t *mid,
                       struct lab_err *err)
{
    int64_t t0 = lab_now_ns();
    redisReply *r = redisCommand(c, "TIME");
    int64_t t1 = lab_now_ns();
    int ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
             r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_STRING;
    if (ok) {
        *srv = strtoll(r->element[0]->str, NULL, 10) * 1000000000LL +
               strtoll(r->element[1]->str, NULL, 10) * 1000LL;
        *mid = t0 + (t1 - t0) / 2;
    } else {
        lab_err_set(err, EIO, "%s (port %d) did not answer TIME: %s", s->role, s->port,
                    r && r->type == REDIS_REPLY_ERROR ? r->str : c->errstr);
    }
    if (r)
        freeReplyObject(r);
    return ok ? 0 : -1;
}

int redis_clock_jump(const struct server *s, int64_t by_ns, int64_t *seen_ns, struct lab_err *err)
{
    *seen_ns = 0;
    int64_t *off = map_offset(s, err);
    if (!off)
        return -1;
    char what[48];
    snprintf(what, sizeof what, "%s", s->role);
    redisContext *c = redis_conn_open(what, s->host, s->port, TIME_TIMEOUT_MS, err);
    int64_t srv0, mid0, srv1, mid1;
    int rc = -1;
    if (c && server_time(c, s, &srv0, &mid0, err) == 0) {
        __atomic_add_fetch(off, by_ns, __ATOMIC_SEQ_CST);
        if (server_time(c, s, &srv1, &mid1, err) == 0) {
            *seen_ns = (srv1 - srv0) - (mid1 - mid0);
            int64_t miss = *seen_ns - by_ns;
            rc = miss > -JUMP_TOLERANCE_NS && miss < JUMP_TOLERANCE_NS ? 0 : -1;
            if (rc != 0)
                lab_err_set(err, EIO, "%s's clock moved %+.3f s, not the %+.3f s asked", s->role,
                            (double)*seen_ns / 1e9, (double)by_ns / 1e9);
        }
    }
    if (c)
        redisFree(c);
    unmap_offset(off);
    return rc;
}
