/*
 * redisson_machine.h - the Redisson RLock design as one state machine
 * without I/O: its scripts, what each reply and each pub/sub event means,
 * the hold count, the lease, the fencing token and the handoff split.
 *
 * The two drivers around it only move bytes: one process per client
 * (redisson_drive_block.c: a blocking command link, the watchdog thread)
 * and client groups (redisson_drive_group.c: a loop link per logical
 * client). The pub/sub side is one Redisson JVM's PublishSubscribe in
 * either mode (redisson_pubsub.c: a process's own, or one shared by a
 * group as one JVM shares its subscriptions), which feeds the machine its
 * events. Both modes find the store the same way, the sentinels' master
 * included (redis_link.h), and feed the machine the same events, so a
 * grouped client answers a reply as a lone one does.
 * tests/test_redisson_machine.c feeds it scripted events, with no server.
 *
 * The calls each return the next act:
 *
 *   SEND       send m->argv[0..argc) on the command connection; then
 *              rsn_sm_reply(), or rsn_sm_lost() when no reply came
 *   RECONNECT  a new command connection to the store (the sentinels'
 *              master when there are sentinels); then rsn_sm_reconnected()
 *   SUBSCRIBE  be subscribed to m->channel (opening a pub/sub connection
 *              when there is none); then rsn_sm_subscribed() once the
 *              subscription is confirmed, rsn_sm_timer() at m->wake_at (the
 *              wait budget) if it is not, or a pub/sub event below
 *   WAIT       wait for an unlock message on m->channel until m->wake_at;
 *              then rsn_sm_message(), rsn_sm_timer(), or a pub/sub event
 *   DONE       the operation ended: m->open_rc, m->status or m->release,
 *              with m->err. After an acquire that asked for SUBSCRIBE the
 *              driver leaves the channel (Redisson's unsubscribe).
 *
 * Pub/sub events (only while the machine waits at SUBSCRIBE or WAIT):
 * rsn_sm_ps_lost() the pub/sub connection broke after it was made (its
 * subscriptions went with it), rsn_sm_ps_error() it answered an error,
 * rsn_sm_ps_failed() none could be made. m->watch asks the driver to arm
 * or disarm the watchdog (blocking mode only; never set in groups, which
 * refuse a lock without a lease).
 *
 * Decisions, each from what Redisson does (RedissonLock, LockPubSub,
 * PublishSubscribe, RedisExecutor), shared by both modes:
 * - the command connection: one command's way (a resend on a new
 *   connection after a loss, after -READONLY / -NOREPLICAS on the master
 *   found anew, SCRIPT LOAD and EVALSHA again after -NOSCRIPT once per
 *   operation, any other error a failure) is the lane's, redis_lane.h,
 *   shared with the simple designs' machine;
 * - the pub/sub connection is made at the first SUBSCRIBE, in either
 *   mode (Redisson's PublishSubscribe takes one when a listener first
 *   subscribes; the blocking form used to open it with the client);
 * - a pub/sub connection that breaks after it was made is replaced and
 *   the channel subscribed again, as long as the wait lasts, and once the
 *   subscription is confirmed the lock is tried at once (the unlock
 *   message may have gone to nobody): Redisson reconnects its pub/sub
 *   connection and resubscribes its listeners. A cut right after a new
 *   connection was made is one more of those. A pub/sub connection that
 *   cannot be made at all fails the acquire, as Redisson's subscribe
 *   future fails;
 * - an error reply on the pub/sub connection fails the waiting acquire:
 *   Redisson's subscribe completes exceptionally on a RedisException (it
 *   retries timeouts and lost connections, not an error the server gave),
 *   and lock() throws;
 * - a waiter sleeps until a message, the holder's PTTL, or the budget;
 *   when the PTTL runs out it tries again; at the budget's end it gives up
 *   without one more try.
 */
#ifndef LOCKLAB_REDISSON_MACHINE_H
#define LOCKLAB_REDISSON_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "lock.h"
#include "redis_machine.h" /* struct redis_sm_reply (a pair: the fenced grant) */

enum rsn_act { RSN_SEND, RSN_RECONNECT, RSN_SUBSCRIBE, RSN_WAIT, RSN_DONE };

enum rsn_step {
    RS_IDLE,
    RS_LOAD_ACQUIRE, /* SCRIPT LOAD of the acquire script */
    RS_LOAD_RELEASE, /* SCRIPT LOAD of the release script */
    RS_TRY,          /* EVALSHA of the acquire script */
    RS_SUBSCRIBING,  /* waiting for the channel's subscription */
    RS_WAITING,      /* waiting for an unlock message */
    RS_RELEASE,      /* EVALSHA of the release script */
    RS_LOAD_RENEW,   /* SCRIPT LOAD of the renew script (with the watchdog) */
    RS_RENEW         /* EVALSHA of the renew script (a renewal machine's) */
};

enum rsn_op { RS_OP_NONE, RS_OP_OPEN, RS_OP_ACQUIRE, RS_OP_RELEASE, RS_OP_RENEW };

