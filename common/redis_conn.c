/*
 * redis_conn.c - open a Redis connection with timeouts, and ask a sentinel
 * for its master (see redis_conn.h).
 */
#include "redis_conn.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>

redisContext *redis_conn_open(const char *what, const char *host, int port, int timeout_ms,
                              struct lab_err *err)
{
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    if (!c || c->err) {
        lab_err_set(err, ECONNREFUSED, "cannot connect to %s at %s:%d: %s", what, host, port,
                    c ? c->errstr : "out of memory");
        if (c)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    return c;
}

int redis_sentinel_ask(const char *host, int port, const char *name, int timeout_ms,
                       char *host_out, size_t host_len, int *port_out, struct lab_err *err)
{
    redisContext *c = redis_conn_open("a Redis sentinel", host, port, timeout_ms, err);
    if (!c)
        return -1;
    redisReply *r = redisCommand(c, "SENTINEL get-master-addr-by-name %s", name);
    int rc = -1;
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_STRING) {
        snprintf(host_out, host_len, "%s", r->element[0]->str);
        *port_out = atoi(r->element[1]->str);
        rc = 0;
    } else {
        lab_err_set(err, EPROTO, "the sentinel at %s:%d names no master '%s'%s%s", host, port,
                    name, r && r->type == REDIS_REPLY_ERROR ? ": " : "",
                    r && r->type == REDIS_REPLY_ERROR ? r->str : "");
    }
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return rc;
}
