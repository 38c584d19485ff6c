/*
 * test_oracle.c - unit test of the mutual-exclusion oracle.
 *
 * The oracle is what every verdict rests on, so it is checked against
 * answers known in advance: small hand-made interval logs (sequential,
 * touching, overlapping, nested, on separate keys, out of order, invalid),
 * handoff gaps, and a randomized cross-check of oracle_analyze() against
 * brute-force O(n^2) counting on thousands of intervals with many ties and
 * zero-length intervals. The live half (oracle_enter/oracle_exit) is checked
 * with a deterministic sequence in one process and with forked processes
 * hammering one key in shared memory, which must leave the count at zero.
 * Finally two million intervals are analysed to show the sweep scales (the
 * time is printed, not asserted).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "hist.h"
#include "oracle.h"

/* ------------------------------------------------------------------------
 * Helpers
 * --------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int64_t rng_below(int64_t n)
{
    return (int64_t)(rng_next() % (uint64_t)n);
}

static struct oracle_interval mk(uint32_t key, int64_t wait, int64_t enter, int64_t exit)
{
    struct oracle_interval v = {.wait_ns = wait, .enter_ns = enter, .exit_ns = exit, .key = key};
    return v;
}

static void shuffle(struct oracle_interval *iv, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rng_below((int64_t)i);
        struct oracle_interval t = iv[i - 1];
        iv[i - 1] = iv[j];
        iv[j] = t;
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Analyse a copy of iv so the caller's array stays in its order. */
static int analyze_copy(const struct oracle_interval *iv, size_t n, struct oracle_report *r,
                        struct hist *h)
{
    struct oracle_interval *c = malloc((n ? n : 1) * sizeof *c);
    int rc;

    if (n)
        memcpy(c, iv, n * sizeof *c);
    rc = oracle_analyze(c, n, r, h);
    free(c);
    return rc;
}

/* ------------------------------------------------------------------------
 * Brute force, straight from the definitions
 * --------------------------------------------------------------------- */

static int overlaps(const struct oracle_interval *a, const struct oracle_interval *b)
{
    return a->key == b->key && a->enter_ns < b->exit_ns && b->enter_ns < a->exit_ns;
}

static int64_t bf_pairs(const struct oracle_interval *iv, size_t n)
{
    int64_t pairs = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            pairs += overlaps(&iv[i], &iv[j]);
    return pairs;
}

