/*
 * failpoint.c - the table of armed failpoints (see failpoint.h).
 *
 * A handful of entries at most, filled before the clients are forked, so
 * each client inherits it and only reads it, once, when it opens.
 */
#include "failpoint.h"

#include <stdio.h>
#include <string.h>

#define FP_MAX 16

static struct failpoint fp_table[FP_MAX];
static int fp_count;
static void (*fp_hook)(const struct failpoint *fp, void *ctx);
static void *fp_hook_ctx;

static int arm(const char *name, int64_t sleep_ns, int fault)
{
    if (fp_count == FP_MAX)
        return -1;
    struct failpoint *fp = &fp_table[fp_count++];
    snprintf(fp->name, sizeof fp->name, "%s", name);
    fp->sleep_ns = sleep_ns;
    fp->fault = fault;
    return 0;
}

int failpoint_arm(const char *name, int64_t sleep_ns)
{
    return arm(name, sleep_ns, -1);
}

int failpoint_arm_fault(const char *name, int fault)
{
    return arm(name, 0, fault);
}

int failpoint_mark(void)
{
    return fp_count;
}

void failpoint_disarm_to(int mark)
{
    if (mark >= 0 && mark < fp_count)
        fp_count = mark;
}

void failpoint_set_hook(void (*hook)(const struct failpoint *fp, void *ctx), void *ctx)
{
    fp_hook = hook;
    fp_hook_ctx = ctx;
}

void failpoint_disarm_all(void)
{
    fp_count = 0;
}

const struct failpoint *failpoint_find(const char *impl, const char *point)
{
    size_t il = strlen(impl);
    for (int i = 0; i < fp_count; i++) {
        const char *n = fp_table[i].name;
        if (strncmp(n, impl, il) == 0 && n[il] == '/' && strcmp(n + il + 1, point) == 0)
            return &fp_table[i];
    }
    return NULL;
}

void failpoint_fire(const struct failpoint *fp, const volatile int *stop)
{
    if (fp->fault >= 0 && fp_hook)
        fp_hook(fp, fp_hook_ctx);
    else if (fp->fault < 0)
        lab_sleep_ns(fp->sleep_ns, stop);
}
