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

int failpoint_arm(const char *name, int64_t sleep_ns)
{
    if (fp_count == FP_MAX)
        return -1;
    struct failpoint *fp = &fp_table[fp_count++];
    snprintf(fp->name, sizeof fp->name, "%s", name);
    fp->sleep_ns = sleep_ns;
    return 0;
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
    lab_sleep_ns(fp->sleep_ns, stop);
}
