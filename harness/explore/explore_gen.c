/*
 * explore_gen.c - the seeded generator of fault schedules and how a
 * schedule is written: as a scenario's faults: list (flow-style entries the
 * loader reads) and in short for a progress line.
 *
 * The stream is xorshift64* seeded through splitmix64, so one --seed gives
 * the same schedules on every machine. A schedule has faults[0]..faults[1]
 * entries, each an action of the section drawn uniformly, aimed at a target
 * of its kind (a client target for kill, a server role for restart and
 * clock-jump, either for pause), at a time in the at range, lasting a time
 * in the duration range; a server fault is held back until a client holds
 * the lock (when: holder) half the time, and a client fault repeats
 * (every, count 2-3) a quarter of the time. Every time is a whole number
 * of milliseconds, so the text reads back exactly.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "explore.h"

const char *const explore_action_words[XA_COUNT + 1] = {
    [XA_PAUSE] = "pause", [XA_KILL] = "kill", [XA_RESTART] = "restart",
    [XA_FAILOVER] = "failover", [XA_CLOCK_JUMP] = "clock-jump", [XA_PARTITION] = "partition",
    [XA_DELAY] = "delay", [XA_COUNT] = NULL,
};

#define MS INT64_C(1000000)

void xrng_seed(struct xrng *r, uint64_t seed)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL; /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    r->s = z ? z : 0x2545f4914f6cdd1dULL; /* xorshift's state is never 0 */
}

uint64_t xrng_next(struct xrng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545f4914f6cdd1dULL;
}

int64_t xrng_range(struct xrng *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)(xrng_next(r) % span);
}

/* A time in [lo, hi], whole milliseconds (at least 1 ms). */
static int64_t draw_ms(struct xrng *r, int64_t lo, int64_t hi)
{
    int64_t a = (lo + MS - 1) / MS, b = hi / MS;
    if (a < 1)
        a = 1;
    if (b < a)
        b = a;
    return xrng_range(r, a, b) * MS;
}

static const char *pick(struct xrng *r, const char (*pool)[XPL_NAME_MAX], int n)
{
    return pool[xrng_range(r, 0, n - 1)];
}

static bool is_client_target(const char *t)
{
    return !strcmp(t, "holder") || !strcmp(t, "random-client") || !strncmp(t, "client:", 7);
}

/* One entry of action a. */
static void draw_one(const struct explore_spec *sp, struct xrng *r, enum xaction a,
                     struct xfault *f)
{
    memset(f, 0, sizeof *f);
    f->action = a;
    f->count = 1;
    f->at_ns = draw_ms(r, sp->at[0], sp->at[1]);
    const char *t = "";
    switch (a) {
    case XA_PAUSE: {
        int k = (int)xrng_range(r, 0, sp->n_client + sp->n_server - 1);
        t = k < sp->n_client ? sp->client[k] : sp->server[k - sp->n_client];
        f->duration_ns = draw_ms(r, sp->duration[0], sp->duration[1]);
        break;
    }
    case XA_KILL:
        t = sp->n_client ? pick(r, sp->client, sp->n_client) : pick(r, sp->server, sp->n_server);
        break;
    case XA_RESTART:
        t = pick(r, sp->server, sp->n_server);
        f->duration_ns = draw_ms(r, sp->duration[0], sp->duration[1]);
        break;
    case XA_FAILOVER:
        t = "redis-master";
        break;
    case XA_CLOCK_JUMP:
        t = pick(r, sp->clock, sp->n_clock);
        f->offset_ns = draw_ms(r, sp->lease_ns, 3 * sp->lease_ns);
        break;
    case XA_PARTITION:
        t = pick(r, sp->isolate, sp->n_isolate);
        f->duration_ns = draw_ms(r, sp->duration[0], sp->duration[1]);
        break;
    case XA_DELAY: {
        int i = (int)xrng_range(r, 0, sp->n_hosts - 1);
        int j = (int)xrng_range(r, 0, sp->n_hosts - 2);
        j += j >= i;
        t = sp->hosts[i];
        snprintf(f->target2, sizeof f->target2, "%s", sp->hosts[j]);
        f->latency_ns = draw_ms(r, sp->lease_ns / 4, sp->lease_ns);
        f->duration_ns = draw_ms(r, sp->duration[0], sp->duration[1]);
        break;
    }
    case XA_COUNT:
        break;
    }
    snprintf(f->target, sizeof f->target, "%s", t);
    bool server = a != XA_PARTITION && a != XA_DELAY && a != XA_FAILOVER && !is_client_target(t);
    if (server && xrng_range(r, 0, 1))
        f->when_holder = true;
    /* a repeated client fault: every at, 2-3 times, all within the run */
    if (!server && (a == XA_PAUSE || a == XA_KILL) && xrng_range(r, 0, 3) == 0) {
        int count = (int)xrng_range(r, 2, 3);
        if (f->at_ns * count + f->duration_ns <= sp->run_ns * 9 / 10)
            f->count = count;
    }
}

