/*
 * zk_jute.h - the few pieces of ZooKeeper's wire encoding (jute records)
 * that the lab's own ZooKeeper transport (zk_wire.c) and the bare ceiling
 * loop (bench/bare_zk_many.c) both write and read: big-endian integers,
 * length-prefixed strings, the request header, a create's body with the
 * open ACL, the framing (a record is preceded by its length), and the name
 * an acquire gives its ephemeral-sequential node (so that the bare loop
 * asks for the very paths the lab's recipe does).
 *
 * Header-only and free of the harness, so the bare loop links nothing of
 * locklab. The writers append at b + *n and trust the caller to have made
 * room (jute_room says how much a request needs); the readers check
 * bounds and mark the reader bad instead of reading past the end.
 */
#ifndef LOCKLAB_ZK_JUTE_H
#define LOCKLAB_ZK_JUTE_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define JUTE_OP_CREATE 1
#define JUTE_OP_DELETE 2
#define JUTE_OP_EXISTS 3
#define JUTE_OP_GETDATA 4
#define JUTE_OP_CHILDREN 8
#define JUTE_OP_PING 11
#define JUTE_OP_CREATE2 15
#define JUTE_OP_REMOVE_WATCHES 18
#define JUTE_OP_CLOSE (-11)
#define JUTE_XID_WATCH (-1) /* a watch notification */
#define JUTE_XID_PING (-2)
#define JUTE_PERMS_ALL 0x1f
#define JUTE_PASSWD_LEN 16
#define JUTE_STAT_LEN 68 /* 6 longs and 5 ints */

/* Bytes a request with one path (and the open ACL) needs at most. */
static inline size_t jute_room(const char *path) { return 96 + strlen(path); }

static inline void jute_put32(unsigned char *b, size_t *n, int32_t v)
{
    uint32_t be = htonl((uint32_t)v);
    memcpy(b + *n, &be, 4);
    *n += 4;
}

static inline void jute_put64(unsigned char *b, size_t *n, int64_t v)
{
    jute_put32(b, n, (int32_t)((uint64_t)v >> 32));
    jute_put32(b, n, (int32_t)(uint32_t)v);
}

static inline void jute_put_bytes(unsigned char *b, size_t *n, const void *p, size_t len)
{
    jute_put32(b, n, (int32_t)len);
    memcpy(b + *n, p, len);
    *n += len;
}

static inline void jute_put_str(unsigned char *b, size_t *n, const char *s)
{
    jute_put_bytes(b, n, s, strlen(s));
}

/* Start a frame at b + *n: its length slot, to be filled by jute_end. */
static inline size_t jute_begin(unsigned char *b, size_t *n)
{
    size_t at = *n;
    *n += 4;
    (void)b;
    return at;
}

/* Fill the length slot of the frame begun at `at`. */
static inline void jute_end(unsigned char *b, size_t n, size_t at)
{
    uint32_t be = htonl((uint32_t)(n - at - 4));
    memcpy(b + at, &be, 4);
}

/* A request header: its xid and operation. */
static inline void jute_header(unsigned char *b, size_t *n, int32_t xid, int32_t op)
{
    jute_put32(b, n, xid);
    jute_put32(b, n, op);
}

/* A create's body: path, no data, the open ACL (world:anyone, all), flags. */
static inline void jute_create_body(unsigned char *b, size_t *n, const char *path, int32_t flags)
{
    jute_put_str(b, n, path);
    jute_put32(b, n, 0); /* no data */
    jute_put32(b, n, 1); /* one ACL */
    jute_put32(b, n, JUTE_PERMS_ALL);
    jute_put_str(b, n, "world");
    jute_put_str(b, n, "anyone");
    jute_put32(b, n, flags);
}

/* The connect request's body: protocol version 0, the last zxid seen, the
 * timeout asked for, the session to resume (0: a new one) and its
 * password, and the read-only flag (false). */
static inline void jute_connect_body(unsigned char *b, size_t *n, int64_t last_zxid,
                                     int32_t timeout_ms, int64_t session,
                                     const unsigned char passwd[JUTE_PASSWD_LEN])
{
    jute_put32(b, n, 0);
    jute_put64(b, n, last_zxid);
    jute_put32(b, n, timeout_ms);
    jute_put64(b, n, session);
    jute_put_bytes(b, n, passwd, JUTE_PASSWD_LEN);
    b[(*n)++] = 0;
}

/* A reader over one record. */
struct jute_in {
    const unsigned char *p;
    size_t left;
    bool bad; /* read past the end */
};

static inline int32_t jute_get32(struct jute_in *r)
{
    if (r->left < 4) {
        r->bad = true;
        r->left = 0;
        return 0;
    }
    uint32_t be;
    memcpy(&be, r->p, 4);
    r->p += 4;
    r->left -= 4;
    return (int32_t)ntohl(be);
}

static inline int64_t jute_get64(struct jute_in *r)
{
    uint64_t hi = (uint32_t)jute_get32(r);
    return (int64_t)(hi << 32 | (uint32_t)jute_get32(r));
}

/* A string or buffer: its bytes in place (not terminated), *len its
 * length (0 for jute's null, length -1). */
static inline const unsigned char *jute_get_bytes(struct jute_in *r, size_t *len)
{
    int32_t l = jute_get32(r);
    *len = 0;
    if (l <= 0)
        return r->p;
    if ((size_t)l > r->left) {
        r->bad = true;
        r->left = 0;
        return r->p;
    }
    const unsigned char *s = r->p;
    r->p += l;
    r->left -= (size_t)l;
    *len = (size_t)l;
    return s;
}

/* The big-endian length at p (a frame's first four bytes). */
static inline uint32_t jute_frame_len(const unsigned char *p)
{
    uint32_t be;
    memcpy(&be, p, 4);
    return ntohl(be);
}

/* The name of an acquire's node before the server's sequence suffix,
 * lock-<id>-<n>- (the client's identity, at most 32 characters, and the
 * attempt's count), written at dst (5 + 32 + 1 + 20 + 2 bytes fit); its
 * length. By hand, not by snprintf: it runs every cycle. */
static inline size_t jute_attempt_name(char *dst, const char *id, unsigned long long n)
{
    char digits[24];
    int k = (int)sizeof digits;
    do
        digits[--k] = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    size_t len = 5;
    memcpy(dst, "lock-", 5);
    for (int i = 0; i < 32 && id[i]; i++)
        dst[len++] = id[i];
    dst[len++] = '-';
    memcpy(dst + len, digits + k, sizeof digits - (size_t)k);
    len += sizeof digits - (size_t)k;
    dst[len++] = '-';
    dst[len] = '\0';
    return len;
}

#endif
