/*
 * backends.c - start or check the servers an invocation needs (see
 * backends.h).
 */
#include "backends.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>


int backends_start(struct backends *b, bool need_redis, bool need_stock, int n_masters,
                   const char *external_redis, struct lab_err *err)
{
    memset(b, 0, sizeof *b);
    if (need_redis) {
        if (external_redis) {
            if (lab_parse_hostport(external_redis, b->redis_host, sizeof b->redis_host,
                                   &b->redis_port) != 0) {
                lab_err_set(err, EINVAL, "bad Redis address '%s' (expected HOST:PORT)",
                            external_redis);
                return -1;
            }
            if (servers_redis_ping(b->redis_host, b->redis_port, 2000, err) != 0)
                return -1;
        } else {
            if (servers_redis_start(&b->lock_srv, "lock-store", err) != 0)
                return -1;
            snprintf(b->redis_host, sizeof b->redis_host, "%s", b->lock_srv.host);
            b->redis_port = b->lock_srv.port;
        }
        b->have_lock_store = true;
    }
    if (need_stock) {
        if (servers_redis_start(&b->stock_srv, "stock", err) != 0) {
            backends_stop(b);
            return -1;
        }
        b->have_stock = true;
    }
    for (; b->n_masters < n_masters; b->n_masters++) {
        char role[32];
        snprintf(role, sizeof role, "master-%d", b->n_masters);
        struct server *m = &b->master_srv[b->n_masters];
        if (servers_redis_start(m, role, err) != 0) {
            backends_stop(b);
            return -1;
        }
        memcpy(b->masters[b->n_masters].host, m->host, sizeof m->host);
        b->masters[b->n_masters].port = m->port;
    }
    return 0;
}

int backends_start_zk(struct backends *b, int ensemble, int force_sync, const char *external_zk,
                      const volatile int *stop, struct lab_err *err)
{
    if (external_zk) {
        snprintf(b->zk_hosts, sizeof b->zk_hosts, "%s", external_zk);
        return servers_zk_ping(b->zk_hosts, 5000, err);
    }
    if (servers_zk_start(b->zk_srv, ensemble, force_sync, stop, b->zk_hosts, sizeof b->zk_hosts, err) != 0)
        return -1;
    b->n_zk = ensemble;
    return 0;
}

void backends_stop(struct backends *b)
{
    for (int i = 0; i < b->n_zk; i++)
        servers_stop(&b->zk_srv[i]);
    b->n_zk = 0;
    for (int i = 0; i < b->n_masters; i++)
        servers_stop(&b->master_srv[i]);
    b->n_masters = 0;
    servers_stop(&b->stock_srv);
    servers_stop(&b->lock_srv);
    b->have_lock_store = b->have_stock = false;
}
