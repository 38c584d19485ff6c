/*
 * redis_common.h - what the single-instance Redis lock designs share.
 *
 * They all hold one blocking hiredis connection to the lock store, a unique
 * token for this client and, for the script-based ones, the SHA1 of a
 * loaded script; they differ only in the commands they send. Keeping the
 * connection, token and reply checking here leaves each design's file with
 * nothing but its own protocol.
 */
#ifndef LOCKLAB_REDIS_COMMON_H
#define LOCKLAB_REDIS_COMMON_H

#include <hiredis/hiredis.h>

#include "lock.h"
#include "poll.h"

/* The client state of every simple Redis design. */
struct lock_client {
    redisContext *rc;           /* connection to the lock store */
    const struct lock_env *env; /* harness settings and counters */
    char token[33];             /* 128 random bits in hex: this client's identity */
    char sha[41];               /* SHA1 of the design's script, when it has one */
    const char *script;         /* the script's source, to reload after NOSCRIPT */
    lock_try_fn attempt;        /* the design's single acquire attempt (poll.h) */
};

/* Connect to env's Redis with a random token; script (may be NULL) is loaded
 * with SCRIPT LOAD; attempt is the design's acquire attempt for
 * redis_poll_acquire (may be NULL for designs with their own acquire). Returns 0 or -1 with err filled; *out is NULL on error. */
int redis_lock_open(struct lock_client **out, const struct lock_env *env, const char *script,
                    lock_try_fn attempt, struct lab_err *err);
void redis_lock_close(struct lock_client *c);

/* Send one command (printf-style, hiredis format) and count the round trip.
 * Returns the reply, or NULL with err filled when the connection failed or
 * Redis answered with an error. The caller frees the reply. */
redisReply *redis_cmd(struct lock_client *c, struct lab_err *err, const char *fmt, ...);

/* EVALSHA the loaded script on key with the token as ARGV[1] and the TTL in
 * milliseconds as ARGV[2], reloading it once after NOSCRIPT. Returns the
 * integer result (nil counts as 0), or -1 with err filled. */
long long redis_script_call(struct lock_client *c, const char *key, struct lab_err *err);

/* SET key <value> NX PX ttl: 1 granted, 0 taken, -1 error. */
int redis_set_nx_px(struct lock_client *c, const char *key, const char *value, struct lab_err *err);

/* DEL key: 1 when a key was deleted, 0 when there was none, -1 error. */
int redis_del(struct lock_client *c, const char *key, struct lab_err *err);

/* The acquire hook of every polling Redis design: c->attempt until granted
 * or the wait budget is spent (impls/poll.h). */
enum lock_status redis_poll_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err);

/* The release hook of the designs that release with a plain DEL: OK when a
 * key was deleted (whoever held it), NOT_OWNER when there was none. */
enum release_status redis_release_del(struct lock_client *c, const char *key,
                                      struct lab_err *err);

/* TTL in whole milliseconds, at least 1. */
long long redis_ttl_ms(const struct lock_client *c);

#endif
