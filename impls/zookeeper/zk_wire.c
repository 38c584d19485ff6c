/*
 * zk_wire.c - one ZooKeeper session on the event loop, speaking the wire
 * protocol itself (zk_wire.h tells why and what; zk_jute.h the encoding).
 *
 * A session is a state (connecting, connected, expired), one socket at a
 * time, an output buffer written as the socket takes it, an input buffer
 * cut into frames, and a FIFO of the requests in flight (ZooKeeper
 * answers a session's requests in order, so a reply's xid must be the
 * head's). One timer does all the waiting: while connected it sends a
 * ping when nothing was sent for a third of the negotiated timeout and
 * declares the connection lost when nothing came for two thirds (as the C
 * client does); while connecting it bounds the handshake; after a loss it
 * starts the next attempt. A lost connection fails every request in
 * flight with ZCONNECTIONLOSS, tells the owner with a session event in the
 * connecting state and tries the next server with the same session id
 * and password and the last zxid seen; a connect reply with timeout 0
 * means the server expired the session meanwhile.
 */
#include "zk_wire.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "zk_jute.h"

#define ZKW_MAX_HOSTS 16
#define ZKW_PATH_MAX 1024
#define ZKW_FRAME_MAX (64u << 20) /* far above the server's jute.maxbuffer */

struct zkw_req {
    struct zkw_req *next;
    int32_t xid, op;
    zkw_done_fn done;
    void *arg;
};

struct zkw {
    struct ev_io io; /* the socket (fd -1 when none) */
    struct ev_timer timer;
    struct evloop *L;
    int state;
    bool handshake; /* the connect reply is awaited */
    struct sockaddr_storage addr[ZKW_MAX_HOSTS];
    socklen_t alen[ZKW_MAX_HOSTS];
    int naddr, next;   /* the servers; the one to try next */
    int fails;         /* attempts since the last connect */
    int timeout_ms;    /* asked for */
    int neg_ms;        /* negotiated */
    int64_t session;
    unsigned char passwd[JUTE_PASSWD_LEN];
    int64_t last_zxid;
    int32_t xid;
    struct zkw_req *head, *tail;
    struct zkw_req *spare; /* one answered request kept for the next (no malloc a request) */
    unsigned char *in, *out;
    size_t in_len, in_cap, out_len, out_off, out_cap;
    int64_t last_send, last_recv, attempt_at;
    zkw_event_fn on_event;
    void *ctx;
};

static void lose(struct zkw *w);

/* ------------------------------------------------------------ hosts */

