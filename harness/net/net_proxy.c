/*
 * net_proxy.c - the delaying TCP proxy of slow links (net_delay.c sets it
 * up): one epoll loop in a child of locklab's that holds every connection
 * between the hosts a delay entry names, from the run's start.
 *
 * There is no `tc netem` on the machines the lab runs on, so a link is
 * slowed in user space. In each host it serves, an nftables rule of that
 * host's namespace redirects TCP to the other host to this process's
 * listener there (127.0.0.1:port, made in that namespace); the original
 * destination comes from SO_ORIGINAL_DST, and the connection on to it is
 * made in the same namespace (marked, so the rule lets it pass), so the
 * far side sees the near host's address and a partition cuts it as it
 * cuts any of that host's traffic. Each chunk read from one side is
 * written to the other at its release time: now plus the link's latency
 * for that direction, give or take its jitter (uniform), never before the
 * previous chunk of the same direction (bytes keep their order), and the
 * end of the stream (a FIN) is a chunk like the others. While the latency
 * is 0 a chunk is written as soon as it is read. Bytes only are delayed:
 * a connection's setup is not. A reset on one side resets the other.
 */
#include "net_proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80 /* linux/netfilter_ipv4.h, which clashes with netinet/in.h */
#endif
#define QUEUE_CAP (1 << 20) /* bytes held per direction before its source is not read */
#define READ_MAX 65536

struct chunk {
    struct chunk *next;
    int64_t release;
    size_t len, off;
    bool eof;
    char data[];
};

/* One direction of a connection: what side s reads, to be written to 1-s. */
struct dir {
    struct chunk *head, *tail;
    int64_t last;       /* the release of the last chunk queued */
    size_t queued;
    bool eof_read, eof_sent, blocked;
};

struct conn;
struct end {            /* what an epoll event points at */
    struct conn *c;     /* NULL: a listener */
    int side;           /* 0: the connecting client's, 1: the destination's */
    int host;           /* a listener's host */
    int fd;
};

struct conn {
    struct end e[2];
    unsigned ev[2];     /* the events each fd is registered for */
    bool in_epoll[2];
    int host[2];        /* the host on each side (-1: not a host of the run) */
    bool connecting;
    bool dead;          /* closed: freed once the events of this round are seen */
    struct dir d[2];    /* d[s]: from side s to the other */
    struct conn *prev, *next;
};

static struct {
    const struct net_proxy_conf *conf;
    int ep, own_ns;
    struct conn *conns;
    struct conn *dead;  /* closed this round (linked by next) */
    long held;          /* chunks queued over all connections: none, no scan */
    uint64_t rnd;
    int64_t now;
} P;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t rnd_next(void)
{
    P.rnd ^= P.rnd << 13;
    P.rnd ^= P.rnd >> 7;
    P.rnd ^= P.rnd << 17;
    return P.rnd;
}

static int host_of(struct in_addr a)
{
    for (int h = 0; h < P.conf->n; h++)
        if (P.conf->addr[h].s_addr == a.s_addr)
            return h;
    return -1;
}

/* ------------------------------------------------------------ connections */

static void conn_free(struct conn *c, bool reset)
{
    for (int s = 0; s < 2; s++) {
        if (c->e[s].fd < 0)
            continue;
        if (reset) {
            struct linger l = {1, 0};
            setsockopt(c->e[s].fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        }
        close(c->e[s].fd); /* also leaves the epoll set */
        for (struct chunk *k = c->d[s].head, *n; k; k = n) {
            n = k->next;
            free(k);
            P.held--;
        }
    }
    if (c->prev)
        c->prev->next = c->next;
    else
        P.conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    atomic_fetch_sub(&P.conf->shm->live, 1);
    c->dead = true;
    c->next = P.dead; /* an event of this round may still point at it */
    P.dead = c;
}

/* Register side s's fd for what it is wanted for now (nothing left: out). */
static void interest(struct conn *c, int s)
{
    const struct dir *in = &c->d[s], *out = &c->d[1 - s];
    unsigned ev = 0;
    if (!in->eof_read && in->queued < QUEUE_CAP && !(s == 0 && c->connecting))
        ev |= EPOLLIN;
    if ((s == 1 && c->connecting) || out->blocked)
        ev |= EPOLLOUT;
    bool done = in->eof_read && out->eof_sent;
    if (done && c->in_epoll[s]) {
        epoll_ctl(P.ep, EPOLL_CTL_DEL, c->e[s].fd, NULL);
        c->in_epoll[s] = false;
    } else if (!done && (ev != c->ev[s] || !c->in_epoll[s])) {
        struct epoll_event e = {.events = ev, .data.ptr = &c->e[s]};
        epoll_ctl(P.ep, c->in_epoll[s] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->e[s].fd, &e);
        c->in_epoll[s] = true;
    }
    c->ev[s] = ev;
}

/* Write what is due of direction s to the other side. false: the
 * connection is gone (an error reset it). */
static bool flush(struct conn *c, int s)
{
    struct dir *d = &c->d[s];
    int to = c->e[1 - s].fd;
    d->blocked = false;
    while (d->head && d->head->release <= P.now && !(s == 0 && c->connecting)) {
        struct chunk *k = d->head;
        if (k->eof) {
            shutdown(to, SHUT_WR);
            d->eof_sent = true;
        } else {
            ssize_t w = send(to, k->data + k->off, k->len - k->off, MSG_NOSIGNAL);
            if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                d->blocked = true;
                break;
            }
            if (w < 0) {
                conn_free(c, true);
                return false;
            }
            k->off += (size_t)w;
            if (k->off < k->len) {
                d->blocked = true;
                break;
            }
            d->queued -= k->len;
        }
        d->head = k->next;
        if (!d->head)
            d->tail = NULL;
        free(k);
        P.held--;
    }
    if (c->d[0].eof_sent && c->d[1].eof_sent) {
        conn_free(c, false);
        return false;
    }
    interest(c, 0);
    interest(c, 1);
    return true;
}

