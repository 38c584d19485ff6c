/*
 * failpoint.h - named points inside the client loop and the designs where a
 * fault can be made to fire, etcd's gofail idea.
 *
 * Every design has "<impl>/after-grant" (inside the critical section, before
 * the business) and "<impl>/before-release" (after the exit mark, before
 * the release is sent); a design may name points of its own inside a
 * protocol step, such as "redis-get-del/before-del" between the GET that
 * found the lock ours and the DEL. The harness arms points before it forks
 * the clients (from LOCKLAB_FAILPOINTS, see harness/failpoint_env.h); a
 * client looks its points up once, when it opens, and keeps the pointers: an
 * unarmed point is a NULL pointer, and costs one test of it in the loop.
 * The only action today is a sleep at that point (the client stalls there
 * as a GC pause would stall it); the fault timeline adds more.
 */
#ifndef LOCKLAB_FAILPOINT_H
#define LOCKLAB_FAILPOINT_H

#include <stdint.h>

#include "lab.h"

struct failpoint {
    char name[96];    /* "<impl>/<point>" */
    int64_t sleep_ns; /* sleep(DURATION) */
};

/* Arm name with a sleep of sleep_ns. 0, or -1 when too many are armed. */
int failpoint_arm(const char *name, int64_t sleep_ns);

/* Disarm every point. */
void failpoint_disarm_all(void);

/* The armed point "<impl>/<point>", or NULL when it is not armed. */
const struct failpoint *failpoint_find(const char *impl, const char *point);

/* Perform an armed point's action. */
void failpoint_fire(const struct failpoint *fp, const volatile int *stop);

/* Fire fp when it is armed. */
static inline void failpoint_hit(const struct failpoint *fp, const volatile int *stop)
{
    if (fp)
        failpoint_fire(fp, stop);
}

#endif