static int cmp_ll(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Overlap time and max holders of one key: every elementary segment between
 * consecutive distinct endpoints is covered by the intervals that contain
 * it; a zero-length interval at t meets only the intervals strictly around
 * t. */
static void bf_key(const struct oracle_interval *iv, size_t n, uint32_t key, int64_t *overlap,
                   int *maxc)
{
    int64_t *t = malloc(2 * n * sizeof *t);
    size_t m = 0, u = 0;

    for (size_t i = 0; i < n; i++) {
        if (iv[i].key != key)
            continue;
        t[m++] = iv[i].enter_ns;
        t[m++] = iv[i].exit_ns;
        if (*maxc < 1)
            *maxc = 1;
    }
    qsort(t, m, sizeof *t, cmp_ll);
    for (size_t i = 0; i < m; i++)
        if (u == 0 || t[u - 1] != t[i])
            t[u++] = t[i];
    for (size_t s = 0; s + 1 < u; s++) {
        int c = 0;
        for (size_t i = 0; i < n; i++)
            if (iv[i].key == key && iv[i].enter_ns <= t[s] && iv[i].exit_ns >= t[s + 1])
                c++;
        if (c >= 2)
            *overlap += t[s + 1] - t[s];
        if (c > *maxc)
            *maxc = c;
    }
    for (size_t z = 0; z < n; z++) {
        if (iv[z].key != key || iv[z].enter_ns != iv[z].exit_ns)
            continue;
        int c = 1;
        for (size_t i = 0; i < n; i++)
            if (iv[i].key == key && iv[i].enter_ns < iv[z].enter_ns &&
                iv[z].enter_ns < iv[i].exit_ns)
                c++;
        if (c > *maxc)
            *maxc = c;
    }
    free(t);
}

/* ------------------------------------------------------------------------
 * Hand-made logs
 * --------------------------------------------------------------------- */

static void test_sequential(void)
{
    struct oracle_interval iv[] = {
        mk(0, 0, 0, 100), mk(0, 0, 100, 250), mk(0, 0, 250, 250), mk(0, 0, 250, 400),
        mk(0, 0, 500, 600),
    };
    struct oracle_report r;
    int rc = analyze_copy(iv, 5, &r, NULL);

    CHECK(rc == 0, "rc %d", rc);
    CHECK(r.intervals == 5, "intervals %lld", (long long)r.intervals);
    CHECK(r.violations == 0, "touching intervals gave %lld violations", (long long)r.violations);
    CHECK(r.overlap_ns == 0, "overlap %lld", (long long)r.overlap_ns);
    CHECK(r.max_concurrent == 1, "max %d", r.max_concurrent);
}

static void test_empty(void)
{
    struct oracle_report r;
    int rc;

    memset(&r, 0x5a, sizeof r);
    rc = oracle_analyze(NULL, 0, &r, NULL);
    CHECK(rc == 0, "rc %d", rc);
    CHECK(r.intervals == 0 && r.violations == 0 && r.overlap_ns == 0 && r.max_concurrent == 0 &&
              r.handoffs == 0,
          "empty log not all zero");
    CHECK(oracle_analyze(NULL, 1, &r, NULL) == -EINVAL, "NULL array accepted");
}

static void test_pair_300(void)
{
    struct oracle_interval iv[] = {mk(3, 0, 1000, 2000), mk(3, 0, 1700, 2500)};
    struct oracle_report r;
    int rc = analyze_copy(iv, 2, &r, NULL);

    CHECK(rc == 0, "rc %d", rc);
    CHECK(r.violations == 1, "violations %lld", (long long)r.violations);
    CHECK(r.overlap_ns == 300, "overlap %lld", (long long)r.overlap_ns);
    CHECK(r.max_concurrent == 2, "max %d", r.max_concurrent);
}

static void test_nested(void)
{
    struct oracle_interval nest[] = {mk(0, 0, 0, 100), mk(0, 0, 10, 90), mk(0, 0, 20, 80)};
    /* counts: 0-10:1 10-50:2 50-60:3 60-100:2 100-120:1 */
    struct oracle_interval chain[] = {mk(0, 0, 0, 100), mk(0, 0, 10, 60), mk(0, 0, 50, 120)};
    /* a zero-length interval strictly inside another overlaps it, one at its
     * edge does not */
    struct oracle_interval point[] = {mk(0, 0, 0, 100), mk(0, 0, 40, 40), mk(0, 0, 100, 100),
                                      mk(0, 0, 0, 0), mk(0, 0, 40, 40)};
    struct oracle_report r;
    int rc;

    rc = analyze_copy(nest, 3, &r, NULL);
    CHECK(rc == 0, "rc %d", rc);
    CHECK(r.violations == 3, "nested violations %lld", (long long)r.violations);
    CHECK(r.max_concurrent == 3, "nested max %d", r.max_concurrent);
    CHECK(r.overlap_ns == 80, "nested overlap %lld (want 80)", (long long)r.overlap_ns);

    rc = analyze_copy(chain, 3, &r, NULL);
    CHECK(rc == 0, "rc %d", rc);
    CHECK(r.violations == 3, "chain violations %lld", (long long)r.violations);
    CHECK(r.max_concurrent == 3, "chain max %d", r.max_concurrent);
    CHECK(r.overlap_ns == 90, "chain overlap %lld (want 90)", (long long)r.overlap_ns);

    rc = analyze_copy(point, 5, &r, NULL);
    CHECK(rc == 0, "rc %d", rc);
    CHECK(r.violations == 2, "point violations %lld (want 2)", (long long)r.violations);
    CHECK(r.max_concurrent == 2, "point max %d", r.max_concurrent);
    CHECK(r.overlap_ns == 0, "point overlap %lld", (long long)r.overlap_ns);
}

static void test_keys_independent(void)
{
    struct oracle_interval iv[] = {mk(0, 0, 1000, 2000), mk(1, 0, 1000, 2000),
                                   mk(2, 0, 1500, 2500), mk(7, 0, 0, 5000)};
    struct oracle_report r;
    int rc = analyze_copy(iv, 4, &r, NULL);

    CHECK(rc == 0, "rc %d", rc);
    CHECK(r.violations == 0, "violations across keys %lld", (long long)r.violations);
    CHECK(r.overlap_ns == 0, "overlap across keys %lld", (long long)r.overlap_ns);
    CHECK(r.max_concurrent == 1, "max %d", r.max_concurrent);
}

static void test_shuffled(void)
{
    struct oracle_interval iv[] = {
        mk(0, 0, 0, 100),   mk(0, 0, 10, 60),    mk(0, 0, 50, 120),  mk(1, 0, 0, 10),
        mk(1, 0, 10, 20),   mk(1, 5, 25, 40),    mk(0, 90, 300, 400), mk(2, 0, 5, 500),
        mk(2, 0, 200, 300), mk(0, 350, 400, 410), mk(1, 0, 30, 30),  mk(2, 0, 499, 600),
    };
    size_t n = sizeof iv / sizeof iv[0];
    struct oracle_report a, b;
    int rc;

    rc = analyze_copy(iv, n, &a, NULL);
    CHECK(rc == 0, "rc %d", rc);
    for (int round = 0; round < 20; round++) {
        shuffle(iv, n);
        rc = analyze_copy(iv, n, &b, NULL);
        CHECK(rc == 0 && a.violations == b.violations && a.overlap_ns == b.overlap_ns &&
                  a.max_concurrent == b.max_concurrent && a.handoffs == b.handoffs &&
                  a.intervals == b.intervals,
              "shuffle round %d differs", round);
    }
    CHECK(a.violations == 3 + 1 + 2, "violations %lld", (long long)a.violations);
}

static void test_sorted_in_place(void)
{
    struct oracle_interval iv[] = {mk(2, 0, 5, 6), mk(0, 0, 9, 9), mk(1, 0, 3, 4), mk(0, 0, 1, 2)};
    struct oracle_report r;
    int rc = oracle_analyze(iv, 4, &r, NULL);

    CHECK(rc == 0, "rc %d", rc);
    CHECK(iv[0].key == 0 && iv[0].enter_ns == 1 && iv[1].key == 0 && iv[1].enter_ns == 9 &&
              iv[2].key == 1 && iv[3].key == 2,
          "array not sorted by key, entry");
}

static void test_invalid(void)
{
    struct oracle_interval iv[] = {mk(1, 0, 50, 60), mk(0, 0, 10, 20), mk(0, 0, 100, 99),
                                   mk(0, 0, 15, 30)};
    struct oracle_interval copy[4];
    struct oracle_report r, before;
    struct hist *h = malloc(sizeof *h);
    int rc;

    hist_init(h);
    memcpy(copy, iv, sizeof iv);
    memset(&r, 0x5a, sizeof r);
    before = r;
    rc = oracle_analyze(iv, 4, &r, h);
    CHECK(rc == -EINVAL, "invalid interval gave %d", rc);
    CHECK(memcmp(iv, copy, sizeof iv) == 0, "array changed on -EINVAL");
    CHECK(memcmp(&r, &before, sizeof r) == 0, "report changed on -EINVAL");
    CHECK(h->total == 0, "histogram changed on -EINVAL");
    CHECK(oracle_analyze(iv, 4, NULL, NULL) == -EINVAL, "NULL report accepted");
    free(h);
}

/* ------------------------------------------------------------------------
 * Handoff gaps
 * --------------------------------------------------------------------- */

static void test_handoff(void)
{
    struct hist *h = malloc(sizeof *h);
    struct oracle_report r;
    int rc;

    /* B waited since 5 us, A left at 100 us, B entered at 150 us: 50 us.
     * C began to wait after B left: no handoff. */
    struct oracle_interval iv[] = {
        mk(0, 0, 1000, 100000),
        mk(0, 5000, 150000, 160000),
        mk(0, 200000, 210000, 220000),
    };
    hist_init(h);
    rc = analyze_copy(iv, 3, &r, h);
    CHECK(rc == 0, "rc %d", rc);
    CHECK(r.handoffs == 1, "handoffs %lld", (long long)r.handoffs);
    CHECK(h->total == 1 && h->min == 50 && h->max == 50, "handoff hist total %lld min %lld max %lld",
          (long long)h->total, (long long)h->min, (long long)h->max);

    /* The gap runs from the latest earlier exit (A at 10 us), not from the
     * previous interval's exit (B at 2 us); rounding to the nearest us. */
    struct oracle_interval late[] = {
        mk(0, 0, 0, 10000),
        mk(0, 0, 100, 2000),
        mk(0, 500, 11500, 12000),  /* 1.5 us -> 2 */
        mk(0, 11900, 12499, 13000), /* 0.499 us -> 0 */
        mk(0, 13000, 14000, 15000), /* began waiting at the exit: no handoff */
        mk(0, 14000, 15000, 16000), /* entered at the exit: 0 us */
        mk(1, 0, 50, 60),           /* first of its key: never a handoff */
    };
    hist_init(h);
    rc = analyze_copy(late, 7, &r, h);
    CHECK(rc == 0, "rc %d", rc);
    CHECK(r.handoffs == 3, "handoffs %lld (want 3)", (long long)r.handoffs);
    CHECK(h->total == 3 && h->max == 2 && h->min == 0 && h->sum == 2.0,
          "hist total %lld min %lld max %lld sum %g", (long long)h->total, (long long)h->min,
          (long long)h->max, h->sum);

    /* NULL histogram: still counted. */
    rc = analyze_copy(iv, 3, &r, NULL);
    CHECK(rc == 0 && r.handoffs == 1, "handoffs without histogram %lld", (long long)r.handoffs);
    free(h);
}

/* ------------------------------------------------------------------------
 * Randomized cross-check against brute force
 * --------------------------------------------------------------------- */

static void random_log(struct oracle_interval *iv, size_t n, uint32_t keys, int64_t span,
                       int64_t maxlen, int64_t grid)
{
    for (size_t i = 0; i < n; i++) {
        int64_t enter = rng_below(span / grid) * grid;
        int64_t len = rng_below(20) == 0 ? 0 : rng_below(maxlen / grid + 1) * grid;
        iv[i] = mk((uint32_t)rng_below(keys), enter - rng_below(maxlen + 1), enter, enter + len);
        iv[i].client = (uint32_t)i;
    }
}

static void test_random_bruteforce(void)
{
    static const struct {
        size_t n;
        uint32_t keys;
        int64_t span, maxlen, grid;
    } cfg[] = {
        {3000, 4, 3000000, 1000, 10},   /* sparse: few overlaps, many touches */
        {3000, 4, 1000000, 2000, 1},    /* moderate */
        {2000, 3, 20000, 500, 5},       /* dense: deep overlaps, many ties */
        {4000, 8, 200, 40, 1},          /* tiny span: everything ties */
        {1500, 1, 100000, 5000, 100},   /* one key */
    };
    int mismatches = 0;

    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        for (uint64_t seed = 1; seed <= 4; seed++) {
            size_t n = cfg[c].n;
            struct oracle_interval *iv = malloc(n * sizeof *iv);
            struct oracle_report r;
            int64_t want_pairs, want_overlap = 0;
            int want_max = 0;

            rng_state = seed * 7919 + c;
            random_log(iv, n, cfg[c].keys, cfg[c].span, cfg[c].maxlen, cfg[c].grid);
            want_pairs = bf_pairs(iv, n);
            for (uint32_t k = 0; k < cfg[c].keys; k++) {
                int m = 0;
                bf_key(iv, n, k, &want_overlap, &m);
                if (m > want_max)
                    want_max = m;
            }
            int rc = oracle_analyze(iv, n, &r, NULL);
            struct oracle_stale st = {0};
            if (rc == 0)
                rc = oracle_stale_holders(iv, n, &st);
            int ok = rc == 0 && r.violations == want_pairs && r.overlap_ns == want_overlap &&
                     r.max_concurrent == want_max && r.intervals == (int64_t)n &&
                     st.chance == want_pairs; /* no accesses logged: every pair is chance */
            CHECK(ok,
                  "cfg %zu seed %llu: rc %d pairs %lld/%lld overlap %lld/%lld max %d/%d", c,
                  (unsigned long long)seed, rc, (long long)r.violations, (long long)want_pairs,
                  (long long)r.overlap_ns, (long long)want_overlap, r.max_concurrent, want_max);
            mismatches += !ok;
            if (seed == 1)
                printf("random cfg %zu: n %zu pairs %lld overlap %lld ns max %d\n", c, n,
                       (long long)want_pairs, (long long)want_overlap, want_max);
            free(iv);
        }
    }
    CHECK(mismatches == 0, "%d random logs disagreed with brute force", mismatches);
}

