/*
 * bare_zk_many.c - ZooKeeper's own ceiling at N sessions, for `locklab
 * bench ceiling --backend zookeeper`.
 *
 * The same requests as an uncontended zk-sequential cycle (create an
 * ephemeral-sequential node, list the parent's children, delete the node),
 * from N sessions at once, each on a parent of its own (the lab's
 * per-client keys), driven by one thread with epoll, as redis-benchmark
 * drives Redis. The sessions connect before the clock starts, as the
 * lab's clients open theirs before its start barrier; each session's first
 * cycle, inside the measured time, begins by creating /locklab and its
 * parent (persistent; an existing one answers "node exists"), as each lab
 * client's first acquire does (zk-sequential makes sure of the parent once
 * a session): like with like, where the lab cannot leave them out (at
 * 10,000 clients and 5 s they are 3.49 requests an acquire instead of 3). It speaks ZooKeeper's wire protocol itself (length-framed
 * jute records: the connect handshake, then request header + body, reply
 * header + body): the C client Debian ships is the multi-threaded one, two
 * threads per session, whose wake-ups cost more CPU at 64 sessions than
 * the server spends, which would make it a ceiling of the client, not of
 * the store. Each session has one request in flight, a few hundred bytes,
 * so a write never meets a full socket buffer; one that does not go out
 * whole is an error. It links nothing of locklab's harness (the encoding
 * is the header impls/zookeeper/zk_jute.h, shared with the lab's own transport).
 *
 *   usage: locklab-bare-zk-many HOSTS SECONDS SESSIONS   (the first host is used)
 *   prints: cycles=N elapsed_ns=E
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "zk_jute.h"

#define MAX_SESSIONS 100000
#define SESSION_TIMEOUT_MS 30000
#define SETUP_TIMEOUT_NS (60LL * 1000000000)
#define ZNODEEXISTS (-110)
#define EPHEMERAL_SEQUENTIAL 3

/* Where a session is: connecting, then (measured) the parents once and
 * the cycle's three requests. */
enum step { CONNECTING, READY, ROOT, PARENT, CREATE, CHILDREN, DELETE, DONE };

struct session {
    int fd;
    enum step step;
    int xid;
    char parent[48], id[33], mine[160];
    unsigned long long creates;
    unsigned char in[4096];
    size_t have;
    long long cycles;
};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A jute record being written (zk_jute.h: the encoding the lab's own
 * ZooKeeper transport, impls/zookeeper/zk_wire.c, writes too). */
struct out {
    unsigned char b[512];
    size_t n, at; /* length; where the frame begins */
};

/* Frame the record (its length first) and send it whole; 0 or -1. */
static int send_out(struct session *s, struct out *o)
{
    jute_end(o->b, o->n, o->at);
    return send(s->fd, o->b, o->n, MSG_NOSIGNAL) == (ssize_t)o->n ? 0 : -1;
}

/* A request of type op: the frame's length slot and the request header. */
static void begin(struct session *s, struct out *o, int op)
{
    o->n = 0;
    o->at = jute_begin(o->b, &o->n);
    jute_header(o->b, &o->n, ++s->xid, op);
}

static int send_create(struct session *s, const char *path, int flags)
{
    struct out o;
    begin(s, &o, JUTE_OP_CREATE);
    jute_create_body(o.b, &o.n, path, flags);
    return send_out(s, &o);
}

static int send_children(struct session *s)
{
    struct out o;
    begin(s, &o, JUTE_OP_CHILDREN);
    jute_put_str(o.b, &o.n, s->parent);
    o.b[o.n++] = 0; /* no watch */
    return send_out(s, &o);
}

static int send_delete(struct session *s)
{
    struct out o;
    begin(s, &o, JUTE_OP_DELETE);
    jute_put_str(o.b, &o.n, s->mine);
    jute_put32(o.b, &o.n, -1); /* any version */
    return send_out(s, &o);
}

static int send_connect(struct session *s)
{
    static const unsigned char no_passwd[JUTE_PASSWD_LEN];
    struct out o = {.n = 0};
    o.at = jute_begin(o.b, &o.n);
    jute_connect_body(o.b, &o.n, 0, SESSION_TIMEOUT_MS, 0, no_passwd); /* a new session */
    return send_out(s, &o);
}

/* The cycle's create: an ephemeral-sequential child of the session's
 * parent named as the lab's recipe names it, lock-<id>-<n>- (its 32-hex
 * identity and the attempt's count; jute_attempt_name, which the lab's
 * recipe calls too), so both ask the server for the same paths. */
static int send_attempt(struct session *s)
{
    char path[160];
    size_t n = strlen(s->parent);
    memcpy(path, s->parent, n);
    path[n++] = '/';
    jute_attempt_name(path + n, s->id, ++s->creates);
    return send_create(s, path, EPHEMERAL_SEQUENTIAL);
}

/* The big-endian integer at p. */
static int32_t get32(const unsigned char *p) { return (int32_t)jute_frame_len(p); }

/* The cycle's next request after a reply (body: after the reply header);
 * 0, 1 when the session has finished its part, -1 on an error. */
