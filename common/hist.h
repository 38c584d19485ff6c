/*
 * hist.h - log-linear latency histogram in the style of HdrHistogram.
 *
 * Values are integers in microseconds, tracked from 1 us to 1 hour with
 * 3 significant digits: each power-of-two bucket is split into 2048
 * linear sub-buckets, so any recorded value is reported back within 0.1%.
 * The struct is fixed-size and holds no pointers, so a client process can
 * keep its histograms directly in the run's shared memory slot and the
 * parent can merge them after the run (or after the client crashed).
 */
#ifndef LOCKLAB_HIST_H
#define LOCKLAB_HIST_H

#include <stdint.h>
#include <stdio.h>

#define HIST_HIGHEST_US 3600000000LL /* 1 hour */
#define HIST_SUB_BUCKETS 2048        /* 2^ceil(log2(2 * 10^3)) */
#define HIST_BUCKETS 22              /* 2048 << 21 > 1 hour in us */
#define HIST_COUNTS ((HIST_BUCKETS + 1) * (HIST_SUB_BUCKETS / 2))

struct hist {
    int64_t total;               /* number of recorded values */
    int64_t min;                 /* smallest recorded value (INT64_MAX when empty) */
    int64_t max;                 /* largest recorded value (0 when empty) */
    int64_t clamped;             /* values above HIST_HIGHEST_US, recorded as the highest */
    double sum;                  /* sum of recorded values, for the mean */
    double sumsq;                /* sum of squares, for the standard deviation */
    int64_t counts[HIST_COUNTS]; /* the log-linear buckets */
};

/* Empty h. */
void hist_init(struct hist *h);

/* Empty h, which is all zero already (fresh anonymous memory): only its
 * header is written, so the bucket pages a run never records into are
 * never touched (a client group's thousands of histograms). */
void hist_init_zeroed(struct hist *h);

/* Record one value in microseconds; negative values count as 0, values above
 * one hour as one hour (counted in h->clamped). */
void hist_record(struct hist *h, int64_t value_us);

/* Add every count of src into dst. */
void hist_merge(struct hist *dst, const struct hist *src);

/* Value at percentile p (0..100): the smallest recorded value v (reported as
 * the highest value equivalent to it) such that at least ceil(p/100 * total)
 * values are <= v. 0 when empty. */
int64_t hist_percentile(const struct hist *h, double p);

double hist_mean(const struct hist *h);
double hist_stddev(const struct hist *h);

/* Write HdrHistogram's percentile-distribution text format
 * ("Value Percentile TotalCount 1/(1-Percentile)" and the #[Mean...] footer)
 * with values divided by unit_scale (1.0 for microseconds). 0 or -errno. */
int hist_write_hgrm(const struct hist *h, FILE *f, int ticks_per_half, double unit_scale);

#endif
