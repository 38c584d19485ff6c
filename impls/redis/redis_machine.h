/*
 * redis_machine.h - the single-instance Redis designs as one state
 * machine without I/O: redis-lua (fenced or not), redis-set-del,
 * redis-setnx-expire, redis-check-then-set, redis-get-del, redis-wait,
 * redis-watchdog, redis-reentrant and redis-script.
 *
 * What these designs send and what each reply means is decided here, once;
 * the two drivers around the machine only move bytes: the per-process one
 * on a blocking hiredis connection (redis_drive_block.c), the client
 * groups' one on the event loop (redis_drive_group.c). Both find the store
 * the same way (the sentinels' master when the topology has sentinels) and
 * both feed the machine the same events, so a design answers the same
 * reply the same way whichever mode runs it. tests/test_redis_machine.c
 * feeds it scripted replies, with no server.
 *
 * The machine is driven by calls that each return the next thing to do
 * (enum redis_sm_act); the driver does it and feeds the result back:
 *
 *   act = redis_sm_acquire(m, key, wait, now)
 *   SEND       send m->argv[0..argc) on the connection; then
 *              redis_sm_reply(m, &reply, now), or redis_sm_lost(m, why, now)
 *              when no reply came (the connection broke or timed out)
 *   RECONNECT  drop the connection and open a new one to the store; then
 *              redis_sm_reconnected(m, ok, err, now)
 *   SLEEP      nothing to do before m->wake_at; then redis_sm_timer(m, now)
 *   FAILPOINT  hit m->fp (it may stall or stop the client); then
 *              redis_sm_resume(m, now)
 *   DONE       the operation ended: m->open_rc, m->status, m->release or
 *              m->renewed, with m->err
 *
 * Before doing an act the driver looks at m->watch: ARM (a grant the
 * watchdog must keep: renew m->key from now) or DISARM (the release is
 * about to go: stop renewing), and clears it. A renewal is an operation of
 * a second machine made by redis_sm_init_renewal, on a connection of its
 * own (the blocking driver's watchdog thread, the group driver's
 * per-client timer); its schedule is watchdog.h's.
 *
 * Decisions, each taken from what the libraries people use do:
 * - one command's way (a resend after a loss, after -READONLY or
 *   -NOREPLICAS on the master found anew, a reload after -NOSCRIPT, any
 *   other error a failure) is the lane's, redis_lane.h, as for Redisson;
 * - redis-wait: WAIT counts the writes of its own connection, so a WAIT
 *   whose connection was lost says nothing of the SET: it is not sent
 *   again, the grant counts as unreplicated and is given back (the
 *   blocking form resent it and then ignored its answer); an error from
 *   WAIT gives the grant back and fails the attempt;
 * - the give-back of an unreplicated grant (the compare-and-delete) is
 *   best effort: its failure leaves the attempt's outcome as it was;
 * - a renewal (the compare-and-pexpire, or redis-script's renew) answers
 *   1 extended or 0 no longer ours, read here once for both modes; it is
 *   resent once on a new connection like every command, and its failures
 *   are retried on watchdog.h's schedule, as Redisson's watchdog does;
 * - redis-reentrant's nested acquire and release cost no round trip (the
 *   hold count is local, as the seeds' reentrant Jedis lock keeps it).
 */
#ifndef LOCKLAB_REDIS_MACHINE_H
#define LOCKLAB_REDIS_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "failpoint.h"
#include "lock.h"
#include "redis_lane.h"

enum redis_sm_kind {
    REDIS_SM_LUA,           /* SET key token NX PX (fenced: the granting script);
                               release by the compare-and-delete script */
    REDIS_SM_SET_DEL,       /* SET key "locked" NX PX; release by DEL */
    REDIS_SM_SETNX_EXPIRE,  /* SETNX key token, then PEXPIRE; release by DEL */
    REDIS_SM_CHECK_THEN_SET,/* EXISTS, then SET key token, then PEXPIRE; DEL */
    REDIS_SM_GET_DEL,       /* SET key token NX PX; release by GET, then DEL */
    REDIS_SM_WAIT,          /* redis-lua's SET, then WAIT for replicas */
    REDIS_SM_WATCHDOG,      /* redis-lua plus a renewal while held */
    REDIS_SM_SCRIPT         /* the scenario's acquire/release/renew scripts */
};

