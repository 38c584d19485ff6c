/*
 * arrival.c - one client's open-loop schedule (see arrival.h): Poisson or
 * constant gaps at the scenario's rate divided among its clients, and the
 * count of starts that came late.
 */
#include "arrival.h"

#include <math.h>

#include "lab.h"

/* splitmix64: small, fast, and good enough for exponential gaps */
static uint64_t arrival_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* One gap: the mean for constant, an exponential draw for Poisson. */
static double arrival_gap(struct arrival *a)
{
    if (a->dist == ARRIVAL_CONSTANT)
        return a->gap_ns;
    /* u in (0, 1]: never log(0) */
    double u = ((double)(arrival_rand(&a->rng) >> 11) + 1.0) / 9007199254740992.0;
    return -log(u) * a->gap_ns;
}

void arrival_init(struct arrival *a, const struct scenario *s, int idx, int64_t start_ns)
{
    *a = (struct arrival){.open = s->arrival_rate > 0};
    if (!a->open)
        return;
    int n = s->clients > 0 ? s->clients : 1;
    a->dist = s->arrival_dist;
    a->gap_ns = 1e9 * n / s->arrival_rate;
    a->late_ns = s->arrival_late_ns;
    a->rng = 0x6C6F636B6C616231ULL ^ ((uint64_t)idx * 0x9E3779B97F4A7C15ULL);
    /* constant: the clients take turns, idx / rate apart; Poisson: each
     * stream starts one draw after the barrier */
    a->next_ns = (double)start_ns +
                 (a->dist == ARRIVAL_CONSTANT ? 1e9 * idx / s->arrival_rate : arrival_gap(a));
}

int64_t arrival_next(struct arrival *a)
{
    int64_t at = (int64_t)a->next_ns;
    a->next_ns += arrival_gap(a);
    return at;
}

int arrival_took(const struct arrival *a, int64_t intended, int64_t now)
{
    return now - intended > a->late_ns;
}

int64_t arrival_wait(struct arrival *a, int64_t deadline_ns, const volatile int *stop,
                     int64_t *starts, int64_t *late)
{
    if (!a->open)
        return lab_now_ns();
    int64_t at = arrival_next(a);
    if (at >= deadline_ns)
        return 0;
    int64_t now = lab_now_ns();
    if (now < at) {
        lab_sleep_ns(at - now, stop);
        now = lab_now_ns();
    }
    if (*stop)
        return 0;
    (*starts)++;
    *late += arrival_took(a, at, now);
    return at;
}