/* Queue what side s read (len bytes, or its end when eof) and write what
 * is due. false: the connection is gone. */
static bool take(struct conn *c, int s, const char *buf, size_t len, bool eof)
{
    struct dir *d = &c->d[s];
    int64_t lat = 0, jit = 0;
    if (c->host[0] >= 0 && c->host[1] >= 0) {
        lat = atomic_load_explicit(&P.conf->shm->latency_ns[c->host[s]][c->host[1 - s]],
                                   memory_order_relaxed);
        jit = atomic_load_explicit(&P.conf->shm->jitter_ns[c->host[s]][c->host[1 - s]],
                                   memory_order_relaxed);
    }
    if (jit > 0)
        lat += (int64_t)(rnd_next() % (uint64_t)(2 * jit + 1)) - jit;
    int64_t release = P.now + (lat > 0 ? lat : 0);
    if (release < d->last)
        release = d->last; /* never before the chunk before it */
    d->last = release;
    atomic_fetch_add_explicit(&P.conf->shm->chunks, 1, memory_order_relaxed);
    if (release > P.now)
        atomic_fetch_add_explicit(&P.conf->shm->delayed, 1, memory_order_relaxed);
    size_t sent = 0;
    if (!eof && !d->head && release <= P.now && !(s == 0 && c->connecting)) {
        ssize_t w = send(c->e[1 - s].fd, buf, len, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            conn_free(c, true);
            return false;
        }
        sent = w > 0 ? (size_t)w : 0;
        if (sent == len) {
            interest(c, s);
            return true;
        }
    }
    struct chunk *k = malloc(sizeof *k + (len - sent));
    if (!k) {
        conn_free(c, true);
        return false;
    }
    *k = (struct chunk){.release = release, .len = len - sent, .eof = eof};
    if (len > sent)
        memcpy(k->data, buf + sent, len - sent);
    if (d->tail)
        d->tail->next = k;
    else
        d->head = k;
    d->tail = k;
    d->queued += k->len;
    P.held++;
    if (eof)
        d->eof_read = true;
    return flush(c, s);
}

/* Side s of c is readable (or hung up). */
static void readable(struct conn *c, int s)
{
    char buf[READ_MAX];
    if (c->d[s].eof_read)
        return; /* a hang-up after its end: nothing more to read */
    ssize_t r = recv(c->e[s].fd, buf, sizeof buf, 0);
    if (r > 0)
        take(c, s, buf, (size_t)r, false);
    else if (r == 0)
        take(c, s, NULL, 0, true);
    else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        conn_free(c, true);
}

/* Side s of c is writable: the destination connected, or room again. */
static void writable(struct conn *c, int s)
{
    if (s == 1 && c->connecting) {
        int e = 0;
        socklen_t len = sizeof e;
        getsockopt(c->e[1].fd, SOL_SOCKET, SO_ERROR, &e, &len);
        if (e) {
            conn_free(c, true); /* refused: the client sees a reset */
            return;
        }
        c->connecting = false;
    }
    if (flush(c, 1 - s))
        interest(c, s);
}

