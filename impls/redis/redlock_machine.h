/*
 * redlock_machine.h - the Redlock algorithm as one state machine without
 * I/O: which command goes to which masters, what each master's answer
 * counts for, when an attempt is granted, unlocked, paused or given up,
 * what a release's answers mean (the arithmetic is redlock_common.c's).
 *
 * The two drivers move the commands: one process per client on blocking
 * hiredis connections, one per master (redlock_drive_block.c), and client
 * groups on the event loop, one asynchronous connection per master per
 * logical client (redlock_drive_group.c). They differ in timing only (how
 * a down master's connect shares the round's 50 ms, when a connection a
 * master closed is noticed: see each driver), never in a decision.
 * tests/test_redlock_machine.c feeds the machine scripted rounds.
 *
 * The calls each return the next act:
 *
 *   FANOUT  send m->argv[0..argc) to every master in m->mask at once and
 *           gather their answers for at most m->timeout_ns: for each,
 *           rl_sm_master() (a master reconnected for the round gets the
 *           unlock script loaded first, its answer fed to rl_sm_loaded());
 *           then rl_sm_round_done()
 *   SLEEP   the random pause between attempts, until m->wake_at; then
 *           rl_sm_timer()
 *   DONE    the operation ended: m->open_rc, m->status or m->release, with
 *           m->err
 *
 * Decisions, shared by both modes (redlock.c describes the algorithm):
 * - a master that does not answer in the round's time, whose connection
 *   fails, or that answers an error (NOSCRIPT included) is a "no" for this
 *   round, and its connection is dropped: the next round reconnects it and
 *   loads the script on it first;
 * - a command whose connection, open before the round, was closed by the
 *   server under it (the master restarted) goes once more to those masters
 *   on new connections, in a second round with a deadline of its own, as
 *   clients that reconnect do; a timeout is not retried;
 * - a failed attempt unlocks every master, then pauses a jittered
 *   interval; a budget spent is a timeout, unless no attempt reached a
 *   quorum of masters at all (an error);
 * - the release is best effort, never an error;
 * - the topology: N independent masters. Sentinels are not redlock's
 *   topology (a sentinel is no master to vote): refused in either mode.
 */
#ifndef LOCKLAB_REDLOCK_MACHINE_H
#define LOCKLAB_REDLOCK_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "lock.h"
#include "redis_machine.h" /* struct redis_sm_reply */
#include "redlock_common.h"

enum rl_act { RL_FANOUT, RL_SLEEP, RL_DONE };

enum rl_kind {
    RL_OPEN,   /* SCRIPT LOAD of the unlock script (the open) */
    RL_SET,    /* SET key token NX PX ttl: an attempt */
    RL_UNLOCK, /* the compare-and-delete after a failed attempt */
    RL_RELEASE /* the compare-and-delete of the release */
};

/* How one master's part of a round ended. */
enum rl_result {
    RL_ANSWERED, /* it replied (the reply is given) */
    RL_FAILED,   /* no reply: timed out, could not connect or send, its connection failed */
    RL_BROKEN    /* no reply: its connection, open before the round, was closed by the
                    server under the command (the master restarted since) */
};

enum rl_op { RL_OP_NONE, RL_OP_OPEN, RL_OP_ACQUIRE, RL_OP_RELEASE };

/* A fresh attempt token into out: redlock_new_token, or a test's. */
typedef int (*rl_token_fn)(char out[33], struct lab_err *err);

struct rl_sm {
    const struct lock_env *env;
    struct redlock_params p;
    rl_token_fn new_token;
    char sha[41];              /* SHA1 of the unlock script */
    char token[33];            /* the held lock's token */
    char try_token[33];        /* the current attempt's token */
    /* the fan-out under way */
    enum rl_op op;
    enum rl_kind kind;
    int answered;              /* masters that answered it */
    int yes;                   /* votes (SET), deletions (unlock, release), scripts (open) */
    uint32_t again;            /* masters whose connection the server closed: once more */
    /* the acquire under way */
    const char *key;
    int64_t wait_deadline;
    int64_t t0;                /* when the attempt's SETs went out */
    int attempt;               /* failed attempts of this acquire */
    int most;                  /* most masters that answered one attempt's SETs */
    int set_answered;
    struct lab_err last;       /* the last master failure */
    /* what to do */
    const char *argv[6];
    int argc;
    uint32_t mask;             /* FANOUT: the masters */
    int round;                 /* FANOUT: 0, or 1 for the resend */
    int64_t timeout_ns;        /* FANOUT: how long the round waits */
    int64_t wake_at;           /* SLEEP */
    /* the outcome (DONE) */
    int open_rc;
    enum lock_status status;
    enum release_status release;
    struct lab_err err;
};

/* Set m up for env's masters; -1 with err filled when they are not a
 * redlock topology (none, too many, sentinels). new_token NULL: the OS's. */
int rl_sm_init(struct rl_sm *m, const struct lock_env *env, rl_token_fn new_token,
               struct lab_err *err);

enum rl_act rl_sm_open(struct rl_sm *m, int64_t now);
enum rl_act rl_sm_acquire(struct rl_sm *m, const char *key, int64_t wait_ns, int64_t now);
enum rl_act rl_sm_release(struct rl_sm *m, const char *key, int64_t now);

/* Master i's part of the round (r: its reply when RL_ANSWERED; why: the
 * failure). true when its connection must be dropped. */
bool rl_sm_master(struct rl_sm *m, int i, enum rl_result res, const struct redis_sm_reply *r,
                  const char *why);
/* The answer to the SCRIPT LOAD sent first on master i's new connection:
 * true when it loaded (its SHA1 kept), else false (master i failed: feed
 * nothing more for it this round, and drop its connection). */
bool rl_sm_loaded(struct rl_sm *m, int i, const struct redis_sm_reply *r, const char *why);
enum rl_act rl_sm_round_done(struct rl_sm *m, int64_t now);
enum rl_act rl_sm_timer(struct rl_sm *m, int64_t now);

/* Master i's failure into m->last (for the error that names the last one). */
void rl_sm_master_failed(struct rl_sm *m, int i, const char *why);

#endif