static int advance(struct session *s, int32_t err, const unsigned char *body, size_t len,
                   long long end)
{
    switch (s->step) {
    case CONNECTING:
        s->step = READY;
        return 1;
    case ROOT:
    case PARENT:
        if (err != 0 && err != ZNODEEXISTS)
            return -1;
        if (s->step == PARENT) {
            s->step = CREATE;
            return send_attempt(s);
        }
        s->step = PARENT;
        return send_create(s, s->parent, 0);
    case CREATE: {
        int32_t n = len >= 4 ? get32(body) : -1;
        if (err != 0 || n < 1 || (size_t)n + 4 > len || (size_t)n >= sizeof s->mine)
            return -1;
        memcpy(s->mine, body + 4, (size_t)n);
        s->mine[n] = '\0';
        s->step = CHILDREN; /* alone under its parent: ours will be the lowest */
        return send_children(s);
    }
    case CHILDREN: /* its own node at least: the create made a child of the parent */
        if (err != 0 || len < 4 || get32(body) < 1)
            return -1;
        s->step = DELETE;
        return send_delete(s);
    case DELETE:
        if (err != 0)
            return -1;
        s->cycles++;
        if (now_ns() >= end) {
            s->step = DONE;
            return 1;
        }
        s->step = CREATE;
        return send_attempt(s);
    default:
        return -1;
    }
}

/* Read what has come and act on every whole frame; 0, or the number of
 * sessions that finished a phase (1), or -1 on an error. */
static int on_readable(struct session *s, long long end)
{
    ssize_t got = recv(s->fd, s->in + s->have, sizeof s->in - s->have, 0);
    if (got <= 0)
        return got < 0 && errno == EAGAIN ? 0 : -1;
    s->have += (size_t)got;
    int finished = 0;
    while (s->have >= 4) {
        size_t len = (size_t)get32(s->in);
        if (len > sizeof s->in - 4)
            return -1;
        if (s->have < len + 4)
            break;
        const unsigned char *rec = s->in + 4;
        int rc;
        if (s->step == CONNECTING) {
            rc = advance(s, 0, rec, len, end);
        } else if (len < 16) {
            rc = -1;
        } else if (get32(rec) < 0) {
            rc = 0; /* a ping's or a watch's reply: none is asked for */
        } else {
            rc = advance(s, get32(rec + 12), rec + 16, len - 16, end);
        }
        if (rc < 0)
            return -1;
        finished += rc;
        memmove(s->in, s->in + 4 + len, s->have - 4 - len);
        s->have -= 4 + len;
    }
    return finished;
}

/* host:port (the first of a list) into sa; 0 or -1. */
static int parse_host(const char *hosts, struct sockaddr_in *sa)
{
    char host[64];
    int port;
    if (sscanf(hosts, "%63[^:]:%d", host, &port) != 2 || port < 1 || port > 65535)
        return -1;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

/* Turn the loop until `want` sessions have finished the current phase or
 * the deadline passes; 0, or -1 on an error or at the deadline. */
static int loop_until(int ep, struct session *ss, int want, long long deadline, long long end)
{
    struct epoll_event ev[256];
    int finished = 0;
    while (finished < want) {
        if (now_ns() > deadline)
            return -1;
        int n = epoll_wait(ep, ev, 256, 1000);
        if (n < 0 && errno != EINTR)
            return -1;
        for (int i = 0; i < n; i++) {
            int rc = on_readable(&ss[ev[i].data.u32], end);
            if (rc < 0) {
                fprintf(stderr, "bare loop: session %u failed (step %d)\n", ev[i].data.u32,
                        ss[ev[i].data.u32].step);
                return -1;
            }
            finished += rc;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc == 4 ? atoi(argv[3]) : 0;
    double seconds = argc == 4 ? atof(argv[2]) : 0;
    struct sockaddr_in sa;
    if (n < 1 || n > MAX_SESSIONS || seconds <= 0 || parse_host(argv[1], &sa) != 0) {
        fprintf(stderr, "usage: %s HOST:PORT[,...] SECONDS SESSIONS (1..%d)\n", argv[0],
                MAX_SESSIONS);
        return 2;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 16) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    struct session *ss = calloc((size_t)n, sizeof *ss);
    int ep = epoll_create1(0), status = ss && ep >= 0 ? 0 : 3;
    for (int i = 0; i < n && status == 0; i++) {
        struct session *s = &ss[i];
        snprintf(s->parent, sizeof s->parent, "/locklab/locklab-ceiling-%d", i);
        snprintf(s->id, sizeof s->id, "%08x%08x%08x%08x", (unsigned)rand(), (unsigned)i,
                 (unsigned)rand(), (unsigned)getpid());
        s->fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (s->fd < 0 || connect(s->fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
            setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
            epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev) != 0 || send_connect(s) != 0) {
            fprintf(stderr, "bare loop: session %d: %s\n", i, strerror(errno));
            status = 3;
        }
    }
    long long start = now_ns(), t = start;
    if (status == 0 && loop_until(ep, ss, n, start + SETUP_TIMEOUT_NS, 0) != 0)
        status = 3;
    if (status == 0) {
        start = now_ns();
        long long end = start + (long long)(seconds * 1e9);
        for (int i = 0; i < n && status == 0; i++) {
            ss[i].step = ROOT;
            if (send_create(&ss[i], "/locklab", 0) != 0)
                status = 1;
        }
        if (status == 0 && loop_until(ep, ss, n, end + SETUP_TIMEOUT_NS, end) != 0)
            status = 1;
        t = now_ns();
    }
    long long cycles = 0;
    for (int i = 0; i < n && ss; i++) {
        cycles += ss[i].cycles;
        struct out o;
        begin(&ss[i], &o, JUTE_OP_CLOSE); /* end the session now, not at its timeout */
        if (ss[i].fd > 0) {
            (void)send_out(&ss[i], &o);
            close(ss[i].fd);
        }
    }
    if (status == 0)
        printf("cycles=%lld elapsed_ns=%lld\n", cycles, t - start);
    else
        fprintf(stderr, "bare loop: %d sessions with %s did not complete\n", n, argv[1]);
    free(ss);
    if (ep >= 0)
        close(ep);
    return status;
}
