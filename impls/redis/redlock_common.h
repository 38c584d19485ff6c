/*
 * redlock_common.h - redlock's constants and arithmetic, for its state
 * machine (redlock_machine.c) and its two drivers: the timeouts, the
 * compare-and-delete script, and the algorithm's arithmetic (quorum,
 * validity with the drift allowance, the lease floor of a grant, when a
 * wait ends in a timeout or an error, what a release's answers mean).
 */
#ifndef LOCKLAB_REDLOCK_COMMON_H
#define LOCKLAB_REDLOCK_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "lock.h"

/* Per-master connect and command timeout while the run goes on: far below
 * any sensible TTL, far above a loopback round trip. */
#define REDLOCK_TIMEOUT_MS 50
/* The first connections are made before the run starts, with every client
 * connecting at once: give them time, a failure there ends the client. */
#define REDLOCK_OPEN_TIMEOUT_MS 2000
/* Masters are addressed by bit in a uint32_t mask. */
#define REDLOCK_MAX_MASTERS 32

/* KEYS[1] key, ARGV[1] token: del if ours; 1 deleted, 0 not ours. */
extern const char redlock_unlock_lua[];

/* A client's view of the masters and its TTL, from its lock_env. */
struct redlock_params {
    int n;              /* masters */
    int quorum;         /* n/2 + 1 */
    long long ttl_ms;   /* PX argument, at least 1 */
    int64_t drift_ns;   /* clock drift allowance: ttl/100 + 2 ms */
    char ttl_arg[24];   /* ttl_ms as a string */
};

/* Fill p from env; -1 with err filled when env has no masters or more
 * than REDLOCK_MAX_MASTERS. */
int redlock_params_init(struct redlock_params *p, const struct lock_env *env,
                        struct lab_err *err);

/* Every master, as a mask. */
uint32_t redlock_all_masters(const struct redlock_params *p);

/* A fresh attempt token (128 random bits in hex) into out; -1 with err
 * filled when the OS random source fails. */
int redlock_new_token(char out[33], struct lab_err *err);

/* Is an attempt whose SETs went out at t0 and gathered votes by now
 * granted: a majority, and validity = ttl - elapsed - drift left? */
bool redlock_granted(const struct redlock_params *p, int votes, int64_t t0, int64_t now);

/* The lease floor of a grant whose SETs went out at t0: no master's key
 * can expire before then. */
int64_t redlock_lease_floor(const struct redlock_params *p, int64_t t0);

/* A wait that ends without a grant (next: lock_poll_next's 0 when the run
 * stops, -1 when the budget is spent): a timeout, unless no attempt reached
 * a quorum of masters at all (most: the most that answered one attempt),
 * then an error saying so (last: the last master failure). */
enum lock_status redlock_gave_up(const struct redlock_params *p, int64_t next, int most,
                                 const char *last, struct lab_err *err);

/* A release's outcome from how many masters deleted the token and how
 * many answered: OK unless those that answered show that no quorum can
 * still hold it (then NOT_OWNER). Never an error. */
enum release_status redlock_release_outcome(const struct redlock_params *p, int deleted,
                                            int answered);

/* The open's outcome: 0 when a quorum of masters loaded the script (up),
 * else -1 with err naming the last failure. */
int redlock_open_outcome(const struct redlock_params *p, int up, const char *last,
                         struct lab_err *err);

#endif
