/*
 * test_hist.c - unit test of the latency histogram (common/hist.c).
 *
 * Checks the promises hist.h makes: percentiles within 0.1% of the exact
 * ones on log-uniform data spanning six and nine orders of magnitude, exact
 * values below 2048 us, correct min/max/mean/total, clamping above one hour,
 * merging two halves equal to recording everything in one histogram, and a
 * .hgrm file that parses back into a monotone table ending at 100% with a
 * footer matching the histogram. Data comes from a fixed-seed xorshift
 * generator so every run sees the same values.
 */
#include "hist.h"
#include "check.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N 200000

/* ------------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

/* xorshift64*: good enough for test data, fully deterministic. */
static uint64_t rng_next(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, 1). */
static double rng_unit(void)
{
    return (double)(rng_next() >> 11) / 9007199254740992.0; /* 2^53 */
}

/* Log-uniform integer in [1, hi]. */
static int64_t rng_log_uniform(double hi)
{
    int64_t v = (int64_t)exp(rng_unit() * log(hi));
    return v < 1 ? 1 : v;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Percentiles under test, in thousandths of a percent so the exact rank
 * ceil(p/100 * n) can be computed in integers. */
static const int64_t pct_milli[] = {0, 1000, 10000, 25000, 50000, 75000,
                                    90000, 99000, 99900, 99990, 100000};
#define NPCT ((int)(sizeof(pct_milli) / sizeof(pct_milli[0])))

/* Exact percentile of a sorted array: sorted[ceil(p/100 * n) - 1]. */
static int64_t exact_pct(const int64_t *sorted, int64_t n, int64_t milli)
{
    int64_t rank = (milli * n + 99999) / 100000;
    if (rank < 1)
        rank = 1;
    return sorted[rank - 1];
}

static struct hist *hist_new(void)
{
    struct hist *h = malloc(sizeof(*h));
    if (!h) {
        perror("malloc");
        exit(2);
    }
    hist_init(h);
    return h;
}

/* -------------------------------------------------------------------- tests */

/* Percentiles, min, max, mean, stddev and merge on log-uniform data in
 * [1, hi]. */
static void test_random(double hi)
{
    int64_t *vals = malloc(N * sizeof(*vals));
    struct hist *all = hist_new(), *a = hist_new(), *b = hist_new();
    if (!vals) {
        perror("malloc");
        exit(2);
    }
    double sum = 0;
    int64_t mn = INT64_MAX, mx = 0;
    for (int i = 0; i < N; i++) {
        vals[i] = rng_log_uniform(hi);
        hist_record(all, vals[i]);
        hist_record(i < N / 2 ? a : b, vals[i]);
        sum += (double)vals[i];
        mn = vals[i] < mn ? vals[i] : mn;
        mx = vals[i] > mx ? vals[i] : mx;
    }
    double mean = sum / N, ss = 0;
    for (int i = 0; i < N; i++)
        ss += ((double)vals[i] - mean) * ((double)vals[i] - mean);
    double sd = sqrt(ss / N);

    CHECK(all->total == N, "hi=%g total %lld", hi, (long long)all->total);
    CHECK(all->min == mn, "hi=%g min %lld want %lld", hi, (long long)all->min, (long long)mn);
    CHECK(all->max == mx, "hi=%g max %lld want %lld", hi, (long long)all->max, (long long)mx);
    CHECK(all->clamped == 0, "hi=%g clamped %lld", hi, (long long)all->clamped);
    CHECK(fabs(hist_mean(all) - mean) <= 1e-9 * mean, "hi=%g mean %f want %f", hi,
          hist_mean(all), mean);
    CHECK(fabs(hist_stddev(all) - sd) <= 1e-6 * sd, "hi=%g stddev %f want %f", hi,
          hist_stddev(all), sd);

    qsort(vals, N, sizeof(*vals), cmp_i64);
    for (int k = 0; k < NPCT; k++) {
        double p = (double)pct_milli[k] / 1000.0;
        int64_t want = exact_pct(vals, N, pct_milli[k]);
        int64_t got = hist_percentile(all, p);
        CHECK(got >= want && (double)(got - want) <= 0.001 * (double)want,
              "hi=%g p%g: got %lld, exact %lld", hi, p, (long long)got, (long long)want);
    }
    CHECK(hist_percentile(all, 100) == mx, "hi=%g p100 %lld, max %lld", hi,
          (long long)hist_percentile(all, 100), (long long)mx);

    /* Merging the two halves must give the very same histogram. */
    hist_merge(a, b);
    CHECK(memcmp(a->counts, all->counts, sizeof(a->counts)) == 0, "hi=%g merged counts differ", hi);
    CHECK(a->total == all->total && a->min == all->min && a->max == all->max &&
              a->clamped == all->clamped,
          "hi=%g merged total/min/max/clamped differ", hi);
    CHECK(fabs(a->sum - all->sum) <= 1e-9 * all->sum, "hi=%g merged sum", hi);
    for (int k = 0; k < NPCT; k++) {
        double p = (double)pct_milli[k] / 1000.0;
        CHECK(hist_percentile(a, p) == hist_percentile(all, p), "hi=%g merged p%g", hi, p);
    }

    free(vals);
    free(all);
    free(a);
    free(b);
}

/* Below 2048 us every value has a slot of its own and reads back exactly. */
static void test_small_exact(void)
{
    struct hist *h = hist_new();
    for (int64_t v = 0; v < 2048; v++)
        hist_record(h, v);
    int nonzero = 0, ones = 0;
    for (int i = 0; i < HIST_COUNTS; i++) {
        nonzero += h->counts[i] != 0;
        ones += h->counts[i] == 1;
    }
    CHECK(nonzero == 2048 && ones == 2048, "2048 values in %d slots (%d with one)", nonzero, ones);
    int bad = 0;
    for (int64_t v = 0; v < 2048; v++) {
        /* v is the (v+1)-th smallest of 2048: percentile 100*(v+1)/2048. */
        int64_t got = hist_percentile(h, 100.0 * (double)(v + 1) / 2048.0);
        if (got != v && bad++ < 5)
            CHECK(got == v, "small value %lld read back as %lld", (long long)v, (long long)got);
    }
    CHECK(bad == 0, "%d small values not exact", bad);
    CHECK(hist_percentile(h, 0) == 0 && hist_percentile(h, 100) == 2047, "small p0/p100");
    free(h);
}

/* Every magnitude up to one hour, especially around powers of two: the
 * reported value is the top of the value's slot, >= v and within 0.1%. */
static void test_precision_sweep(void)
{
    struct hist *h = hist_new();
    int bad = 0, tried = 0;
    for (int bit = 0; bit <= 32; bit++) {
        int64_t base = (int64_t)1 << bit;
        int64_t probes[] = {base - 1, base, base + 1, base + base / 3, base + base / 2};
        for (int j = 0; j < 5; j++) {
            int64_t v = probes[j];
            if (v < 1 || v >= HIST_HIGHEST_US)
                continue;
            hist_init(h);
            hist_record(h, v);
            hist_record(h, HIST_HIGHEST_US); /* so the cap at max does not hide the slot top */
            int64_t got = hist_percentile(h, 50);
            tried++;
            if (!(got >= v && (double)(got - v) <= 0.001 * (double)v)) {
                if (bad++ < 5)
                    CHECK(0, "value %lld read back as %lld", (long long)v, (long long)got);
            }
        }
    }
    CHECK(bad == 0 && tried > 100, "%d of %d probes outside 0.1%%", bad, tried);
    free(h);
}

/* Negative values count as 0, values above one hour as one hour. */
static void test_clamp(void)
{
    struct hist *h = hist_new();
    hist_record(h, -5);
    hist_record(h, 10);
    hist_record(h, HIST_HIGHEST_US);
    hist_record(h, HIST_HIGHEST_US + 1);
    hist_record(h, INT64_MAX);
    CHECK(h->total == 5, "total %lld", (long long)h->total);
    CHECK(h->clamped == 2, "clamped %lld", (long long)h->clamped);
    CHECK(h->min == 0, "min %lld", (long long)h->min);
    CHECK(h->max == HIST_HIGHEST_US, "max %lld", (long long)h->max);
    CHECK(hist_percentile(h, 0) == 0, "p0 %lld", (long long)hist_percentile(h, 0));
    CHECK(hist_percentile(h, 100) == HIST_HIGHEST_US, "p100 %lld",
          (long long)hist_percentile(h, 100));
    CHECK(hist_percentile(h, 40) == 10, "p40 %lld", (long long)hist_percentile(h, 40));
    double mean = (0 + 10 + 3.0 * HIST_HIGHEST_US) / 5;
    CHECK(fabs(hist_mean(h) - mean) < 1e-6 * mean, "mean %f want %f", hist_mean(h), mean);

    /* Empty histogram; merging into and from an empty one. */
    struct hist *e = hist_new();
    CHECK(hist_percentile(e, 50) == 0 && hist_mean(e) == 0 && hist_stddev(e) == 0, "empty stats");
    hist_merge(h, e);
    CHECK(h->total == 5 && h->min == 0, "merge of empty changed dst");
    hist_merge(e, h);
    CHECK(e->total == 5 && e->min == 0 && e->max == HIST_HIGHEST_US && e->clamped == 2,
          "merge into empty");
    free(h);
    free(e);
}

/* ------------------------------------------------------------------- .hgrm */

struct row {
    double value, pct, inv;
    long long count;
    int fields;
};

struct hgrm {
    int header_ok;
    int nrows;
    struct row rows[4096];
    int footer_lines;
    double mean, sd, max;
    long long total;
    int buckets, subs;
};

static void hgrm_parse(FILE *f, struct hgrm *g)
{
    char line[256];
    memset(g, 0, sizeof(*g));
    rewind(f);
    if (fgets(line, sizeof(line), f))
        g->header_ok = strcmp(line, "       Value     Percentile TotalCount 1/(1-Percentile)\n") == 0;
    if (!fgets(line, sizeof(line), f) || strcmp(line, "\n") != 0)
        g->header_ok = 0;
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '#') {
            g->footer_lines +=
                sscanf(line, "#[Mean    = %lf, StdDeviation   = %lf]", &g->mean, &g->sd) == 2 ||
                sscanf(line, "#[Max     = %lf, Total count    = %lld]", &g->max, &g->total) == 2 ||
                sscanf(line, "#[Buckets = %d, SubBuckets     = %d]", &g->buckets, &g->subs) == 2;
            continue;
        }
        if (g->nrows == 4096)
            break;
        struct row *r = &g->rows[g->nrows++];
        r->fields = sscanf(line, "%lf %lf %lld %lf", &r->value, &r->pct, &r->count, &r->inv);
    }
}

