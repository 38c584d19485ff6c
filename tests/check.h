/*
 * check.h - the tiny assertion kit shared by locklab's unit tests.
 *
 * Each test binary includes this, calls CHECK() as often as it likes and
 * ends main() with `return check_done();`, which prints a one-line summary
 * and returns non-zero when any check failed, so CTest sees the failure.
 * A failed check prints file:line and the message and keeps going, so one
 * run shows every broken expectation, not just the first.
 */
#ifndef LOCKLAB_CHECK_H
#define LOCKLAB_CHECK_H

#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            check_passed++;                                                \
        } else {                                                           \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

static inline int check_done(void)
{
    printf("checks: %d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