enum redis_sm_act {
    REDIS_SM_SEND,      /* send argv; feed the reply or the loss */
    REDIS_SM_RECONNECT, /* a new connection to the store; feed redis_sm_reconnected */
    REDIS_SM_SLEEP,     /* wait until wake_at; feed redis_sm_timer */
    REDIS_SM_FAILPOINT, /* hit fp; feed redis_sm_resume */
    REDIS_SM_DONE       /* the operation ended */
};

/* A reply as the Redis machines read it (the links convert hiredis's). */
enum redis_sm_type { RSM_STATUS, RSM_INTEGER, RSM_STRING, RSM_NIL, RSM_ERROR, RSM_OTHER };
struct redis_sm_reply {
    enum redis_sm_type type;
    long long integer; /* RSM_INTEGER */
    const char *str;   /* RSM_STATUS, RSM_STRING, RSM_ERROR (NUL-terminated) */
    size_t len;
    bool pair;         /* RSM_OTHER: an array of two integers (a fenced grant's answer) */
    long long first, second;
};

struct redis_sm;

/* What a design is, for the machine. */
struct redis_sm_design {
    enum redis_sm_kind kind;
    const char *name;     /* the design's name, for its failpoints */
    bool reentrant;       /* a local hold count (REDIS_SM_WATCHDOG) */
    /* its own settings into m (env->options: the design's struct), or NULL */
    void (*setup)(struct redis_sm *m);
};

/* The scripts a design may call, loaded by its open. */
enum redis_sm_script { RSM_SC_RELEASE, RSM_SC_ACQUIRE, RSM_SC_RENEW, RSM_SCRIPTS };

enum redis_sm_watch { RSM_WATCH_NONE, RSM_WATCH_ARM, RSM_WATCH_DISARM };

enum redis_sm_step {
    RSM_IDLE,
    RSM_PING,           /* the open of a design with no script: the store answers */
    RSM_LOAD,           /* SCRIPT LOAD of script[loading] */
    RSM_SLOW_PING,      /* test-only: an attempt's round trip twice (test_slow.h) */
    RSM_EVAL_RENEW,     /* EVALSHA of the renew script (no round trip: a renewal) */
    /* the steps from here count as round trips */
    RSM_SET,            /* SET key value NX PX ttl */
    RSM_EVAL_ACQUIRE,   /* EVALSHA of the acquire script (fenced grant, or the user's) */
    RSM_SETNX,          /* SETNX key token */
    RSM_EXISTS,         /* EXISTS key (check-then-set) */
    RSM_SET_PLAIN,      /* SET key token, after an EXISTS that saw none */
    RSM_PEXPIRE,        /* PEXPIRE key ttl, after a SETNX that won or a SET */
    RSM_WAIT,           /* WAIT replicas timeout, after a SET that granted */
    RSM_GIVE_BACK,      /* EVALSHA of the release script: an unreplicated grant */
    RSM_GET,            /* GET key, the release of redis-get-del */
    RSM_EVAL_RELEASE,   /* EVALSHA of the release script */
    RSM_DEL             /* DEL key */
};

enum redis_sm_op { RSM_OP_NONE, RSM_OP_OPEN, RSM_OP_ACQUIRE, RSM_OP_RELEASE, RSM_OP_RENEW };

