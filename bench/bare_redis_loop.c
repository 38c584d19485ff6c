/*
 * bare_redis_loop.c - the yardstick for locklab's own overhead.
 *
 * The smallest honest program doing what `redis-lua` does per cycle:
 * SET key token NX PX ttl, then EVALSHA of the compare-and-delete release
 * script, on one blocking hiredis connection, for a fixed time. It links
 * nothing of locklab's harness. `locklab bench overhead` runs it side by
 * side with locklab itself and prints the ratio of the two cycle rates.
 *
 *   usage: locklab-bare-redis HOST:PORT SECONDS
 *   prints: cycles=N elapsed_ns=E
 */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char release_script[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('del', KEYS[1])\n"
    "end\n"
    "return 0\n";

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    char host[64];
    int port;
    if (argc != 3 || sscanf(argv[1], "%63[^:]:%d", host, &port) != 2) {
        fprintf(stderr, "usage: %s HOST:PORT SECONDS\n", argv[0]);
        return 2;
    }
    double seconds = atof(argv[2]);
    redisContext *c = redisConnect(host, port);
    if (!c || c->err) {
        fprintf(stderr, "bare loop: cannot connect: %s\n", c ? c->errstr : "out of memory");
        return 3;
    }
    redisReply *r = redisCommand(c, "SCRIPT LOAD %s", release_script);
    if (!r || r->type != REDIS_REPLY_STRING) {
        fprintf(stderr, "bare loop: SCRIPT LOAD failed\n");
        return 3;
    }
    char sha[41];
    snprintf(sha, sizeof sha, "%s", r->str);
    freeReplyObject(r);
    const char *key = "locklab-bare", *token = "bare-loop-token-0123456789abcdef";

    long long cycles = 0, start = now_ns(), end = start + (long long)(seconds * 1e9), t = start;
    while (t < end) {
        r = redisCommand(c, "SET %s %s NX PX %d", key, token, 30000);
        if (!r || r->type != REDIS_REPLY_STATUS) {
            fprintf(stderr, "bare loop: SET NX was not granted\n");
            return 1;
        }
        freeReplyObject(r);
        r = redisCommand(c, "EVALSHA %s 1 %s %s %d", sha, key, token, 30000);
        if (!r || r->type != REDIS_REPLY_INTEGER || r->integer != 1) {
            fprintf(stderr, "bare loop: release did not delete the lock\n");
            return 1;
        }
        freeReplyObject(r);
        cycles++;
        t = now_ns();
    }
    printf("cycles=%lld elapsed_ns=%lld\n", cycles, t - start);
    redisFree(c);
    return 0;
}
