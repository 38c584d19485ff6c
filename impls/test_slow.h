/*
 * test_slow.h - the test-only slowdown switch, LOCKLAB_TEST_SLOW, with
 * which tests/it_baseline.sh and scripts/measure-gate show that the
 * baseline gate sees a design that got slower. Never for real runs: a
 * switched-on design measures a slowdown that was put there on purpose.
 *
 *   LOCKLAB_TEST_SLOW=redis-lua:acquire      every attempt does its round trip twice
 *   LOCKLAB_TEST_SLOW=redis-lua:release      every release runs its script twice
 *   LOCKLAB_TEST_SLOW=redis-lua:acquire=1.2  every attempt is stretched (by spinning
 *   LOCKLAB_TEST_SLOW=redis-lua:release=1.2  after it) to 1.2 times its own duration
 *
 * Entries may be joined by ",". Only redis-lua has the switch.
 */
#ifndef LOCKLAB_TEST_SLOW_H
#define LOCKLAB_TEST_SLOW_H

#include "lab.h"

#define TEST_SLOW_ENV "LOCKLAB_TEST_SLOW"

/* What the switch asks of one path (acquire or release) of a design. */
struct test_slow_path {
    bool twice;    /* do the path's round trip twice */
    double factor; /* > 1: stretch the path to factor times its duration; 0: off */
};

struct test_slow {
    struct test_slow_path acquire, release;
};

/* Read LOCKLAB_TEST_SLOW for design impl into out (all off when unset or
 * about another design). 0, or -1 with err saying what is wrong with the
 * variable: cmd_run calls it before anything starts, so a typo is a usage
 * error. */
int test_slow_read(const char *impl, struct test_slow *out, struct lab_err *err);

/* Stretch a path that started at start_ns (lab_now_ns) as p asks. */
void test_slow_stretch(const struct test_slow_path *p, int64_t start_ns);

#endif