struct redis_sm {
    /* what it is (set by redis_sm_init) */
    const struct redis_sm_design *design;
    const struct lock_env *env;     /* settings, counters, stop flag */
    char token[40];                 /* this client's identity */
    char ttl[24];                   /* the TTL in whole ms, as sent */
    bool fencing;                   /* env->fencing: the granting script */
    bool slow_ping;                 /* test-only: a PING before each attempt */
    const struct failpoint *fp_armed; /* the design's failpoint, when armed */
    struct {
        const char *src;            /* NULL: the design calls no such script */
        char sha[41];               /* its SHA1, once loaded */
    } script[RSM_SCRIPTS];
    long long wait_replicas;        /* redis-wait: WAIT numreplicas timeout, */
    char wait_n[24], wait_ms[24];   /* ... as sent (its setup fills these) */
    int holds;                      /* redis-reentrant: nested holds of held_key */
    char held_key[256];
    /* the operation under way */
    enum redis_sm_op op;
    enum redis_sm_step step;        /* the command in flight, or to send next */
    enum redis_sm_step after_load;  /* a NOSCRIPT's reload: the step to send again */
    enum redis_sm_script loading;   /* RSM_LOAD: which script */
    int open_next;                  /* the open: the next script to load */
    bool unacked;                   /* redis-wait: giving back, the attempt failed */
    struct lab_err wait_err;        /* ... with this error */
    struct redis_lane lane;         /* the connection's resend, reconnect, reload */
    const char *key;
    char fence_key[300];
    int64_t deadline;               /* the end of the wait budget */
    int64_t sent;                   /* when the current attempt was sent */
    int attempt;                    /* attempts that found the lock taken */
    /* what to do (for the act just returned) */
    const char *argv[8];
    int argc;
    int64_t wake_at;                /* SLEEP: CLOCK_MONOTONIC ns */
    const struct failpoint *fp;     /* FAILPOINT */
    enum redis_sm_watch watch;      /* the driver does it and clears it */
    /* the outcome (DONE) */
    int open_rc;                    /* 0 or -1 */
    enum lock_status status;
    enum release_status release;
    int renewed;                    /* 1 extended, 0 no longer ours, -1 failed */
    struct lab_err err;
};

/* The Lua scripts several designs share (KEYS[1] key, ARGV[1] token, ARGV[2] ttl ms). */
extern const char redis_compare_and_delete_lua[]; /* del if ours: 1 deleted, 0 not ours */
extern const char redis_compare_and_pexpire_lua[]; /* pexpire if ours: 1 extended, 0 not */
/* KEYS[1] lock, KEYS[2] its fence counter; ARGV[1] token, ARGV[2] ttl ms.
 * The new counter value when granted, 0 when the lock is taken. */
extern const char redis_fenced_set_nx_px_lua[];

/* Fencing (lock_env.fencing): the counter key next to each lock,
 * "<key>:fence", whose INCR in the granting script is the token; its name
 * into out (len bytes), -1 with err filled when it does not fit. */
#define REDIS_FENCE_SUFFIX ":fence"
int redis_fence_key(char *out, size_t len, const char *key, struct lab_err *err);

/* Set m up for design d in env with token; reads the failpoints armed.
 * The connection starts broken: the open's first act is RECONNECT. */
void redis_sm_init(struct redis_sm *m, const struct redis_sm_design *d,
                   const struct lock_env *env, const char *token);

/* A second machine w for m's renewals (m opened: its scripts loaded),
 * on a connection of its own: w starts broken, and its open (optional)
 * connects and loads the renew script alone. */
void redis_sm_init_renewal(struct redis_sm *w, const struct redis_sm *m);

/* Does m's design renew a held lock (a watchdog to start)? */
bool redis_sm_renews(const struct redis_sm *m);

/* Start an operation; each returns the first act. */
enum redis_sm_act redis_sm_open(struct redis_sm *m, int64_t now);
enum redis_sm_act redis_sm_renew(struct redis_sm *w, const char *key, int64_t now);
enum redis_sm_act redis_sm_acquire(struct redis_sm *m, const char *key, int64_t wait_ns,
                                   int64_t now);
enum redis_sm_act redis_sm_release(struct redis_sm *m, const char *key, int64_t now);

/* Feed what happened; each returns the next act. */
enum redis_sm_act redis_sm_reply(struct redis_sm *m, const struct redis_sm_reply *r,
                                 int64_t now);
enum redis_sm_act redis_sm_lost(struct redis_sm *m, const char *why, int64_t now);
enum redis_sm_act redis_sm_reconnected(struct redis_sm *m, bool ok, const struct lab_err *err,
                                       int64_t now);
enum redis_sm_act redis_sm_timer(struct redis_sm *m, int64_t now);
enum redis_sm_act redis_sm_resume(struct redis_sm *m, int64_t now);

#endif