enum rsn_watch { RS_WATCH_NONE, RS_WATCH_ARM, RS_WATCH_DISARM };

struct rsn_sm {
    /* what it is (rsn_sm_init) */
    const struct lock_env *env;
    char owner[80];             /* Redisson's "<uuid>:<thread id>" */
    char lease[24];             /* the lease in whole ms, as sent */
    int64_t lease_ns;           /* the same in ns (the grant's lease floor) */
    bool watchdog;              /* no leaseTime: the watchdog renews */
    bool fencing;
    char acquire_sha[41], release_sha[41], renew_sha[41];
    int holds;                  /* nested holds of held_key */
    char held_key[256];
    /* the operation under way */
    enum rsn_op op;
    enum rsn_step step;
    enum rsn_step after_load;   /* NOSCRIPT: the script step to send again */
    struct redis_lane lane;     /* the command connection's resend, reconnect, reload */
    bool ours;                  /* a release of our own hold */
    const char *key;
    char fence_key[300];
    char channel[300];
    char message[24];           /* the unlock message: the release's send time */
    int64_t deadline;           /* the end of the wait budget */
    int64_t sent;               /* when the latest attempt was sent */
    long long ttl;              /* the holder's PTTL from the latest refusal, -1 none */
    bool subscribed;            /* the channel's subscription is confirmed */
    bool asked;                 /* this acquire asked for SUBSCRIBE */
    bool woken;                 /* a message woke the attempt under way */
    int64_t msg_exit_ns, msg_arrive_ns;
    /* what to do */
    const char *argv[10];
    int argc;
    int64_t wake_at;            /* SUBSCRIBE, WAIT: CLOCK_MONOTONIC ns */
    enum rsn_watch watch;       /* the driver does it and clears it */
    /* the outcome (DONE) */
    int open_rc;
    enum lock_status status;
    enum release_status release;
    int renewed;                /* a renewal: 1 extended, 0 no longer ours, -1 failed */
    struct lab_err err;
};

/* The scripts (redisson_machine.c says what each takes and answers). */
extern const char rsn_acquire_lua[];
extern const char rsn_fenced_acquire_lua[];
extern const char rsn_release_lua[];
extern const char rsn_renew_lua[];

/* redisson's own settings, keys of the scenario's lock: section. */
struct rsn_options {
    int64_t watchdog_lease_ns; /* lock.watchdog_lease: the lease the watchdog renews */
    int64_t lease_ns;          /* derived: Redisson's leaseTime, 0 = lock() with the watchdog */
};

/* Redisson's channel name for a lock into out (len bytes). -1 with err
 * filled when too long. */
int rsn_channel(char *out, size_t len, const char *key, struct lab_err *err);

/* Set m up in env (env->options: struct rsn_options) for owner id owner.
 * The command connection starts broken: the open's first act is RECONNECT. */
void rsn_sm_init(struct rsn_sm *m, const struct lock_env *env, const char *owner);

/* Start an operation; each returns the first act. */
enum rsn_act rsn_sm_open(struct rsn_sm *m, int64_t now);
enum rsn_act rsn_sm_acquire(struct rsn_sm *m, const char *key, int64_t wait_ns, int64_t now);
enum rsn_act rsn_sm_release(struct rsn_sm *m, const char *key, int64_t now);

/* The command connection's events. */
enum rsn_act rsn_sm_reply(struct rsn_sm *m, const struct redis_sm_reply *r, int64_t now);
enum rsn_act rsn_sm_lost(struct rsn_sm *m, const char *why, int64_t now);
enum rsn_act rsn_sm_reconnected(struct rsn_sm *m, bool ok, const struct lab_err *err,
                                int64_t now);
/* The pub/sub's and the clock's. exit_ns is the time the message carries
 * (the release's send time), arrive_ns its arrival at the socket. */
enum rsn_act rsn_sm_subscribed(struct rsn_sm *m, int64_t now);
enum rsn_act rsn_sm_message(struct rsn_sm *m, int64_t exit_ns, int64_t arrive_ns, int64_t now);
enum rsn_act rsn_sm_timer(struct rsn_sm *m, int64_t now);
enum rsn_act rsn_sm_ps_lost(struct rsn_sm *m, const char *why, int64_t now);
enum rsn_act rsn_sm_ps_error(struct rsn_sm *m, const char *msg, int64_t now);
enum rsn_act rsn_sm_ps_failed(struct rsn_sm *m, const struct lab_err *err, int64_t now);

/* The watchdog's renewals: a second machine w made from m once m is open
 * (its scripts loaded), on a connection of its own (w starts broken).
 * rsn_sm_renew sends rsn_renew_lua for key; DONE with w->renewed: 1
 * extended, 0 no longer ours, -1 an unexpected reply or a failure. */
void rsn_sm_init_renewal(struct rsn_sm *w, const struct rsn_sm *m);
enum rsn_act rsn_sm_renew(struct rsn_sm *w, const char *key, int64_t now);

#endif
