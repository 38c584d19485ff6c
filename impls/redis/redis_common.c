/*
 * redis_common.c - finding the store from a process (see redis_common.h).
 */
#include "redis_common.h"
#include "redis_conn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

bool redis_says_master(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
           r->element[0]->type == REDIS_REPLY_STRING && strcmp(r->element[0]->str, "master") == 0;
}

/* The sentinel topology: ask the sentinels which server is the master,
 * connect to it and check that it says so, as Redisson's and Jedis's
 * sentinel clients do. While a failover is under way the sentinels still
 * name the dead master, or a replica not yet promoted: ask again. The
 * loop links' search (redis_link_seek.c) takes the same steps. */
static redisContext *sentinel_store_open(const char *what, const struct lock_env *env,
                                         int timeout_ms, struct lab_err *err)
{
    const struct lock_servers *sv = env->servers;
    int64_t deadline = lab_now_ns() + REDIS_SENTINEL_SEARCH_NS;
    for (;;) {
        for (int i = 0; i < sv->n; i++) {
            char host[64];
            int port;
            if (redis_sentinel_ask(sv->node[i].host, sv->node[i].port, sv->sentinel_master,
                                   timeout_ms, host, sizeof host, &port, err) != 0)
                continue; /* this sentinel is down: ask the next */
            redisContext *c = redis_conn_open(what, host, port, timeout_ms, err);
            redisReply *r = c ? redisCommand(c, "ROLE") : NULL;
            bool master = redis_says_master(r);
            if (r)
                freeReplyObject(r);
            if (master)
                return c;
            if (c) {
                lab_err_set(err, EAGAIN, "%s:%d, named by the sentinels, is not a master", host,
                            port);
                redisFree(c);
            }
            break; /* the master they name is down or demoted: wait for the switch */
        }
        if (lab_now_ns() >= deadline || (env->stop && *env->stop))
            return NULL;
        lab_sleep_ns(REDIS_SENTINEL_RETRY_NS, env->stop);
    }
}

redisContext *redis_store_open(const char *what, const struct lock_env *env, int timeout_ms,
                               struct lab_err *err)
{
    if (env->servers->sentinel_master[0])
        return sentinel_store_open(what, env, timeout_ms, err);
    const struct lock_endpoint *ep = &env->servers->node[0];
    return redis_conn_open(what, ep->host, ep->port, timeout_ms, err);
}
