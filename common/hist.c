/*
 * hist.c - the log-linear latency histogram declared in hist.h.
 *
 * Layout of counts[]: values below 2048 us each get a slot of their own
 * (slots 0..2047). Above that, every power of two [2^k, 2^(k+1)) with
 * k >= 11 is split into 1024 slots of width 2^(k-10), so the slot width is
 * never more than 1/1024 of the values it holds: a value read back as the
 * top of its slot is off by less than 0.1%. Bucket b (0..21) covers the
 * "upper half" sub-buckets 1024..2047 shifted left by b; bucket 0 also owns
 * the lower half 0..1023, which is why the array has (22 + 1) * 1024 slots.
 *
 * Recording is the hot path of every benchmark, so the slot is computed
 * without loops or division: the bucket comes from the position of the
 * highest set bit (one count-leading-zeros instruction), the sub-bucket from
 * a shift. The float sums for mean and standard deviation are the only
 * floating-point work. Everything slower (percentiles, merging, the .hgrm
 * writer) walks the 23552 slots once and runs only after a run.
 *
 * The .hgrm writer follows the percentile iteration of HdrHistogram's
 * outputPercentileDistribution: it starts at 0% and after each reported row
 * advances the target by 100 / (ticks_per_half * 2^(h+1)), where h is how
 * many times the distance to 100% has halved, so the rows crowd towards the
 * tail; a final 100% row closes the table. Reported values are capped at
 * the exact maximum, as hist_percentile() does.
 */
#include "hist.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- index math */

#define SUB_HALF (HIST_SUB_BUCKETS / 2) /* 1024 */
#define SUB_HALF_SHIFT 10               /* log2(SUB_HALF) */
#define SUB_SHIFT 11                    /* log2(HIST_SUB_BUCKETS) */

/* Slot of a value in 0..HIST_HIGHEST_US. */
static inline int slot_of(int64_t v)
{
    /* Highest set bit of v, but never below bit 10, so values < 2048 land in
     * bucket 0. 64 - clz is the bit length; bucket = bit length - 11. */
    uint64_t u = (uint64_t)v | (HIST_SUB_BUCKETS - 1);
    int bucket = (64 - __builtin_clzll(u)) - SUB_SHIFT;
    int sub = (int)(v >> bucket); /* 1024..2047, or 0..1023 in bucket 0 */
    return ((bucket + 1) << SUB_HALF_SHIFT) + (sub - SUB_HALF);
}

/* Lowest value that lands in slot i, and the slot's width (as a shift). */
static inline int64_t slot_low(int i, int *shift)
{
    int bucket = (i >> SUB_HALF_SHIFT) - 1;
    int64_t sub = (i & (SUB_HALF - 1)) + SUB_HALF;
    if (bucket < 0) { /* lower half of bucket 0: values 0..1023 */
        bucket = 0;
        sub -= SUB_HALF;
    }
    *shift = bucket;
    return sub << bucket;
}

/* Highest value that lands in slot i. */
static inline int64_t slot_high(int i)
{
    int shift;
    int64_t low = slot_low(i, &shift);
    return low + ((int64_t)1 << shift) - 1;
}

/* --------------------------------------------------------------- recording */

void hist_init(struct hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = INT64_MAX;
    h->max = 0;
}

void hist_init_zeroed(struct hist *h)
{
    h->min = INT64_MAX;
}