static void test_hgrm(void)
{
    struct hist *h = hist_new();
    static struct hgrm g;
    rng_state = 12345;
    for (int i = 0; i < N; i++)
        hist_record(h, rng_log_uniform(1e6));

    FILE *f = tmpfile();
    CHECK(f != NULL, "tmpfile: %s", strerror(errno));
    if (!f)
        return;
    CHECK(hist_write_hgrm(h, f, 5, 1.0) == 0, "write_hgrm failed");
    hgrm_parse(f, &g);
    CHECK(g.header_ok, "bad header");
    CHECK(g.nrows > 20, "only %d rows", g.nrows);
    int mono = 1, fields = 1, consistent = 1, inv_ok = 1;
    for (int i = 0; i < g.nrows; i++) {
        struct row *r = &g.rows[i];
        if (i < g.nrows - 1) {
            fields &= r->fields == 4;
            inv_ok &= fabs(r->inv - 1.0 / (1.0 - r->pct)) <= 0.01 + 1e-6 * r->inv;
        }
        if (i > 0) {
            struct row *q = &g.rows[i - 1];
            mono &= r->pct >= q->pct && r->value >= q->value && r->count >= q->count;
        }
        /* The row's value is the percentile at its cumulative count. */
        double at = 100.0 * (double)r->count / (double)h->total;
        consistent &= fabs(r->value - (double)hist_percentile(h, at)) < 0.001;
    }
    CHECK(fields, "a non-final row lacks a column");
    CHECK(inv_ok, "1/(1-Percentile) column wrong");
    CHECK(mono, "rows not non-decreasing");
    CHECK(consistent, "row values disagree with hist_percentile");
    struct row *last = &g.rows[g.nrows - 1];
    CHECK(last->fields == 3 && last->pct == 1.0 && last->count == h->total,
          "last row: %d fields, pct %f, count %lld", last->fields, last->pct, last->count);
    CHECK(last->value == (double)h->max, "last value %f, max %lld", last->value, (long long)h->max);
    /* HdrHistogram's level sequence with 5 ticks per half distance. */
    static const double levels[] = {0, .1, .2, .3, .4, .5, .55, .6, .65, .7, .75, .775, .8};
    int lv = 1;
    for (int i = 0; i < 13; i++)
        lv &= fabs(g.rows[i].pct - levels[i]) < 1e-9;
    CHECK(lv, "percentile levels differ from HdrHistogram's sequence");
    CHECK(g.footer_lines == 3, "footer lines %d", g.footer_lines);
    CHECK(fabs(g.mean - hist_mean(h)) < 0.001 && fabs(g.sd - hist_stddev(h)) < 0.001,
          "footer mean/sd %f/%f", g.mean, g.sd);
    CHECK(g.max == (double)h->max && g.total == h->total, "footer max/total");
    CHECK(g.buckets == HIST_BUCKETS && g.subs == HIST_SUB_BUCKETS, "footer buckets %d/%d",
          g.buckets, g.subs);
    fclose(f);

    /* Milliseconds: every value and the footer divided by 1000. */
    f = tmpfile();
    if (f) {
        CHECK(hist_write_hgrm(h, f, 1, 1000.0) == 0, "write_hgrm ms failed");
        hgrm_parse(f, &g);
        CHECK(g.header_ok && g.nrows > 5 && g.rows[g.nrows - 1].pct == 1.0, "ms table");
        CHECK(fabs(g.max - (double)h->max / 1000.0) < 0.001, "ms max %f", g.max);
        CHECK(fabs(g.rows[g.nrows - 1].value - (double)h->max / 1000.0) < 0.001, "ms last row");
        fclose(f);
    }

    /* Empty: header and footer only. */
    hist_init(h);
    f = tmpfile();
    if (f) {
        CHECK(hist_write_hgrm(h, f, 5, 1.0) == 0, "write_hgrm empty failed");
        hgrm_parse(f, &g);
        CHECK(g.header_ok && g.nrows == 0 && g.footer_lines == 3, "empty: header %d rows %d footer %d",
              g.header_ok, g.nrows, g.footer_lines);
        CHECK(g.total == 0 && g.max == 0 && g.mean == 0 && g.buckets == HIST_BUCKETS, "empty footer");
        fclose(f);
    }

    /* Write error: a read-only stream. */
    f = fopen("/dev/null", "r");
    if (f) {
        int rc = hist_write_hgrm(h, f, 5, 1.0);
        CHECK(rc < 0, "write to read-only stream returned %d", rc);
        fclose(f);
    }
    CHECK(hist_write_hgrm(h, stdout, 0, 1.0) == -EINVAL, "ticks 0 accepted");
    free(h);
}

int main(void)
{
    rng_state = 0x9E3779B97F4A7C15ULL;
    test_random(1e6);
    test_random(1e9);
    test_small_exact();
    test_precision_sweep();
    test_clamp();
    test_hgrm();
    return check_done();
}
