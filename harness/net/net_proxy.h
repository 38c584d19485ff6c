/*
 * net_proxy.h - between net_delay.c (which sets the delaying proxy up and
 * steers it) and net_proxy.c (the proxy's own loop, in a child of
 * locklab's): what the child is given and the memory both share. Nothing
 * outside harness/net/ includes it.
 */
#ifndef LOCKLAB_NET_PROXY_H
#define LOCKLAB_NET_PROXY_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>

#include "host_spec.h"

#define NET_PROXY_UP_MARK 0x4c4c0001u    /* the proxy's own connections: never redirected */
#define NET_PROXY_PROBE_MARK 0x4c4c0002u /* a delay probe: redirected even to the probe port */

/* Shared between locklab (which writes the delays) and the proxy (which
 * reads them at every chunk): anonymous shared memory made before the fork. */
struct net_proxy_shm {
    _Atomic int64_t latency_ns[SCN_MAX_HOSTS][SCN_MAX_HOSTS]; /* [from][to]: what from sends */
    _Atomic int64_t jitter_ns[SCN_MAX_HOSTS][SCN_MAX_HOSTS];
    _Atomic long conns;        /* connections carried so far */
    _Atomic long live;         /* ... open now */
    _Atomic long long chunks;  /* chunks forwarded */
    _Atomic long long delayed; /* ... of them held back by a delay */
};

struct net_proxy_conf {
    int n;                          /* hosts */
    unsigned listen;                /* mask: hosts whose namespace gets a listener */
    int ns_fd[SCN_MAX_HOSTS];       /* each listening host's network namespace */
    struct in_addr addr[SCN_MAX_HOSTS];
    int port;                       /* the listeners' port, on 127.0.0.1 */
    struct net_proxy_shm *shm;
};

/* The proxy's body, in its own process: listen in every host of
 * conf->listen, write one int (0, or the errno that stopped it) to
 * ready_fd, then forward until killed. Never returns. */
_Noreturn void net_proxy_main(const struct net_proxy_conf *conf, int ready_fd);

#endif
