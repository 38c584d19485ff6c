/*
 * lock_poll.c - the shared polling loop (see lock_poll.h).
 *
 * Backoff uses "equal jitter": the sleep is half the current step plus a
 * random part of the other half, so clients that collided once spread out
 * without any of them sleeping close to zero. The jitter only needs to
 * differ between clients, not to be unpredictable, so a xorshift generator
 * seeded once per process from the OS random source is enough. redlock
 * pauses through the same function, jittering its fixed interval too.
 */
#include "lock_poll.h"

static uint64_t jitter_state;

static uint64_t jitter_next(void)
{
    if (jitter_state == 0) {
        if (lab_random_bytes(&jitter_state, sizeof jitter_state) != 0 || jitter_state == 0)
            jitter_state = (uint64_t)lab_now_ns() | 1;
    }
    uint64_t x = jitter_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    jitter_state = x;
    return x;
}

int64_t lock_poll_next(const struct lock_env *env, int attempt, int64_t deadline,
                       bool jitter_always)
{
    return lock_poll_next_at(env, attempt, deadline, lab_now_ns(), jitter_always);
}

int64_t lock_poll_next_at(const struct lock_env *env, int attempt, int64_t deadline, int64_t now,
                          bool jitter_always)
{
    if (*env->stop)
        return 0;
    int64_t left = deadline - now;
    if (left <= 0)
        return -1;
    int64_t step = env->retry_interval_ns;
    if (env->retry_backoff)
        step <<= attempt < 5 ? attempt : 5;
    int64_t pause = step, half = step / 2;
    if (half > 0 && (env->retry_backoff || jitter_always))
        pause = half + (int64_t)(jitter_next() % (uint64_t)(step - half + 1));
    return pause < left ? pause : left;
}

int lock_poll_pause(const struct lock_env *env, int attempt, int64_t deadline,
                    bool jitter_always)
{
    int64_t pause = lock_poll_next(env, attempt, deadline, jitter_always);
    if (pause <= 0)
        return (int)pause;
    lab_sleep_ns(pause, env->stop);
    return 1;
}

enum lock_status lock_poll(const struct lock_env *env, lock_try_fn attempt, struct lock_client *c,
                           const char *key, int64_t wait_ns, struct lab_err *err)
{
    int64_t deadline = lab_now_ns() + wait_ns;
    for (int n = 0;; n++) {
        int64_t sent = lab_now_ns();
        int r = attempt(c, key, err);
        if (r > 0) {
            /* the TTL starts at or after sent, and is sent in whole ms */
            env->stats->lease_floor_ns = sent + env->ttl_ns / 1000000 * 1000000;
            return LOCK_GRANTED;
        }
        if (r < 0)
            return LOCK_ERROR;
        env->stats->polls++;
        if (lock_poll_pause(env, n, deadline, false) <= 0)
            return LOCK_TIMEOUT;
    }
}
