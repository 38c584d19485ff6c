/*
 * redis_conn.c - open a Redis connection with timeouts (see redis_conn.h).
 */
#include "redis_conn.h"

#include <errno.h>
#include <hiredis/hiredis.h>

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