/* A socket in host h's namespace. */
static int socket_in(int h)
{
    if (setns(P.conf->ns_fd[h], CLONE_NEWNET) != 0)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int e = errno;
    setns(P.own_ns, CLONE_NEWNET);
    errno = e;
    return fd;
}

/* A client of host h connected to the listener: connect on to where it
 * meant to go, from h. */
static void accepted(int h, int fd)
{
    struct sockaddr_in dst;
    socklen_t len = sizeof dst;
    int one = 1, up = -1;
    unsigned mark = NET_PROXY_UP_MARK;
    struct conn *c = calloc(1, sizeof *c);
    if (!c || getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &dst, &len) != 0 ||
        (up = socket_in(h)) < 0 || setsockopt(up, SOL_SOCKET, SO_MARK, &mark, sizeof mark) != 0 ||
        (connect(up, (struct sockaddr *)&dst, sizeof dst) != 0 && errno != EINPROGRESS)) {
        struct linger l = {1, 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        close(fd);
        if (up >= 0)
            close(up);
        free(c);
        return;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(up, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->e[0] = (struct end){.c = c, .side = 0, .fd = fd};
    c->e[1] = (struct end){.c = c, .side = 1, .fd = up};
    c->host[0] = h;
    c->host[1] = host_of(dst.sin_addr);
    c->connecting = true;
    c->next = P.conns;
    if (P.conns)
        P.conns->prev = c;
    P.conns = c;
    atomic_fetch_add(&P.conf->shm->conns, 1);
    atomic_fetch_add(&P.conf->shm->live, 1);
    interest(c, 0);
    interest(c, 1);
}

/* ------------------------------------------------------------ the loop */

static int listen_in(int h, int port)
{
    int fd = socket_in(h), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 256) != 0)
        return -1;
    return fd;
}

/* ms until the first chunk held back is due, -1 when none is. */
static int next_due(void)
{
    int64_t first = INT64_MAX;
    for (struct conn *c = P.held ? P.conns : NULL; c; c = c->next)
        for (int s = 0; s < 2; s++)
            if (c->d[s].head && !c->d[s].blocked && c->d[s].head->release < first)
                first = c->d[s].head->release;
    if (first == INT64_MAX)
        return -1;
    int64_t ms = (first - now_ns() + 999999) / 1000000;
    return ms < 0 ? 0 : ms > 1000 ? 1000 : (int)ms;
}

static void flush_due(void)
{
    for (struct conn *c = P.held ? P.conns : NULL, *n; c; c = n) {
        n = c->next;
        for (int s = 0; s < 2; s++)
            if (c->d[s].head && !c->d[s].blocked && c->d[s].head->release <= P.now &&
                !flush(c, s))
                break;
    }
}

_Noreturn void net_proxy_main(const struct net_proxy_conf *conf, int ready_fd)
{
    static struct end listeners[SCN_MAX_HOSTS];
    P.conf = conf;
    P.rnd = (uint64_t)now_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
    P.ep = epoll_create1(EPOLL_CLOEXEC);
    P.own_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    int why = P.ep < 0 || P.own_ns < 0 ? errno : 0;
    for (int h = 0; h < conf->n && !why; h++) {
        if (!(conf->listen & (1u << h)))
            continue;
        int fd = listen_in(h, conf->port);
        listeners[h] = (struct end){.c = NULL, .host = h, .fd = fd};
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = &listeners[h]};
        if (fd < 0 || epoll_ctl(P.ep, EPOLL_CTL_ADD, fd, &e) != 0)
            why = errno ? errno : EIO;
    }
    (void)!write(ready_fd, &why, sizeof why);
    close(ready_fd);
    if (why)
        _exit(1);
    struct epoll_event ev[64];
    for (;;) {
        int n = epoll_wait(P.ep, ev, 64, next_due());
        P.now = now_ns();
        for (int i = 0; i < n; i++) {
            struct end *e = ev[i].data.ptr;
            if (!e->c) {
                int fd;
                while ((fd = accept4(e->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
                    accepted(e->host, fd);
                continue;
            }
            struct conn *c = e->c;
            if (c->dead) /* closed by an earlier event of this round */
                continue;
            int s = e->side;
            if (ev[i].events & EPOLLERR)
                conn_free(c, true);
            else if (ev[i].events & (EPOLLIN | EPOLLHUP))
                readable(c, s);
            else if (ev[i].events & EPOLLOUT)
                writable(c, s);
        }
        flush_due();
        for (struct conn *c = P.dead, *next; c; c = next) {
            next = c->next;
            free(c);
        }
        P.dead = NULL;
    }
}
