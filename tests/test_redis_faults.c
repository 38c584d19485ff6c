/*
 * test_redis_faults.c - the server side of Redis faults II, on real
 * redis-servers: the clock shim moves a running server's wall clock and
 * redis_clock_jump sees it move (a key with a 10 s TTL is gone at once
 * after +30 s, without being touched: Redis's own expiry follows the
 * shifted clock), a jump back and a reset return it to the machine's, and a
 * jump that does not move the clock (no shim, or a server that ignores the
 * offset file) fails instead of claiming success; persistence none
 * restarts empty, aof-always keeps its keys across a SIGKILL restart, and
 * switching back to none in the same server forgets again.
 *
 * Usage: test_redis_faults (the shim from $LOCKLAB_CLOCK_SHIM, which CTest
 * sets to the built library).
 */
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "redis_clock.h"
#include "redis_conn.h"
#include "redis_persist.h"
#include "redis_server.h"

#define MS 1000000LL
#define SEC 1000000000LL

/* One command's integer reply (-1 on anything else). */
static long long integer(const struct server *s, const char *cmd)
{
    struct lab_err err = {0};
    redisContext *c = redis_conn_open("test", s->host, s->port, 1000, &err);
    if (!c)
        return -1;
    redisReply *r = redisCommand(c, cmd);
    long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return v;
}

static int ok(const struct server *s, const char *cmd)
{
    struct lab_err err = {0};
    redisContext *c = redis_conn_open("test", s->host, s->port, 1000, &err);
    if (!c)
        return 0;
    redisReply *r = redisCommand(c, cmd);
    int good = r && r->type == REDIS_REPLY_STATUS;
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return good;
}

/* The server's TIME minus the machine's wall clock, in ns. */
static int64_t skew(const struct server *s)
{
    struct lab_err err = {0};
    redisContext *c = redis_conn_open("test", s->host, s->port, 1000, &err);
    if (!c)
        return INT64_MIN;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    redisReply *r = redisCommand(c, "TIME");
    int64_t v = INT64_MIN;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2)
        v = atoll(r->element[0]->str) * SEC + atoll(r->element[1]->str) * 1000 -
            ((int64_t)t.tv_sec * SEC + t.tv_nsec);
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return v;
}

static void test_clock(void)
{
    struct lab_err err = {0};
    const char *shim = redis_clock_shim(&err);
    CHECK(shim != NULL, "the shim: %s", err.msg);
    if (!shim)
        return;
    struct server s;
    CHECK(servers_redis_start_with(&s, "test-clock", "", shim, &err) == 0, "start: %s", err.msg);
    if (!s.pid)
        return;
    int64_t d = skew(&s);
    CHECK(d > -50 * MS && d < 50 * MS, "under the shim at offset 0 the clock is the machine's "
                                       "(%lld ns off)", (long long)d);
    CHECK(ok(&s, "SET a 1 PX 10000") && ok(&s, "SET b 1 PX 10000") && ok(&s, "SET c 1"),
          "keys set");
    int64_t seen = 0;
    CHECK(redis_clock_jump(&s, 30 * SEC, &seen, &err) == 0, "jump +30 s: %s", err.msg);
    CHECK(seen > 30 * SEC - 20 * MS && seen < 30 * SEC + 20 * MS, "seen %lld ns",
          (long long)seen);
    /* nothing touches a or b: the server's own expiry removes them */
    long long keys = -1;
    for (int i = 0; i < 100 && (keys = integer(&s, "DBSIZE")) != 1; i++)
        usleep(10000);
    CHECK(keys == 1, "the TTL keys expired by themselves within 1 s: %lld keys left", keys);
    CHECK(integer(&s, "EXISTS a") == 0 && integer(&s, "EXISTS c") == 1, "a gone, c kept");
    d = skew(&s);
    CHECK(d > 30 * SEC - 50 * MS && d < 30 * SEC + 50 * MS, "skew %lld ns", (long long)d);

    /* a jump back, then another forward on top, then a reset */
    CHECK(redis_clock_jump(&s, -10 * SEC, &seen, &err) == 0, "jump -10 s: %s", err.msg);
    CHECK(seen < -10 * SEC + 20 * MS && seen > -10 * SEC - 20 * MS, "seen %lld ns",
          (long long)seen);
    d = skew(&s);
    CHECK(d > 20 * SEC - 50 * MS && d < 20 * SEC + 50 * MS, "jumps add up: %lld ns",
          (long long)d);
    CHECK(redis_clock_reset(&s, &err) == 0, "reset: %s", err.msg);
    d = skew(&s);
    CHECK(d > -50 * MS && d < 50 * MS, "after the reset: %lld ns", (long long)d);

    /* the offset survives a restart (the file stays in the directory) */
    CHECK(redis_clock_jump(&s, 5 * SEC, &seen, &err) == 0, "jump +5 s: %s", err.msg);
    CHECK(servers_restart(&s, &err) == 0, "restart: %s", err.msg);
    d = skew(&s);
    CHECK(d > 5 * SEC - 50 * MS && d < 5 * SEC + 50 * MS, "restarted under the shim, still "
                                                           "+5 s: %lld ns", (long long)d);
    servers_stop(&s);
}