/* "host:port[,host:port...]" into w->addr; 0 or -1 with err filled. */
static int parse_hosts(struct zkw *w, const char *hosts, struct lab_err *err)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", hosts);
    char *save = NULL;
    for (char *h = strtok_r(buf, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(h, ':');
        if (!colon || w->naddr == ZKW_MAX_HOSTS || strchr(colon, '/')) {
            lab_err_set(err, EINVAL, "zookeeper: cannot use the host list %s", hosts);
            return -1;
        }
        *colon = '\0';
        if (h[0] == '[' && colon[-1] == ']') {
            h++;
            colon[-1] = '\0';
        }
        struct addrinfo hint = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *ai;
        int e = getaddrinfo(h, colon + 1, &hint, &ai);
        if (e != 0) {
            lab_err_set(err, EINVAL, "zookeeper: host %s: %s", h, gai_strerror(e));
            return -1;
        }
        memcpy(&w->addr[w->naddr], ai->ai_addr, ai->ai_addrlen);
        w->alen[w->naddr++] = ai->ai_addrlen;
        freeaddrinfo(ai);
    }
    if (w->naddr == 0) {
        lab_err_set(err, EINVAL, "zookeeper: no ensemble given");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ sending */

/* Room for `more` bytes in the output buffer; -1 out of memory. */
static int out_room(struct zkw *w, size_t more)
{
    if (w->out_off > 0 && w->out_off == w->out_len)
        w->out_off = w->out_len = 0;
    if (w->out_len + more <= w->out_cap)
        return 0;
    size_t cap = w->out_cap ? w->out_cap : 512;
    while (cap < w->out_len + more)
        cap *= 2;
    unsigned char *b = realloc(w->out, cap);
    if (!b)
        return -1;
    w->out = b;
    w->out_cap = cap;
    return 0;
}

/* Write what the socket takes; the rest waits for EV_WRITE. */
static void flush(struct zkw *w)
{
    while (w->out_off < w->out_len) {
        ssize_t k = send(w->io.fd, w->out + w->out_off, w->out_len - w->out_off, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (k <= 0) {
            lose(w);
            return;
        }
        w->out_off += (size_t)k;
        w->last_send = lab_now_ns();
    }
    if (w->out_off == w->out_len)
        w->out_off = w->out_len = 0;
    unsigned want = EV_READ | (w->out_len ? EV_WRITE : 0);
    if (evloop_io(w->L, &w->io, want) != 0)
        lose(w);
}

/* ------------------------------------------------------------ connecting */

static void fail_all(struct zkw *w, int rc)
{
    struct zkw_req *q = w->head;
    w->head = w->tail = NULL;
    while (q) {
        struct zkw_req *next = q->next;
        struct zkw_result r = {.rc = rc, .path = ""};
        q->done(q->arg, &r);
        free(q);
        q = next;
    }
}

static void drop_socket(struct zkw *w)
{
    if (w->io.fd < 0)
        return;
    evloop_io(w->L, &w->io, 0);
    close(w->io.fd);
    w->io.fd = -1;
    w->in_len = w->out_len = w->out_off = 0;
    w->handshake = false;
}

/* Start an attempt with the next server: a non-blocking connect, the
 * connect request queued behind it. */
static void attempt(struct zkw *w)
{
    const struct sockaddr_storage *sa = &w->addr[w->next];
    socklen_t len = w->alen[w->next];
    w->next = (w->next + 1) % w->naddr;
    w->fails++;
    w->attempt_at = lab_now_ns();
    int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    w->io.fd = fd;
    w->handshake = true;
    if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
        (connect(fd, (const struct sockaddr *)sa, len) != 0 && errno != EINPROGRESS) ||
        out_room(w, 64) != 0) {
        lose(w);
        return;
    }
    size_t at = jute_begin(w->out, &w->out_len);
    jute_connect_body(w->out, &w->out_len, w->last_zxid, w->timeout_ms, w->session, w->passwd);
    jute_end(w->out, w->out_len, at);
    w->last_recv = w->last_send = lab_now_ns();
    if (evloop_io(w->L, &w->io, EV_READ | EV_WRITE) != 0) {
        lose(w);
        return;
    }
    evloop_timer_at(w->L, &w->timer, w->attempt_at + (int64_t)w->timeout_ms * 1000000);
}

/* The connection is gone: fail what is in flight, tell the owner once,
 * and try again (at once while servers remain untried in this round). */
static void lose(struct zkw *w)
{
    bool was_connected = w->state == ZKW_CONNECTED;
    drop_socket(w);
    if (w->state != ZKW_EXPIRED)
        w->state = ZKW_CONNECTING;
    fail_all(w, ZCONNECTIONLOSS);
    if (w->state == ZKW_EXPIRED)
        return;
    /* once every server failed, a pause of a 60th of the timeout, as the
     * C client's, so 10,000 sessions of a stopped ensemble do not spin */
    int64_t at = w->fails < w->naddr ? lab_now_ns()
                                     : w->attempt_at + (int64_t)w->timeout_ms * 1000000 / 60;
    if (w->fails >= w->naddr)
        w->fails = 0;
    evloop_timer_at(w->L, &w->timer, at);
    if (was_connected)
        w->on_event(w->ctx, ZKW_SESSION_EVENT, ZKW_CONNECTING, "");
}

/* The connect reply: the session is ours (again), or it expired. */
static void on_connected(struct zkw *w, struct jute_in *r)
{
    (void)jute_get32(r); /* protocol version */
    int32_t timeout = jute_get32(r);
    int64_t session = jute_get64(r);
    size_t plen;
    const unsigned char *pw = jute_get_bytes(r, &plen);
    if (r->bad) {
        lose(w);
        return;
    }
    w->handshake = false;
    if (timeout <= 0) {
        w->state = ZKW_EXPIRED;
        drop_socket(w);
        evloop_timer_cancel(w->L, &w->timer);
        w->on_event(w->ctx, ZKW_SESSION_EVENT, ZKW_EXPIRED, "");
        return;
    }
    w->neg_ms = timeout;
    w->session = session;
    memset(w->passwd, 0, sizeof w->passwd);
    memcpy(w->passwd, pw, plen < sizeof w->passwd ? plen : sizeof w->passwd);
    w->state = ZKW_CONNECTED;
    w->fails = 0;
    evloop_timer_at(w->L, &w->timer, lab_now_ns() + (int64_t)w->neg_ms * 1000000 / 3);
    w->on_event(w->ctx, ZKW_SESSION_EVENT, ZKW_CONNECTED, "");
}

/* ------------------------------------------------------------ replies */

/* A Stat: czxid, mzxid, ctime, mtime, version, cversion, aversion,
 * ephemeralOwner, ... (what follows the owner is not needed). */
static void read_stat(struct jute_in *r, struct zkw_result *res)
{
    res->czxid = jute_get64(r);
    for (int i = 0; i < 3; i++)
        (void)jute_get64(r);
    for (int i = 0; i < 3; i++)
        (void)jute_get32(r);
    res->owner = jute_get64(r);
}

/* A reply's body decoded for its request q, then q's callback. */
static void on_reply(struct zkw *w, struct zkw_req *q, int32_t err, struct jute_in *r)
{
    (void)w;
    struct zkw_result res = {.rc = err, .path = ""};
    char path[ZKW_PATH_MAX];
    char **names = NULL;
    _Alignas(char *) char few[512]; /* a short listing's names (pointers first) */
    if (err == ZOK) {
        size_t len;
        const unsigned char *s;
        switch (q->op) {
        case JUTE_OP_CREATE:
        case JUTE_OP_CREATE2:
            s = jute_get_bytes(r, &len);
            if (len >= sizeof path)
                len = sizeof path - 1;
            memcpy(path, s, len);
            path[len] = '\0';
            res.path = path;
            if (q->op == JUTE_OP_CREATE2)
                read_stat(r, &res);
            break;
        case JUTE_OP_GETDATA:
            (void)jute_get_bytes(r, &len); /* the data; its Stat follows */
            read_stat(r, &res);
            break;
        case JUTE_OP_EXISTS:
            read_stat(r, &res);
            break;
        case JUTE_OP_CHILDREN: {
            int32_t n = jute_get32(r);
            if (n < 0 || (size_t)n > r->left / 4) {
                r->bad = true;
                break;
            }
            /* one block: the pointers, then the names, each terminated
             * (the record's bytes, n length words aside, plus n ends); on
             * the stack when it fits, as an uncontended queue's one name */
            size_t table = ((size_t)n + 1) * sizeof *names;
            size_t need = table + r->left - 4 * (size_t)n + (size_t)n;
            names = need <= sizeof few ? (char **)few : malloc(need);
            char *at = (char *)names + table;
            for (int i = 0; names && i < n && !r->bad; i++) {
                s = jute_get_bytes(r, &len);
                if (r->bad)
                    break;
                names[i] = at;
                memcpy(at, s, len);
                at[len] = '\0';
                at += len + 1;
                res.n = i + 1;
            }
            if (!names)
                res.rc = ZSYSTEMERROR;
            else
                names[res.n] = NULL;
            res.names = names;
            break;
        }
        default:
            break;
        }
        if (r->bad)
            res.rc = ZMARSHALLINGERROR;
    }
    q->done(q->arg, &res);
    if (names != (char **)few)
        free(names);
}

/* One whole frame; false when the connection must be dropped. */
static bool on_frame(struct zkw *w, const unsigned char *p, size_t len)
{
    struct jute_in r = {.p = p, .left = len};
    if (w->handshake) {
        on_connected(w, &r);
        return true; /* on_connected dropped the socket itself if it must */
    }
    int32_t xid = jute_get32(&r);
    int64_t zxid = jute_get64(&r);
    int32_t err = jute_get32(&r);
    if (r.bad)
        return false;
    if (zxid > w->last_zxid)
        w->last_zxid = zxid;
    if (xid == JUTE_XID_PING)
        return true;
    if (xid == JUTE_XID_WATCH) {
        int32_t type = jute_get32(&r), state = jute_get32(&r);
        size_t plen;
        const unsigned char *s = jute_get_bytes(&r, &plen);
        char path[ZKW_PATH_MAX];
        if (r.bad || plen >= sizeof path)
            return false;
        memcpy(path, s, plen);
        path[plen] = '\0';
        w->on_event(w->ctx, type, state, path);
        return true;
    }
    struct zkw_req *q = w->head;
    if (!q || q->xid != xid)
        return false; /* out of order: not a ZooKeeper we understand */
    w->head = q->next;
    if (!w->head)
        w->tail = NULL;
    on_reply(w, q, err, &r);
    if (w->spare)
        free(q);
    else
        w->spare = q;
    return true;
}

static void on_readable(struct zkw *w)
{
    for (;;) {
        if (w->in_cap - w->in_len < 512) { /* small to start: 10,000 sessions a process */
            size_t cap = w->in_cap ? 2 * w->in_cap : 1024;
            unsigned char *b = realloc(w->in, cap);
            if (!b) {
                lose(w);
                return;
            }
            w->in = b;
            w->in_cap = cap;
        }
        ssize_t k = recv(w->io.fd, w->in + w->in_len, w->in_cap - w->in_len, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (k <= 0) {
            lose(w);
            return;
        }
        w->in_len += (size_t)k;
        w->last_recv = lab_now_ns();
        if (w->in_len < w->in_cap)
            break; /* the socket is drained */
    }
    size_t off = 0;
    int fd = w->io.fd;
    while (w->in_len - off >= 4 && w->io.fd == fd) {
        uint32_t len = jute_frame_len(w->in + off);
        if (len > ZKW_FRAME_MAX) {
            lose(w);
            return;
        }
        if (w->in_len - off - 4 < len)
            break;
        if (!on_frame(w, w->in + off + 4, len)) {
            lose(w);
            return;
        }
        off += 4 + len;
    }
    if (w->io.fd != fd)
        return; /* dropped meanwhile (expired): its buffer is gone */
    memmove(w->in, w->in + off, w->in_len - off);
    w->in_len -= off;
    if (w->in_len == 0 && w->in_cap > 4096) { /* a burst (a long listing) is over: give */
        free(w->in);                          /* it back, 10,000 sessions may have had one */
        w->in = NULL;
        w->in_cap = 0;
    }
}

static void on_io(struct ev_io *io, unsigned events)
{
    struct zkw *w = (struct zkw *)io;
    if (events & EV_WRITE) {
        int e = 0;
        socklen_t el = sizeof e;
        if (w->handshake && (getsockopt(io->fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0 || e)) {
            lose(w);
            return;
        }
        flush(w);
        if (w->io.fd < 0)
            return;
    }
    if (events & EV_READ)
        on_readable(w);
}

/* ------------------------------------------------------------ timer */

static void on_timer(struct ev_timer *t)
{
    struct zkw *w = (struct zkw *)((char *)t - offsetof(struct zkw, timer));
    int64_t now = lab_now_ns();
    if (w->state == ZKW_EXPIRED)
        return;
    if (w->io.fd < 0) {
        attempt(w);
        return;
    }
    if (w->handshake) {
        if (now >= w->attempt_at + (int64_t)w->timeout_ms * 1000000)
            lose(w);
        else
            evloop_timer_at(w->L, t, w->attempt_at + (int64_t)w->timeout_ms * 1000000);
        return;
    }
    int64_t third = (int64_t)w->neg_ms * 1000000 / 3;
    if (now >= w->last_recv + 2 * third) {
        on_readable(w); /* a reply may wait unread behind a busy loop's other events */
        if (w->io.fd < 0 || w->state == ZKW_EXPIRED)
            return;
    }
    if (now >= w->last_recv + 2 * third) {
        lose(w); /* nothing came, not even a ping's reply */
        return;
    }
    if (now >= w->last_send + third && out_room(w, 16) == 0) {
        size_t at = jute_begin(w->out, &w->out_len);
        jute_header(w->out, &w->out_len, JUTE_XID_PING, JUTE_OP_PING);
        jute_end(w->out, w->out_len, at);
        w->last_send = now;
        flush(w);
        if (w->io.fd < 0)
            return;
    }
    int64_t next = w->last_send + third;
    if (w->last_recv + 2 * third < next)
        next = w->last_recv + 2 * third;
    evloop_timer_at(w->L, t, next);
}

/* ------------------------------------------------------------ the session */

struct zkw *zkw_open(struct evloop *L, const char *hosts, int timeout_ms, zkw_event_fn on_event,
                     void *ctx, struct lab_err *err)
{
    struct zkw *w = calloc(1, sizeof *w);
    if (!w) {
        lab_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    if (parse_hosts(w, hosts, err) != 0) {
        free(w);
        return NULL;
    }
    w->L = L;
    w->io.fd = -1;
    w->io.ready = on_io;
    evloop_timer_init(&w->timer, on_timer);
    w->state = ZKW_CONNECTING;
    w->timeout_ms = timeout_ms;
    w->neg_ms = timeout_ms;
    w->next = rand() % w->naddr; /* spread the sessions over the ensemble */
    w->on_event = on_event;
    w->ctx = ctx;
    evloop_timer_at(L, &w->timer, lab_now_ns()); /* the first attempt, from the loop */
    return w;
}

static void zkw_free(struct zkw *w, bool goodbye)
{
    if (!w)
        return;
    if (goodbye && w->state == ZKW_CONNECTED && w->io.fd >= 0 && out_room(w, 16) == 0) {
        size_t at = jute_begin(w->out, &w->out_len);
        jute_header(w->out, &w->out_len, ++w->xid, JUTE_OP_CLOSE);
        jute_end(w->out, w->out_len, at);
        (void)send(w->io.fd, w->out + w->out_off, w->out_len - w->out_off, MSG_NOSIGNAL);
        /* read what has come, so the close is a FIN, not a reset that could
         * throw the request away before the server reads it */
        unsigned char sink[4096];
        while (recv(w->io.fd, sink, sizeof sink, MSG_DONTWAIT) > 0)
            ;
    }
    drop_socket(w);
    evloop_timer_cancel(w->L, &w->timer);
    fail_all(w, ZCLOSING);
    free(w->spare);
    free(w->in);
    free(w->out);
    free(w);
}

void zkw_close(struct zkw *w) { zkw_free(w, true); }
void zkw_abandon(struct zkw *w) { zkw_free(w, false); }

int zkw_state(const struct zkw *w) { return w->state; }
int64_t zkw_session_id(const struct zkw *w) { return w->session; }

/* ------------------------------------------------------------ requests */

/* Begin a request of op on path: checks, room, header; the frame's start
 * in *at, or the code why it cannot be sent. */
static int req_begin(struct zkw *w, int32_t op, const char *path, size_t *at)
{
    if (w->state == ZKW_EXPIRED)
        return ZINVALIDSTATE;
    if (w->state != ZKW_CONNECTED || w->io.fd < 0)
        return ZCONNECTIONLOSS;
    if (strlen(path) >= ZKW_PATH_MAX)
        return ZBADARGUMENTS;
    if (out_room(w, jute_room(path)) != 0)
        return ZSYSTEMERROR;
    *at = jute_begin(w->out, &w->out_len);
    jute_header(w->out, &w->out_len, ++w->xid, op);
    return ZOK;
}

/* End the request begun at `at`: queue it for its reply and send it. */
static int req_end(struct zkw *w, size_t at, int32_t op, zkw_done_fn done, void *arg)
{
    struct zkw_req *q = w->spare ? w->spare : malloc(sizeof *q);
    w->spare = NULL;
    if (!q) {
        w->out_len = at; /* take it back */
        return ZSYSTEMERROR;
    }
    *q = (struct zkw_req){.xid = w->xid, .op = op, .done = done, .arg = arg};
    if (w->tail)
        w->tail->next = q;
    else
        w->head = q;
    w->tail = q;
    jute_end(w->out, w->out_len, at);
    if (!(w->io.armed & EV_WRITE))
        flush(w); /* else the socket is full: EV_WRITE sends it */
    return ZOK;
}

int zkw_create(struct zkw *w, const char *path, int flags, bool want_stat, zkw_done_fn done,
               void *arg)
{
    int32_t op = want_stat ? JUTE_OP_CREATE2 : JUTE_OP_CREATE;
    size_t at;
    int rc = req_begin(w, op, path, &at);
    if (rc != ZOK)
        return rc;
    jute_create_body(w->out, &w->out_len, path, flags);
    return req_end(w, at, op, done, arg);
}

int zkw_delete(struct zkw *w, const char *path, zkw_done_fn done, void *arg)
{
    size_t at;
    int rc = req_begin(w, JUTE_OP_DELETE, path, &at);
    if (rc != ZOK)
        return rc;
    jute_put_str(w->out, &w->out_len, path);
    jute_put32(w->out, &w->out_len, -1); /* any version */
    return req_end(w, at, JUTE_OP_DELETE, done, arg);
}

int zkw_remove_watches(struct zkw *w, const char *path, int type, zkw_done_fn done, void *arg)
{
    size_t at;
    int rc = req_begin(w, JUTE_OP_REMOVE_WATCHES, path, &at);
    if (rc != ZOK)
        return rc;
    jute_put_str(w->out, &w->out_len, path);
    jute_put32(w->out, &w->out_len, type);
    return req_end(w, at, JUTE_OP_REMOVE_WATCHES, done, arg);
}

/* A request whose body is a path and a watch flag. */
static int path_watch(struct zkw *w, int32_t op, const char *path, bool watch, zkw_done_fn done,
                      void *arg)
{
    size_t at;
    int rc = req_begin(w, op, path, &at);
    if (rc != ZOK)
        return rc;
    jute_put_str(w->out, &w->out_len, path);
    w->out[w->out_len++] = watch ? 1 : 0;
    return req_end(w, at, op, done, arg);
}

int zkw_children(struct zkw *w, const char *path, bool watch, zkw_done_fn done, void *arg)
{
    return path_watch(w, JUTE_OP_CHILDREN, path, watch, done, arg);
}

int zkw_exists(struct zkw *w, const char *path, bool watch, zkw_done_fn done, void *arg)
{
    return path_watch(w, JUTE_OP_EXISTS, path, watch, done, arg);
}

int zkw_get(struct zkw *w, const char *path, bool watch, zkw_done_fn done, void *arg)
{
    return path_watch(w, JUTE_OP_GETDATA, path, watch, done, arg);
}
