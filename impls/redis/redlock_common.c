/*
 * redlock_common.c - the Redlock arithmetic both of redlock's sides use
 * (see redlock_common.h; the algorithm is described in redlock.c).
 */
#include "redlock_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Clock drift allowance: ttl / REDLOCK_DRIFT_DIV + REDLOCK_DRIFT_NS. */
#define REDLOCK_DRIFT_DIV 100
#define REDLOCK_DRIFT_NS 2000000LL

const char redlock_unlock_lua[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('del', KEYS[1])\n"
    "end\n"
    "return 0\n";

int redlock_params_init(struct redlock_params *p, const struct lock_env *env,
                        struct lab_err *err)
{
    if (env->servers->n <= 0) {
        lab_err_set(err, EINVAL, "redlock needs independent Redis masters "
                                 "(backends.redis.masters) and this run has none");
        return -1;
    }
    if (env->servers->n > REDLOCK_MAX_MASTERS) {
        lab_err_set(err, EINVAL, "redlock: %d masters, at most %d", env->servers->n,
                    REDLOCK_MAX_MASTERS);
        return -1;
    }
    p->n = env->servers->n;
    p->quorum = p->n / 2 + 1;
    p->ttl_ms = env->ttl_ns / 1000000 > 0 ? env->ttl_ns / 1000000 : 1;
    p->drift_ns = p->ttl_ms * 1000000LL / REDLOCK_DRIFT_DIV + REDLOCK_DRIFT_NS;
    snprintf(p->ttl_arg, sizeof p->ttl_arg, "%lld", p->ttl_ms);
    return 0;
}

uint32_t redlock_all_masters(const struct redlock_params *p)
{
    return p->n == 32 ? 0xffffffffu : (1u << p->n) - 1;
}

int redlock_new_token(char out[33], struct lab_err *err)
{
    int rc = lab_random_hex(out, 16);
    if (rc)
        lab_err_set(err, -rc, "cannot read the OS random source: %s", strerror(-rc));
    return rc ? -1 : 0;
}

bool redlock_granted(const struct redlock_params *p, int votes, int64_t t0, int64_t now)
{
    int64_t validity = p->ttl_ms * 1000000LL - (now - t0) - p->drift_ns;
    return votes >= p->quorum && validity > 0;
}

int64_t redlock_lease_floor(const struct redlock_params *p, int64_t t0)
{
    return t0 + p->ttl_ms * 1000000LL;
}

enum lock_status redlock_gave_up(const struct redlock_params *p, int64_t next, int most,
                                 const char *last, struct lab_err *err)
{
    if (next == 0 || most >= p->quorum)
        return LOCK_TIMEOUT;
    lab_err_set(err, EHOSTUNREACH, "no attempt reached a quorum (%d) of %d masters; "
                "at most %d answered; %s", p->quorum, p->n, most, last);
    return LOCK_ERROR;
}

enum release_status redlock_release_outcome(const struct redlock_params *p, int deleted,
                                            int answered)
{
    int not_held = answered - deleted; /* answered: the token was not there */
    if (deleted < p->quorum && p->n - not_held < p->quorum)
        return RELEASE_NOT_OWNER;
    return RELEASE_OK;
}

int redlock_open_outcome(const struct redlock_params *p, int up, const char *last,
                         struct lab_err *err)
{
    if (up >= p->quorum)
        return 0;
    lab_err_set(err, ECONNREFUSED, "redlock: only %d of %d masters reachable; %s", up, p->n,
                last);
    return -1;
}