/* A jump that cannot move the clock fails, and says what it saw. */
static void test_clock_not_moved(void)
{
    struct lab_err err = {0};
    struct server s;
    CHECK(servers_redis_start(&s, "test-noshim", &err) == 0, "start: %s", err.msg);
    if (!s.pid)
        return;
    int64_t seen = 1;
    CHECK(redis_clock_jump(&s, 30 * SEC, &seen, &err) != 0 && seen == 0 &&
              strstr(err.msg, "without the clock shim"),
          "no shim: %s", err.msg);
    CHECK(redis_clock_reset(&s, &err) == 0, "nothing to reset is fine");
    /* an offset file the server never reads: the TIME check catches it */
    char path[sizeof s.dir + 32];
    snprintf(path, sizeof path, "%s/clock-offset", s.dir);
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    int64_t zero = 0;
    CHECK(fd >= 0 && write(fd, &zero, sizeof zero) == (ssize_t)sizeof zero, "offset file");
    if (fd >= 0)
        close(fd);
    s.preload = "(not really)";
    err.msg[0] = '\0';
    CHECK(redis_clock_jump(&s, 30 * SEC, &seen, &err) != 0, "a clock that did not move");
    CHECK(seen > -20 * MS && seen < 20 * MS && strstr(err.msg, "not the +30.000 s asked"),
          "seen %lld ns: %s", (long long)seen, err.msg);
    s.preload = NULL;
    servers_stop(&s);
}

static void test_persistence(void)
{
    struct lab_err err = {0};
    struct server s;
    CHECK(servers_redis_start(&s, "test-persist", &err) == 0, "start: %s", err.msg);
    if (!s.pid)
        return;
    CHECK(ok(&s, "SET k 1 PX 60000"), "set");
    CHECK(servers_restart(&s, &err) == 0, "restart: %s", err.msg);
    CHECK(integer(&s, "DBSIZE") == 0, "no persistence: back empty");

    CHECK(redis_persist_apply(&s, PERSIST_AOF_ALWAYS, &err) == 0, "aof-always: %s", err.msg);
    CHECK(s.more_args != NULL, "a restart gets the AOF arguments");
    CHECK(ok(&s, "SET k 1 PX 60000") && ok(&s, "SET j 2"), "set");
    CHECK(servers_restart(&s, &err) == 0, "restart: %s", err.msg);
    CHECK(integer(&s, "DBSIZE") == 2, "aof-always: both keys back");
    long long ttl = integer(&s, "PTTL k");
    CHECK(ttl > 50000 && ttl <= 60000, "with its TTL: %lld ms", ttl);
    /* applying it again to a server that has it already is harmless */
    CHECK(redis_persist_apply(&s, PERSIST_AOF_ALWAYS, &err) == 0, "again: %s", err.msg);

    CHECK(redis_persist_apply(&s, PERSIST_NONE, &err) == 0, "none: %s", err.msg);
    CHECK(s.more_args == NULL, "a restart gets no AOF");
    CHECK(servers_restart(&s, &err) == 0, "restart: %s", err.msg);
    CHECK(integer(&s, "DBSIZE") == 0, "none again: back empty");

    CHECK(redis_persist_apply(&s, PERSIST_AOF_EVERYSEC, &err) == 0, "everysec: %s", err.msg);
    CHECK(ok(&s, "SET k 1"), "set");
    CHECK(servers_restart(&s, &err) == 0, "restart: %s", err.msg);
    /* a SIGKILL loses nothing already written to the kernel: everysec only
     * differs from always on a machine crash, which is not simulated */
    CHECK(integer(&s, "DBSIZE") == 1, "aof-everysec: the key is back");
    servers_stop(&s);
}

int main(void)
{
    test_clock();
    test_clock_not_moved();
    test_persistence();
    servers_stop_all();
    return check_done();
}
