/*
 * test_slow.c - parse and apply LOCKLAB_TEST_SLOW (see test_slow.h). The
 * switch exists so that a test can make one design measurably slower, by
 * a known amount, and check that the baseline gate fails on it: "twice"
 * doubles a path's real work (its round trip), a factor stretches it by a
 * chosen fraction to find the smallest slowdown the gate still catches.
 */
#include "test_slow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SLOW_DESIGN "redis-lua" /* the one design with the switch */

/* One entry, "redis-lua:acquire" or "redis-lua:release=1.25", into s. */
static int parse_entry(const char *entry, struct test_slow *s, struct lab_err *err)
{
    const char *colon = strchr(entry, ':');
    if (!colon || (size_t)(colon - entry) != strlen(TEST_SLOW_DESIGN) ||
        strncmp(entry, TEST_SLOW_DESIGN, (size_t)(colon - entry)) != 0)
        goto bad;
    const char *path = colon + 1;
    struct test_slow_path *p;
    size_t len;
    if (strncmp(path, "acquire", 7) == 0) {
        p = &s->acquire;
        len = 7;
    } else if (strncmp(path, "release", 7) == 0) {
        p = &s->release;
        len = 7;
    } else {
        goto bad;
    }
    if (path[len] == '\0') {
        p->twice = true;
        return 0;
    }
    if (path[len] != '=')
        goto bad;
    char *end;
    double f = strtod(path + len + 1, &end);
    if (*end || !(f > 1.0 && f <= 10.0))
        goto bad;
    p->factor = f;
    return 0;
bad:
    lab_err_set(err, EINVAL, "%s: '%.24s' is not %s:acquire|release[=F], 1 < F <= 10 (test-only)",
                TEST_SLOW_ENV, entry, TEST_SLOW_DESIGN);
    return -1;
}

int test_slow_read(const char *impl, struct test_slow *out, struct lab_err *err)
{
    struct test_slow all = {0};
    memset(out, 0, sizeof *out);
    const char *v = getenv(TEST_SLOW_ENV);
    if (!v || !*v)
        return 0;
    char buf[256];
    if (strlen(v) >= sizeof buf) {
        lab_err_set(err, EINVAL, "%s is too long", TEST_SLOW_ENV);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save, *e = strtok_r(buf, ",", &save); e; e = strtok_r(NULL, ",", &save))
        if (parse_entry(e, &all, err) != 0)
            return -1;
    if (impl && strcmp(impl, TEST_SLOW_DESIGN) == 0)
        *out = all;
    return 0;
}

void test_slow_stretch(const struct test_slow_path *p, int64_t start_ns)
{
    if (p->factor <= 1.0)
        return;
    /* spin, not sleep: a sleep of a few microseconds overshoots by tens */
    int64_t until = start_ns + (int64_t)((double)(lab_now_ns() - start_ns) * p->factor);
    while (lab_now_ns() < until)
        ;
}