void explore_draw(const struct explore_spec *sp, struct xrng *r, struct xschedule *out)
{
    enum xaction pool[XA_COUNT];
    int n_pool = 0;
    for (int a = 0; a < XA_COUNT; a++)
        if (sp->actions & (1u << a))
            pool[n_pool++] = (enum xaction)a;
    memset(out, 0, sizeof *out);
    if (n_pool == 0)
        return;
    out->n = (int)xrng_range(r, sp->faults[0], sp->faults[1]);
    if (out->n > XPL_FAULTS_MAX)
        out->n = XPL_FAULTS_MAX;
    for (int i = 0; i < out->n; i++)
        draw_one(sp, r, pool[xrng_range(r, 0, n_pool - 1)], &out->f[i]);
    /* staggered: in time order (insertion sort, stable) */
    for (int i = 1; i < out->n; i++)
        for (int j = i; j > 0 && out->f[j].at_ns < out->f[j - 1].at_ns; j--) {
            struct xfault t = out->f[j];
            out->f[j] = out->f[j - 1];
            out->f[j - 1] = t;
        }
}

void explore_dur(char *buf, size_t n, int64_t ns)
{
    if (ns == 0)
        snprintf(buf, n, "0");
    else if (ns % INT64_C(1000000000) == 0)
        snprintf(buf, n, "%" PRId64 "s", ns / INT64_C(1000000000));
    else if (ns % MS == 0)
        snprintf(buf, n, "%" PRId64 "ms", ns / MS);
    else
        snprintf(buf, n, "%" PRId64 "ns", ns);
}

/* Append to buf[*used..n) as snprintf does, keeping the count past n. */
static void put(char *buf, size_t n, size_t *used, const char *fmt, const char *a,
                const char *b)
{
    char *at = *used < n ? buf + *used : NULL;
    int k = snprintf(at, at ? n - *used : 0, fmt, a, b);
    if (k > 0)
        *used += (size_t)k;
}

size_t explore_faults_yaml(const struct xschedule *s, char *buf, size_t n)
{
    size_t used = 0;
    char d[32], c[16];
    if (n)
        buf[0] = '\0';
    put(buf, n, &used, "%s%s", "faults:", s->n ? "\n" : " []\n");
    for (int i = 0; i < s->n; i++) {
        const struct xfault *f = &s->f[i];
        explore_dur(d, sizeof d, f->at_ns);
        if (f->count > 1) {
            snprintf(c, sizeof c, "%d", f->count);
            put(buf, n, &used, "  - {every: %s, count: %s", d, c);
        } else {
            put(buf, n, &used, "  - {at: %s%s", d, "");
        }
        put(buf, n, &used, ", action: %s%s", explore_action_words[f->action], "");
        if (f->action == XA_PARTITION)
            put(buf, n, &used, ", isolate: \"%s\"%s", f->target, "");
        else if (f->action == XA_DELAY)
            put(buf, n, &used, ", between: [\"%s\", \"%s\"]", f->target, f->target2);
        else
            put(buf, n, &used, ", target: \"%s\"%s", f->target, "");
        if (f->when_holder)
            put(buf, n, &used, ", when: holder%s%s", "", "");
        if (f->duration_ns) {
            explore_dur(d, sizeof d, f->duration_ns);
            put(buf, n, &used, ", duration: %s%s", d, "");
        }
        if (f->action == XA_CLOCK_JUMP) {
            explore_dur(d, sizeof d, f->offset_ns);
            put(buf, n, &used, ", offset: %s%s", d, "");
        }
        if (f->action == XA_DELAY) {
            explore_dur(d, sizeof d, f->latency_ns);
            put(buf, n, &used, ", latency: %s%s", d, "");
        }
        put(buf, n, &used, "}\n%s%s", "", "");
    }
    return used;
}

size_t explore_short(const struct xschedule *s, char *buf, size_t n)
{
    size_t used = 0;
    char t[160], x[64];
    if (n)
        buf[0] = '\0';
    if (s->n == 0)
        put(buf, n, &used, "no fault%s%s", "", "");
    for (int i = 0; i < s->n; i++) {
        const struct xfault *f = &s->f[i];
        if (f->action == XA_DELAY)
            snprintf(t, sizeof t, "%s-%s", f->target, f->target2);
        else
            snprintf(t, sizeof t, "%s", f->target);
        put(buf, n, &used, "%s%s", i ? " + " : "", explore_action_words[f->action]);
        snprintf(x, sizeof x, f->count > 1 ? "@every %.2fs x%d" : "@%.2fs", f->at_ns / 1e9,
                 f->count);
        put(buf, n, &used, " %s%s", t, x);
        if (f->duration_ns) {
            snprintf(x, sizeof x, "/%.2fs", f->duration_ns / 1e9);
            put(buf, n, &used, "%s%s", x, "");
        }
        if (f->action == XA_CLOCK_JUMP) {
            snprintf(x, sizeof x, "+%.2fs", f->offset_ns / 1e9);
            put(buf, n, &used, "%s%s", x, "");
        }
        if (f->when_holder)
            put(buf, n, &used, "%s%s", " (held)", "");
    }
    return used;
}