void hist_record(struct hist *h, int64_t value_us)
{
    int64_t v = value_us;
    if (v < 0)
        v = 0;
    if (v > HIST_HIGHEST_US) {
        v = HIST_HIGHEST_US;
        h->clamped++;
    }
    h->counts[slot_of(v)]++;
    h->total++;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    double d = (double)v;
    h->sum += d;
    h->sumsq += d * d;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    if (src->total == 0)
        return;
    /* every count lies between the slots of min and max: the buckets
     * outside were never written, and reading them would make a
     * histogram in fresh shared memory take pages it never needed */
    for (int i = slot_of(src->min), hi = slot_of(src->max); i <= hi; i++)
        dst->counts[i] += src->counts[i];
    dst->total += src->total;
    dst->clamped += src->clamped;
    dst->sum += src->sum;
    dst->sumsq += src->sumsq;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

/* ---------------------------------------------------------------- statistics */

/* ceil(x) for a non-negative count target, forgiving the rounding noise of
 * p / 100 * total (99.9% of 200000 must be 199800, not 199801). */
static int64_t count_ceil(double x)
{
    double r = nearbyint(x);
    if (fabs(x - r) <= 1e-9 * (r > 1.0 ? r : 1.0))
        return (int64_t)r;
    return (int64_t)ceil(x);
}

int64_t hist_percentile(const struct hist *h, double p)
{
    if (h->total == 0)
        return 0;
    if (!(p > 0.0)) /* also catches NaN */
        p = 0.0;
    if (p > 100.0)
        p = 100.0;
    int64_t want = count_ceil(p / 100.0 * (double)h->total);
    if (want < 1)
        want = 1;
    if (want > h->total)
        want = h->total;

    int64_t cum = 0;
    for (int i = 0; i < HIST_COUNTS; i++) {
        cum += h->counts[i];
        if (cum >= want) {
            int64_t v = slot_high(i);
            return v < h->max ? v : h->max;
        }
    }
    return h->max; /* counts and total disagree (torn shared memory) */
}

double hist_mean(const struct hist *h)
{
    return h->total ? h->sum / (double)h->total : 0.0;
}

/* Population standard deviation from the running sums. */
double hist_stddev(const struct hist *h)
{
    if (h->total == 0)
        return 0.0;
    double mean = h->sum / (double)h->total;
    double var = h->sumsq / (double)h->total - mean * mean;
    return var > 0.0 ? sqrt(var) : 0.0;
}

/* ----------------------------------------------------------------- .hgrm out */

/* Next percentile target after `level` (0..100): the step halves every time
 * the distance to 100% halves. */
static double next_level(double level, int ticks_per_half)
{
    double halvings = floor(log2(100.0 / (100.0 - level)));
    double ticks = (double)ticks_per_half * exp2(halvings + 1.0);
    return level + 100.0 / ticks;
}

int hist_write_hgrm(const struct hist *h, FILE *f, int ticks_per_half, double unit_scale)
{
    if (ticks_per_half < 1 || !(unit_scale > 0.0))
        return -EINVAL;

    errno = 0;
    fprintf(f, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
            "1/(1-Percentile)");

    if (h->total > 0) {
        double total = (double)h->total;
        double level = 0.0;
        int64_t cum = 0;
        int64_t value = 0;
        for (int i = 0; i < HIST_COUNTS && cum < h->total; i++) {
            if (h->counts[i] == 0)
                continue;
            cum += h->counts[i];
            value = slot_high(i);
            if (value > h->max)
                value = h->max;
            /* One row per target level this slot reaches; once the last
             * count is in, only one row, and the 100% row follows. */
            while (100.0 * (double)cum / total >= level) {
                double frac = level / 100.0;
                fprintf(f, "%12.3f %2.12f %10lld %14.2f\n", (double)value / unit_scale,
                        frac, (long long)cum, 1.0 / (1.0 - frac));
                if (cum >= h->total)
                    break;
                double next = next_level(level, ticks_per_half);
                if (!(next > level) || next >= 100.0)
                    break; /* float precision exhausted */
                level = next;
            }
        }
        fprintf(f, "%12.3f %2.12f %10lld\n", (double)value / unit_scale, 1.0,
                (long long)h->total);
    }

    fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n",
            hist_mean(h) / unit_scale, hist_stddev(h) / unit_scale);
    fprintf(f, "#[Max     = %12.3f, Total count    = %12lld]\n",
            (double)h->max / unit_scale, (long long)h->total);
    fprintf(f, "#[Buckets = %12d, SubBuckets     = %12d]\n", HIST_BUCKETS, HIST_SUB_BUCKETS);

    if (fflush(f) != 0 || ferror(f))
        return -(errno ? errno : EIO);
    return 0;
}
