/*
 * failpoint_env.c - arming failpoints from LOCKLAB_FAILPOINTS (see
 * failpoint_env.h and common/failpoint.h).
 *
 * The variable is parsed once, before any client is forked, into the
 * table of armed points. Names are checked against the points that exist
 * (the two every design has, and the ones each design lists in its own
 * table, lock_ops.failpoints), so an armed point that would never fire is an error, not a
 * silent no-op.
 */
#include "failpoint_env.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock.h"
#include "lex.h"

/* Points every design has, in the client loop. */
static const struct {
    const char *point, *help;
} fp_generic[] = {
    {"after-grant", "inside the critical section, before the business"},
    {"before-release", "after the exit mark, before the release is sent"},
};

/* Design ops's own point called point, or NULL. */
static const struct lock_failpoint *design_point(const struct lock_ops *ops, const char *point)
{
    for (const struct lock_failpoint *p = ops->failpoints; p && p->point; p++)
        if (strcmp(p->point, point) == 0)
            return p;
    return NULL;
}

bool failpoint_known(const char *name)
{
    const char *slash = strchr(name, '/');
    if (!slash)
        return false;
    char impl[64];
    size_t len = (size_t)(slash - name);
    if (len >= sizeof impl)
        return false;
    memcpy(impl, name, len);
    impl[len] = '\0';
    const struct lock_ops *ops = lock_find(impl);
    if (!ops)
        return false;
    for (size_t i = 0; i < sizeof fp_generic / sizeof fp_generic[0]; i++)
        if (strcmp(slash + 1, fp_generic[i].point) == 0)
            return true;
    return design_point(ops, slash + 1) != NULL;
}

/* Arm one "name=sleep(DURATION)" entry; 0 or -1 with err filled. */
static int fp_parse_one(char *entry, struct lab_err *err)
{
    char *eq = strchr(entry, '=');
    if (!eq) {
        lab_err_set(err, EINVAL, "%s: '%.60s' is not NAME=sleep(DURATION)", FAILPOINT_ENV, entry);
        return -1;
    }
    *eq = '\0';
    const char *action = eq + 1;
    if (!failpoint_known(entry)) {
        lab_err_set(err, EINVAL, "%s: no failpoint '%.60s' (see locklab list --failpoints)",
                    FAILPOINT_ENV, entry);
        return -1;
    }
    size_t alen = strlen(action);
    char dur[32];
    int64_t ns;
    if (strncmp(action, "sleep(", 6) != 0 || alen < 8 || action[alen - 1] != ')' ||
        alen - 7 >= sizeof dur) {
        lab_err_set(err, EINVAL, "%s: failpoint %.40s: action %.20s is not sleep(DURATION)",
                    FAILPOINT_ENV, entry, action);
        return -1;
    }
    memcpy(dur, action + 6, alen - 7);
    dur[alen - 7] = '\0';
    if (duration_parse(dur, &ns) != 0) {
        lab_err_set(err, EINVAL, "%s: failpoint %.60s: bad duration '%s'", FAILPOINT_ENV, entry,
                    dur);
        return -1;
    }
    if (failpoint_arm(entry, ns) != 0) {
        lab_err_set(err, EINVAL, "%s: too many failpoints armed", FAILPOINT_ENV);
        return -1;
    }
    return 0;
}

int failpoint_check(struct lab_err *err)
{
    const char *v = getenv(FAILPOINT_ENV);
    if (!v || !*v)
        return 0;
    char *copy = strdup(v), *save = NULL;
    if (!copy) {
        lab_err_set(err, ENOMEM, "%s: out of memory", FAILPOINT_ENV);
        return -1;
    }
    int rc = 0;
    for (char *e = strtok_r(copy, ";", &save); e && rc == 0; e = strtok_r(NULL, ";", &save))
        if (*e)
            rc = fp_parse_one(e, err);
    free(copy);
    if (rc != 0)
        failpoint_disarm_all();
    return rc;
}

/* One design's point for the list, by its full name. */
struct fp_row {
    char name[96];
    const char *help;
};

static int fp_row_cmp(const void *a, const void *b)
{
    return strcmp(((const struct fp_row *)a)->name, ((const struct fp_row *)b)->name);
}

void failpoint_list(void)
{
    for (size_t i = 0; i < sizeof fp_generic / sizeof fp_generic[0]; i++)
        printf("<impl>/%-28s every design: %s\n", fp_generic[i].point, fp_generic[i].help);
    /* the designs' own points (lock_ops.failpoints), by name */
    struct fp_row rows[64];
    size_t n = 0;
    for (int d = 0; d < lock_registry_count; d++)
        for (const struct lock_failpoint *p = lock_registry[d]->failpoints;
             p && p->point && n < sizeof rows / sizeof rows[0]; p++) {
            snprintf(rows[n].name, sizeof rows[n].name, "%s/%s", lock_registry[d]->name, p->point);
            rows[n++].help = p->help;
        }
    qsort(rows, n, sizeof rows[0], fp_row_cmp);
    for (size_t i = 0; i < n; i++)
        printf("%-35s %s\n", rows[i].name, rows[i].help);
    printf("\narm with %s='NAME=sleep(DURATION);...'\n", FAILPOINT_ENV);
}
