/*
 * failpoint.h - named points inside the client loop and the designs where a
 * fault can be made to fire, etcd's gofail idea.
 *
 * Every design has "<impl>/after-grant" (inside the critical section, before
 * the business) and "<impl>/before-release" (after the exit mark, before
 * the release is sent); a design may name points of its own inside a
 * protocol step, such as "redis-get-del/before-del" between the GET that
 * found the lock ours and the DEL, listing them in its table
 * (lock_ops.failpoints, impls/lock.h). The harness arms points before it forks
 * the clients (from LOCKLAB_FAILPOINTS, see harness/faults/failpoint_env.h); a
 * client looks its points up once, when it opens, and keeps the pointers: an
 * unarmed point is a NULL pointer, and costs one test of it in the loop.
 * A point armed from LOCKLAB_FAILPOINTS sleeps there (the client stalls as
 * a GC pause would stall it); one armed from a scenario's fault timeline
 * carries that entry's index and calls the hook the harness installed,
 * which may also kill or stop the whole process.
 */
#ifndef LOCKLAB_FAILPOINT_H
#define LOCKLAB_FAILPOINT_H

#include <stdint.h>

#include "lab.h"

struct failpoint {
    char name[96];    /* "<impl>/<point>" */
    int64_t sleep_ns; /* sleep(DURATION) */
    int fault;        /* -1, or the fault entry the hook fires */
};

/* Arm name with a sleep of sleep_ns. 0, or -1 when too many are armed. */
int failpoint_arm(const char *name, int64_t sleep_ns);

/* Arm name to call the hook with fault entry `fault`. 0 or -1. */
int failpoint_arm_fault(const char *name, int fault);

/* Disarm every point. */
void failpoint_disarm_all(void);

/* How many points are armed, and disarm those armed after such a mark. */
int failpoint_mark(void);
void failpoint_disarm_to(int mark);

/* The hook a point armed with a fault calls (one per process). */
void failpoint_set_hook(void (*hook)(const struct failpoint *fp, void *ctx), void *ctx);

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