/* Handoffs against brute force, with distinct entry times per key so that
 * "earlier intervals" is unambiguous. */
static void test_random_handoff(void)
{
    for (uint64_t seed = 1; seed <= 4; seed++) {
        size_t n = 3000;
        struct oracle_interval *iv = malloc(n * sizeof *iv);
        struct hist *h = malloc(sizeof *h);
        struct oracle_report r;
        int64_t want = 0;
        double want_sum = 0;

        rng_state = seed * 104729;
        for (size_t i = 0; i < n; i++) {
            int64_t enter = (int64_t)i * 1000 + rng_below(500);
            iv[i] = mk((uint32_t)rng_below(3), enter - rng_below(8000), enter,
                       enter + rng_below(3000));
        }
        for (size_t i = 0; i < n; i++) {
            int64_t max_exit = INT64_MIN;
            for (size_t j = 0; j < n; j++)
                if (iv[j].key == iv[i].key && iv[j].enter_ns < iv[i].enter_ns &&
                    iv[j].exit_ns > max_exit)
                    max_exit = iv[j].exit_ns;
            if (max_exit != INT64_MIN && iv[i].wait_ns < max_exit && iv[i].enter_ns >= max_exit) {
                want++;
                want_sum += (double)((iv[i].enter_ns - max_exit + 500) / 1000);
            }
        }
        shuffle(iv, n);
        hist_init(h);
        int rc = oracle_analyze(iv, n, &r, h);
        CHECK(rc == 0 && r.handoffs == want && h->total == want && h->sum == want_sum,
              "seed %llu: handoffs %lld/%lld sum %g/%g", (unsigned long long)seed,
              (long long)r.handoffs, (long long)want, h->sum, want_sum);
        CHECK(want > 100, "seed %llu: only %lld handoffs generated", (unsigned long long)seed,
              (long long)want);
        free(iv);
        free(h);
    }
}

