/*
 * failpoint.h - named points inside the client loop and the designs where a
 * fault can be made to fire, etcd's gofail idea.
 *
 * Every design has "<impl>/after-grant" (inside the critical section, before
 * the business) and "<impl>/before-release" (after the exit mark, before
 * the release is sent); a design may name points of its own inside a
 * protocol step, such as "redis-get-del/before-del" between the GET that
 * found the lock ours and the DEL. A point is armed from the environment,
 * as gofail's GOFAIL_FAILPOINTS:
 *
 *   LOCKLAB_FAILPOINTS='redis-get-del/before-del=sleep(150ms);redis-lua/before-release=sleep(1s)'
 *
 * The only action today is sleep(DURATION), a delay at that point (the
 * client stalls there as a GC pause would stall it); the fault timeline
 * adds more. A point is looked up once, when a client opens, and is a NULL
 * pointer when unarmed: the cost in the loop is one test of a pointer.
 */
#ifndef LOCKLAB_FAILPOINT_H
#define LOCKLAB_FAILPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include "lab.h"

#define FAILPOINT_ENV "LOCKLAB_FAILPOINTS"

struct failpoint {
    char name[96];    /* "<impl>/<point>" */
    int64_t sleep_ns; /* sleep(DURATION) */
};

/* Parse LOCKLAB_FAILPOINTS (once per process) and check every name against
 * the known points. 0 (also when unset), or -1 with err naming the bad
 * entry: call it before anything starts, so a typo is a usage error. */
int failpoint_check(struct lab_err *err);

/* The armed point "<impl>/<point>", or NULL when it is not armed (or the
 * variable does not parse: failpoint_check reports that). */
const struct failpoint *failpoint_find(const char *impl, const char *point);

/* Perform an armed point's action. */
void failpoint_fire(const struct failpoint *fp, const volatile int *stop);

/* Fire fp when it is armed. */
static inline void failpoint_hit(const struct failpoint *fp, const volatile int *stop)
{
    if (fp)
        failpoint_fire(fp, stop);
}

/* Print every known point, one per line (for `locklab list --failpoints`). */
void failpoint_list(void);

#endif
