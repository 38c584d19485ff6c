/*
 * redis_common.h - what the single-instance Redis lock designs share.
 *
 * They all hold one blocking hiredis connection to the lock store, a unique
 * token for this client, and some Lua scripts (loaded once, called with
 * EVALSHA); those that renew also hold a watchdog thread with a connection
 * of its own, and the reentrant ones a hold count. They differ only in the
 * commands they send. Keeping connection, token, scripts, watchdog and
 * reply checking here leaves each design's file with nothing but its own
 * protocol.
 */
#ifndef LOCKLAB_REDIS_COMMON_H
#define LOCKLAB_REDIS_COMMON_H

#include <hiredis/hiredis.h>

#include "lock.h"
#include "lock_poll.h"
#include "watchdog.h"

/* Connect and command timeout, in either mode: long enough for a loaded
 * 2-core machine, short enough that a dead lock store ends a client's loop. */
#define REDIS_TIMEOUT_MS 10000

struct redis_sm;

/* A Lua script and, once loaded, its SHA1. */
struct redis_script {
    const char *src; /* source; NULL when the design does not use this slot */
    char sha[41];    /* SHA1 from SCRIPT LOAD */
};

/* The client state of every single-instance Redis design. */
struct lock_client {
    redisContext *rc;              /* connection to the lock store */
    const struct lock_env *env;    /* harness settings and counters */
    char token[64];                /* this client's identity (128 random bits in hex, or more) */
    lock_try_fn attempt;           /* the design's single acquire attempt (lock_poll.h) */
    struct redis_script acquire;   /* scripts, as the design needs them */
    struct redis_script release;
    struct redis_script renew;     /* run by the watchdog on wd_rc */
    redisContext *wd_rc;           /* the watchdog thread's own connection */
    struct watchdog *wd;           /* renewal thread, NULL for designs without one */
    int holds;                     /* reentrant designs: nested holds of held_key */
    char held_key[256];
    void *ext;                     /* design-specific state (freed by the design) */
    unsigned reconnects;           /* times rc was replaced by a new connection */
    struct redis_sm *sm;           /* the designs of redis_machine.h: their state
                                      machine (either driver), else NULL */
    struct redis_sm *renewal;      /* its renewals' machine (watchdog thread), or NULL */
    struct redis_async *as;        /* in a client group: the group driver's side
                                      (redis_drive_group.c; rc is NULL then), else NULL */
};

/* Connect to env's Redis with a random token. attempt is the design's
 * acquire attempt for redis_poll_acquire (NULL for designs with their own
 * acquire). Scripts are loaded with redis_script_load afterwards.
 * Returns 0 or -1 with err filled; *out is NULL on error. */
int redis_lock_open(struct lock_client **out, const struct lock_env *env, lock_try_fn attempt,
                    struct lab_err *err);

/* Stop the watchdog, close both connections, free c. */
void redis_lock_close(struct lock_client *c);

/* Make c->rc usable: a context that failed is replaced by a new connection
 * (redis_cmd and redis_script_call do this themselves). 0 or -1. */
int redis_conn_ready(struct lock_client *c, struct lab_err *err);

/* A connection to the design's lock store (the first of env's servers),
 * with connect and command timeouts of timeout_ms; NULL with err filled.
 * what names it in messages ("Redis", "Redis (pub/sub)"). */
redisContext *redis_store_open(const char *what, const struct lock_env *env, int timeout_ms,
                               struct lab_err *err);

/* The same for the watchdog thread's c->wd_rc (call it on that thread). */
int redis_watchdog_conn_ready(struct lock_client *c, struct lab_err *err);

/* Send one command (printf-style, hiredis format) and count the round trip;
 * when the connection breaks under it (a server killed, a master demoted)
 * it is sent once more on a new connection. Returns the reply, or NULL with err filled when the connection failed or
 * Redis answered with an error. The caller frees the reply. */
redisReply *redis_cmd(struct lock_client *c, struct lab_err *err, const char *fmt, ...);

/* SCRIPT LOAD s->src on rc into s->sha. 0 or -1 with err filled. */
int redis_script_load(redisContext *rc, struct redis_script *s, struct lab_err *err);