/* ------------------------------------------------------------------------
 * Live marking
 * --------------------------------------------------------------------- */

static int holders(struct oracle_key *k)
{
    return (int)(atomic_load(&k->word) & ((1ULL << ORACLE_HOLDER_BITS) - 1));
}

static void test_enter_exit_sequence(void)
{
    struct oracle_key k;
    uint64_t s0, s1, s4;
    int got;

    atomic_init(&k.word, 0);
    atomic_init(&k.max_holders, 0);
    atomic_init(&k.live_overlaps, 0);

    got = oracle_enter(&k, &s0);
    CHECK(got == 0 && s0 == 0, "first enter found %d, seq %llu", got, (unsigned long long)s0);
    CHECK(atomic_load(&k.max_holders) == 1 && atomic_load(&k.live_overlaps) == 0,
          "after one enter: max %d overlaps %lld", atomic_load(&k.max_holders),
          (long long)atomic_load(&k.live_overlaps));
    got = oracle_enter(&k, &s1);
    CHECK(got == 1 && s1 == 1, "second enter found %d, seq %llu", got, (unsigned long long)s1);
    CHECK(holders(&k) == 2, "holders %d", holders(&k));
    CHECK(atomic_load(&k.max_holders) == 2, "max %d", atomic_load(&k.max_holders));
    CHECK(atomic_load(&k.live_overlaps) == 1, "overlaps %lld",
          (long long)atomic_load(&k.live_overlaps));
    CHECK(oracle_exit(&k) == 2 && oracle_exit(&k) == 3, "exits numbered 2 and 3");
    CHECK(holders(&k) == 0, "holders after exits %d", holders(&k));
    got = oracle_enter(&k, &s4);
    CHECK(oracle_exit(&k) == 5, "exit numbered 5");
    CHECK(got == 0 && s4 == 4 && atomic_load(&k.max_holders) == 2 &&
              atomic_load(&k.live_overlaps) == 1,
          "exclusive entry changed max/overlaps");
}

/* Four processes enter and leave one key as fast as they can, logging
 * each interval's event numbers: the logs replayed (oracle_sequence) must
 * give exactly the live counter's overlaps and maximum. This is the
 * cross-check the runner does after every run, under real contention. */