/* EVALSHA s with the given arguments (keys first, nkeys of them) on rc,
 * reloading the script once after NOSCRIPT; counts a round trip in stats
 * when stats is not NULL. Returns the reply or NULL with err filled. */
redisReply *redis_script_argv(redisContext *rc, struct lock_stats *stats, struct redis_script *s,
                              int nkeys, int argc, const char **argv, struct lab_err *err);

/* redis_script_argv on the client's connection, replaced first when it
 * failed, and sent once more on a new connection when the connection broke
 * under it (as redis_cmd does). */
redisReply *redis_client_script(struct lock_client *c, struct redis_script *s, int nkeys,
                                int argc, const char **argv, struct lab_err *err);

/* EVALSHA s on the client's connection with KEYS[1] = key, ARGV[1] = token,
 * ARGV[2] = TTL in ms. Returns the integer result (nil counts as 0), or -1
 * with err filled. */
long long redis_script_call(struct lock_client *c, struct redis_script *s, const char *key,
                            struct lab_err *err);

/* Open the watchdog's connection, load c->renew.src on it and start a
 * watchdog that calls it (KEYS[1] key, ARGV[1] token, ARGV[2] ttl ms; 1 when
 * extended) every lease_ns/3, over a new connection after a failure
 * (watchdog.h). 0 or -1 with err filled. */
int redis_watchdog_start(struct lock_client *c, int64_t lease_ns, struct lab_err *err);

/* SET key <value> NX PX ttl: 1 granted, 0 taken, -1 error. */
int redis_set_nx_px(struct lock_client *c, const char *key, const char *value, struct lab_err *err);

/* DEL key: 1 when a key was deleted, 0 when there was none, -1 error. */
int redis_del(struct lock_client *c, const char *key, struct lab_err *err);

/* The acquire hook of every polling Redis design: c->attempt until granted
 * or the wait budget is spent (impls/lock_poll.h). */
enum lock_status redis_poll_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                    struct lab_err *err);

/* The release hook of the designs that release with a plain DEL: OK when a
 * key was deleted (whoever held it), NOT_OWNER when there was none. */
enum release_status redis_release_del(struct lock_client *c, const char *key,
                                      struct lab_err *err);

/* Release by c->release (a compare-and-delete script): 1 -> OK, 0 -> NOT_OWNER. */
enum release_status redis_release_script(struct lock_client *c, const char *key,
                                         struct lab_err *err);

/* The Lua scripts several designs share (KEYS[1] key, ARGV[1] token, ARGV[2] ttl ms). */
extern const char redis_compare_and_delete_lua[]; /* del if ours: 1 deleted, 0 not ours */
extern const char redis_compare_and_pexpire_lua[]; /* pexpire if ours: 1 extended, 0 not */
/* KEYS[1] lock, KEYS[2] its fence counter; ARGV[1] token, ARGV[2] ttl ms.
 * The new counter value when granted, 0 when the lock is taken. */
extern const char redis_fenced_set_nx_px_lua[];

/* redis-watchdog's hooks (redis_watchdog.c), which redis-reentrant builds on. */
int redis_watchdog_open(struct lock_client **out, const struct lock_env *env, struct lab_err *err);
enum lock_status redis_watchdog_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                        struct lab_err *err);
enum release_status redis_watchdog_release(struct lock_client *c, const char *key,
                                           struct lab_err *err);

/* Fencing (lock_env.fencing): the suffix of the counter key next to each
 * lock ("<key>:fence") whose INCR, in the granting script, is the token. */
#define REDIS_FENCE_SUFFIX ":fence"

/* The name of key's fence counter into out (len bytes); -1 with err filled
 * when it does not fit. */
int redis_fence_key(char *out, size_t len, const char *key, struct lab_err *err);

/* For the SET NX PX designs (redis-lua, redis-watchdog, redis-reentrant):
 * with env->fencing, load a script that does SET NX PX and, when it
 * granted, INCR of the fence counter in the same atomic step, and make it
 * c->attempt; the token lands in env->stats->fence_token. Without fencing
 * nothing changes. 0 or -1 with err filled. */
int redis_fencing_setup(struct lock_client *c, struct lab_err *err);

/* TTL in whole milliseconds, at least 1. */
long long redis_ttl_ms(const struct lock_client *c);

#endif