static void test_enter_exit_fork(void)
{
    enum { CHILDREN = 4, ROUNDS = 50000 };
    size_t logs = (size_t)CHILDREN * ROUNDS * sizeof(struct oracle_interval);
    struct oracle_key *k = mmap(NULL, sizeof *k, PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct oracle_interval *iv = mmap(NULL, logs, PROT_READ | PROT_WRITE,
                                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t pid[CHILDREN];
    int ok = 0;

    CHECK(k != MAP_FAILED && iv != MAP_FAILED, "mmap failed");
    if (k == MAP_FAILED || iv == MAP_FAILED)
        return;
    atomic_init(&k->word, 0);
    atomic_init(&k->max_holders, 0);
    atomic_init(&k->live_overlaps, 0);
    fflush(NULL);
    for (int c = 0; c < CHILDREN; c++) {
        pid[c] = fork();
        if (pid[c] == 0) {
            struct oracle_interval *mine = iv + (size_t)c * ROUNDS;
            for (int i = 0; i < ROUNDS; i++) {
                mine[i].client = (uint32_t)c;
                oracle_enter(k, &mine[i].enter_seq);
                mine[i].exit_seq = oracle_exit(k);
            }
            _exit(0);
        }
        CHECK(pid[c] > 0, "fork failed");
    }
    for (int c = 0; c < CHILDREN; c++) {
        int st;
        if (pid[c] > 0 && waitpid(pid[c], &st, 0) == pid[c] && WIFEXITED(st) &&
            WEXITSTATUS(st) == 0)
            ok++;
    }
    CHECK(ok == CHILDREN, "%d of %d children exited cleanly", ok, CHILDREN);
    CHECK(holders(k) == 0, "holders after fork test %d", holders(k));
    CHECK(atomic_load(&k->max_holders) >= 1 && atomic_load(&k->max_holders) <= CHILDREN,
          "max_holders %d", atomic_load(&k->max_holders));
    struct oracle_sequence seq;
    int rc = oracle_sequence(iv, (size_t)CHILDREN * ROUNDS, &seq);
    CHECK(rc == 0, "oracle_sequence rc %d", rc);
    CHECK(seq.overlaps == atomic_load(&k->live_overlaps),
          "replayed overlaps %lld, live %lld", (long long)seq.overlaps,
          (long long)atomic_load(&k->live_overlaps));
    CHECK(seq.max_holders == atomic_load(&k->max_holders), "replayed max %d, live %d",
          seq.max_holders, atomic_load(&k->max_holders));
    printf("fork test: max_holders %d live_overlaps %lld, replayed from the logs %d %lld\n",
           atomic_load(&k->max_holders), (long long)atomic_load(&k->live_overlaps),
           seq.max_holders, (long long)seq.overlaps);
    munmap(k, sizeof *k);
    munmap(iv, logs);
}

/* The replay on hand-made event numbers, and what it refuses. */
static void test_sequence(void)
{
    /* key 0: A [0,3), B [1,2), C [4,5); key 1: D [0,1), E [2,3) */
    struct oracle_interval iv[] = {
        {.key = 0, .enter_seq = 4, .exit_seq = 5}, {.key = 1, .enter_seq = 2, .exit_seq = 3},
        {.key = 0, .enter_seq = 0, .exit_seq = 3}, {.key = 1, .enter_seq = 0, .exit_seq = 1},
        {.key = 0, .enter_seq = 1, .exit_seq = 2},
    };
    struct oracle_sequence r;
    CHECK(oracle_sequence(iv, 5, &r) == 0, "rc");
    CHECK(r.overlaps == 1 && r.max_holders == 2, "overlaps %lld max %d", (long long)r.overlaps,
          r.max_holders);
    CHECK(oracle_sequence(NULL, 0, &r) == 0 && r.overlaps == 0 && r.max_holders == 0, "empty");
    iv[0].flags = ORACLE_SEQ_UNKNOWN; /* sorted now: iv[0] is A */
    CHECK(oracle_sequence(iv, 5, &r) == -EINVAL, "an unknown sequence is refused");
    iv[0].flags = 0;
    iv[0].exit_seq = 0;
    iv[0].enter_seq = 1;
    CHECK(oracle_sequence(iv, 5, &r) == -EINVAL, "an exit before its entry is refused");
}

/* ------------------------------------------------------------------------
 * Scale
 * --------------------------------------------------------------------- */

static void test_timing(void)
{
    enum { N = 2000000, KEYS = 16 };
    struct oracle_interval *iv = malloc((size_t)N * sizeof *iv);
    struct hist *h = malloc(sizeof *h);
    int64_t t[KEYS] = {0};
    struct oracle_report r;
    double t0, t1;
    int rc;

    /* Mostly back-to-back holders per key, with one in 50 entering early
     * (a violation), logged in per-client order as a real run would be. */
    rng_state = 42;
    for (size_t i = 0; i < N; i++) {
        uint32_t k = (uint32_t)rng_below(KEYS);
        int64_t enter = t[k] + rng_below(20000);
        if (rng_below(50) == 0)
            enter -= rng_below(40000);
        int64_t len = 1000 + rng_below(30000);
        iv[i] = mk(k, enter - rng_below(100000), enter, enter + len);
        iv[i].client = (uint32_t)rng_below(64);
        if (enter + len > t[k])
            t[k] = enter + len;
    }
    shuffle(iv, N);
    hist_init(h);
    t0 = now_s();
    rc = oracle_analyze(iv, N, &r, h);
    t1 = now_s();
    CHECK(rc == 0, "rc %d", rc);
    CHECK(r.intervals == N, "intervals %lld", (long long)r.intervals);
    printf("analysed %d intervals in %.3f s: %lld violations, %lld ns overlap, max %d, "
           "%lld handoffs\n",
           N, t1 - t0, (long long)r.violations, (long long)r.overlap_ns, r.max_concurrent,
           (long long)r.handoffs);
    free(iv);
    free(h);
}

/* Locks taken from their holders by someone else, counted once per victim.
 * Regression: the first detector looked at the live holder count and
 * counted a client that had crashed (or been paused) inside its critical
 * section as the lock's owner, inventing misdeletes for redis-lua, whose
 * release cannot delete another client's lock. The second only saw a
 * victim that entered before the deleter's exit mark, and so missed the
 * GET-then-DEL race, whose victim enters during the deleter's release. */
static void test_misdeletes(void)
{
    /* A: enter 100, exit 600, release returned 650, removed a lock */
    struct oracle_interval a = {.wait_ns = 0, .enter_ns = 100, .exit_ns = 600, .release_ns = 650,
                                .key = 0, .client = 0, .flags = ORACLE_RELEASED_KEY};
    struct oracle_interval b = {.wait_ns = 0, .enter_ns = 300, .exit_ns = 900, .release_ns = 950,
                                .key = 0, .client = 1, .flags = ORACLE_RELEASED_KEY};
    struct oracle_interval iv[3];

    iv[0] = a, iv[1] = b;
    CHECK(oracle_misdeletes(iv, 2) == 1, "B granted after A, inside during A's release: 1");

    iv[0] = a, iv[1] = b;
    iv[0].flags = 0;
    CHECK(oracle_misdeletes(iv, 2) == 0, "A's release removed nothing (not owner): 0");

    iv[0] = a, iv[1] = b;
    iv[1].exit_ns = 640;
    CHECK(oracle_misdeletes(iv, 2) == 0, "B left before A's release returned: 0");

    iv[0] = a, iv[1] = b;
    iv[1].enter_ns = 600;
    CHECK(oracle_misdeletes(iv, 2) == 0, "B entered at A's exit (a clean handoff): 0");

    iv[0] = a, iv[1] = b;
    iv[1].key = 1;
    CHECK(oracle_misdeletes(iv, 2) == 0, "B on another key: 0");

    /* B entered first and A's grant overlapped it: the store held A's lock */
    iv[0] = b, iv[1] = a;
    iv[0].enter_ns = 50;
    iv[0].flags = 0;
    CHECK(oracle_misdeletes(iv, 2) == 0, "the other holder was granted before A: 0");

    /* a chain: A's release hits B, B's release hits C */
    struct oracle_interval c = {.wait_ns = 0, .enter_ns = 700, .exit_ns = 1200,
                                .release_ns = 1250, .key = 0, .client = 2, .flags = 0};
    struct oracle_interval chain[3] = {a, b, c};
    CHECK(oracle_misdeletes(chain, 3) == 2, "chain of two misdeletes: %lld",
          (long long)oracle_misdeletes(chain, 3));

    /* GET-then-DEL: B enters during A's release (after A's exit mark), and
     * its own release finds the lock gone before its TTL: only B's evidence
     * shows it */
    iv[0] = a, iv[1] = b;
    iv[1].enter_ns = 620;
    iv[1].flags = ORACLE_LOST_EARLY;
    CHECK(oracle_misdeletes(iv, 2) == 1, "victim entered during the deleter's release: 1");
    iv[1].flags = 0;
    CHECK(oracle_misdeletes(iv, 2) == 0, "the same without the victim's evidence: 0");

    /* both kinds of evidence for one victim: counted once */
    iv[0] = a, iv[1] = b;
    iv[1].flags |= ORACLE_LOST_EARLY;
    CHECK(oracle_misdeletes(iv, 2) == 1, "one victim, two kinds of evidence: 1");

    /* two holders inside A's release: A deleted one lock, the latest one's */
    iv[0] = a, iv[1] = b, iv[2] = b;
    iv[2].enter_ns = 400;
    iv[2].client = 2;
    iv[1].flags = iv[2].flags = 0;
    CHECK(oracle_misdeletes(iv, 3) == 1, "one release deletes one lock: %lld",
          (long long)oracle_misdeletes(iv, 3));
    /* ... and it is the latest one's: the first, whose own release showed
     * its lock gone, is a victim by its own evidence, so two in all */
    iv[1].flags = ORACLE_LOST_EARLY;
    CHECK(oracle_misdeletes(iv, 3) == 2, "the latest grantee is the one deleted: %lld",
          (long long)oracle_misdeletes(iv, 3));

    /* B inside A's whole release, but C was granted during it (after A's
     * exit mark): A's DEL removed C's lock, not B's; only C's own evidence
     * can show it */
    iv[0] = a, iv[1] = b, iv[2] = b;
    iv[1].flags = 0;
    iv[2].enter_ns = 620;
    iv[2].client = 2;
    iv[2].flags = ORACLE_LOST_EARLY;
    CHECK(oracle_misdeletes(iv, 3) == 1, "the lock deleted was C's, not B's: %lld",
          (long long)oracle_misdeletes(iv, 3));
}

/* Holders the fenced resource refused: stale (a later grant overlapped
 * them: the lock passed on while they held it) or rightful (nobody newer
 * held it: the token sequence went backwards). */
static void test_rightful_refusals(void)
{
    struct oracle_interval a = {.enter_ns = 100, .exit_ns = 600, .release_ns = 650, .key = 0,
                                .client = 0};
    struct oracle_interval b = {.enter_ns = 300, .exit_ns = 900, .release_ns = 950, .key = 0,
                                .client = 1};
    struct oracle_interval iv[2];

    iv[0] = a, iv[1] = b;
    iv[0].flags = ORACLE_REFUSED;
    CHECK(oracle_rightful_refusals(iv, 2) == 0, "A refused, B granted while A held: stale, 0");
    iv[0] = a, iv[1] = b;
    iv[1].flags = ORACLE_REFUSED;
    CHECK(oracle_rightful_refusals(iv, 2) == 1, "B refused, nobody newer overlapped B: 1");
    iv[0] = a, iv[1] = b;
    iv[1].enter_ns = 600;
    iv[0].flags = iv[1].flags = ORACLE_REFUSED;
    CHECK(oracle_rightful_refusals(iv, 2) == 2, "two clean handoffs, both refused: 2");
    iv[0] = a, iv[1] = b;
    iv[1].key = 1;
    iv[0].flags = ORACLE_REFUSED;
    CHECK(oracle_rightful_refusals(iv, 2) == 1, "the overlapping grant was another key's: 1");
    iv[0] = a, iv[1] = b;
    CHECK(oracle_rightful_refusals(iv, 2) == 0, "nobody refused: 0");
}

/* The stale holder of an overlap, A (entered first, at 100, left at 1000),
 * and B granted at 400 while A was inside: what A did from 400 to 1000. */
static struct oracle_stale stale_of(struct oracle_interval *iv, size_t n)
{
    struct oracle_stale st;
    struct oracle_report r;
    CHECK(oracle_analyze(iv, n, &r, NULL) == 0, "analyze");
    CHECK(oracle_stale_holders(iv, n, &st) == 0, "stale holders");
    CHECK(st.through + st.ordered + st.refused + st.noticed + st.chance == r.violations,
          "the pairs add up to the violations: %lld+%lld+%lld+%lld+%lld vs %lld",
          (long long)st.through, (long long)st.ordered, (long long)st.refused,
          (long long)st.noticed, (long long)st.chance, (long long)r.violations);
    return st;
}

static void test_stale_holders(void)
{
    const struct oracle_interval a = {.enter_ns = 100, .exit_ns = 1000, .release_ns = 1010,
                                      .client = 0};
    const struct oracle_interval b = {.enter_ns = 400, .exit_ns = 1200, .release_ns = 1210,
                                      .client = 1, .last_access_ns = 1190};
    struct oracle_interval iv[3];
    struct oracle_stale st;

    /* through: A read at 110, wrote at 900 (after B's grant), unfenced */
    iv[0] = a, iv[1] = b;
    iv[0].last_access_ns = 900;
    st = stale_of(iv, 2);
    CHECK(st.through == 1 && st.ordered + st.refused + st.noticed + st.chance == 0,
          "an unchecked write after the later grant: through");
    CHECK(st.holders == 1 && st.window_p50_ns == 600 && st.window_max_ns == 600,
          "window from B's grant (400) to A's exit (1000): %lld", (long long)st.window_max_ns);

    /* ordered: the same write, fenced (a token) and accepted: B had not
     * reached the store yet */
    iv[0] = a, iv[1] = b;
    iv[0].last_access_ns = 900;
    iv[0].flags = ORACLE_FENCED;
    st = stale_of(iv, 2);
    CHECK(st.ordered == 1 && st.through + st.refused + st.noticed + st.chance == 0,
          "a fenced write accepted after the later grant: ordered, not through");

    iv[0].flags = ORACLE_FENCED | ORACLE_REFUSED;
    st = stale_of(iv, 2);
    CHECK(st.refused == 1 && st.ordered == 0, "fenced and refused: refused");

    /* refused: the same write, refused by the fence */
    iv[0] = a, iv[1] = b;
    iv[0].last_access_ns = 900;
    iv[0].flags = ORACLE_REFUSED;
    st = stale_of(iv, 2);
    CHECK(st.refused == 1 && st.through == 0, "the write after the later grant refused: refused");

    /* refused: its only access, a read after the grant, refused */
    iv[0] = a, iv[1] = b;
    iv[0].last_access_ns = 450;
    iv[0].flags = ORACLE_REFUSED;
    st = stale_of(iv, 2);
    CHECK(st.refused == 1 && st.through == 0, "one access, refused: refused");

    /* noticed: read before the grant, abandoned at 700, nothing written */
    iv[0] = a, iv[1] = b;
    iv[0].last_access_ns = 110;
    iv[0].flags = ORACLE_NOTICED, iv[0].notice_ns = 700;
    st = stale_of(iv, 2);
    CHECK(st.noticed == 1 && st.through + st.refused + st.chance == 0,
          "abandoned on the lost flag, nothing after the grant: noticed");
    CHECK(st.holders_noticed == 1 && st.window_max_ns == 300,
          "window to the notice (700), not the exit: %lld", (long long)st.window_max_ns);

    /* noticed before the later grant: the window is 0 */
    iv[0] = a, iv[1] = b;
    iv[0].last_access_ns = 110;
    iv[0].flags = ORACLE_NOTICED, iv[0].notice_ns = 300;
    st = stale_of(iv, 2);
    CHECK(st.noticed == 1 && st.window_max_ns == 0, "noticed before the grant: window 0");

    /* a read after the grant, then the notice before the write (a holder
     * paused between its grant and its read, tests/it_fencing.sh's zk
     * abort): the read led to nothing, noticed, not through */
    iv[0] = a, iv[1] = b;
    iv[0].last_access_ns = 450;
    iv[0].flags = ORACLE_NOTICED, iv[0].notice_ns = 700;
    st = stale_of(iv, 2);
    CHECK(st.noticed == 1 && st.through + st.ordered + st.refused + st.chance == 0,
          "a read after the grant, then abandoned before the write: noticed");
    iv[0].flags |= ORACLE_FENCED;
    st = stale_of(iv, 2);
    CHECK(st.noticed == 1 && st.ordered == 0, "the same, fenced: noticed, not ordered");

    /* chance: read and write both before B's grant, A left after it */
    iv[0] = a, iv[1] = b;
    iv[0].last_access_ns = 350;
    st = stale_of(iv, 2);
    CHECK(st.chance == 1 && st.through + st.ordered + st.refused + st.noticed == 0,
          "its accesses all before the later grant, nothing stopped it: chance");
    iv[0].flags = ORACLE_FENCED;
    st = stale_of(iv, 2);
    CHECK(st.chance == 1, "... fenced or not");

    /* chance: no access at all (died before its read, or the lab killed it) */
    iv[0] = a, iv[1] = b;
    iv[0].flags = ORACLE_DIED;
    st = stale_of(iv, 2);
    CHECK(st.chance == 1, "no access, no notice, no refusal: chance");

    /* two later grants: the write at 900 came after B's (400) and before
     * C's (950): through for (A,B), chance for (A,C); the window counts
     * from the first later grant */
    iv[0] = a, iv[1] = b;
    iv[1].exit_ns = 940;
    iv[2] = b;
    iv[2].client = 2, iv[2].enter_ns = 950, iv[2].exit_ns = 1300;
    iv[0].last_access_ns = 900;
    st = stale_of(iv, 3);
    CHECK(st.through == 1 && st.chance == 1 && st.holders == 1 && st.window_max_ns == 600,
          "two later grants: one through, one chance, one holder, window 600: %lld %lld %lld %lld",
          (long long)st.through, (long long)st.chance, (long long)st.holders,
          (long long)st.window_max_ns);

    /* refused before C's grant and nothing after: refused for both pairs */
    iv[0].flags = ORACLE_REFUSED;
    st = stale_of(iv, 3);
    CHECK(st.refused == 2 && st.chance == 0, "refused, then nothing more: refused twice");

    /* no overlap (B after A's exit, or on another key): no stale holder */
    iv[0] = a, iv[1] = b;
    iv[1].enter_ns = 1000;
    st = stale_of(iv, 2);
    CHECK(st.holders == 0 && st.window_p50_ns == -1 && st.window_max_ns == -1,
          "a clean handoff: no stale holder, no window");
    iv[0] = a, iv[1] = b;
    iv[1].key = 1;
    st = stale_of(iv, 2);
    CHECK(st.holders == 0 && st.chance == 0, "another key's grant: no stale holder");
}

/* The median and the maximum over several stale holders, on two keys. */
static void test_stale_windows(void)
{
    struct oracle_interval iv[6];
    int64_t w[3] = {50, 300, 20}; /* windows: the later grant 10 after entry, exits spread */
    for (int i = 0; i < 3; i++) {
        iv[2 * i] = (struct oracle_interval){.key = (uint32_t)(i % 2), .client = 0,
                                             .enter_ns = 1000 * i, .exit_ns = 1000 * i + 10 + w[i]};
        iv[2 * i + 1] = (struct oracle_interval){.key = (uint32_t)(i % 2), .client = 1,
                                                 .enter_ns = 1000 * i + 10,
                                                 .exit_ns = 1000 * i + 900};
    }
    struct oracle_stale st = stale_of(iv, 6);
    CHECK(st.holders == 3 && st.chance == 3, "three stale holders, untouched by chance");
    CHECK(st.window_p50_ns == 50 && st.window_max_ns == 300, "p50 50, max 300: %lld %lld",
          (long long)st.window_p50_ns, (long long)st.window_max_ns);
}

int main(void)
{
    test_empty();
    test_sequential();
    test_pair_300();
    test_nested();
    test_keys_independent();
    test_shuffled();
    test_sorted_in_place();
    test_invalid();
    test_handoff();
    test_random_bruteforce();
    test_random_handoff();
    test_enter_exit_sequence();
    test_enter_exit_fork();
    test_sequence();
    test_misdeletes();
    test_rightful_refusals();
    test_stale_holders();
    test_stale_windows();
    test_timing();
    return check_done();
}
