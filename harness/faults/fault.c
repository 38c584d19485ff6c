/*
 * fault.c - the fault vocabulary's words (see fault.h): outcome names and
 * the target syntax (the action words are the table's, fault_actions.c).
 * The server roles are the stores' own names for their processes, each
 * spelled once in its store's table
 * (backend_ops.role_names): a target is checked against them so a typo in
 * a scenario is an error before anything starts.
 */
#include "fault.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static const char *const outcome_names[] = {"done", "skipped", "failed", "active"};

const char *fault_outcome_name(enum fault_outcome o)
{
    return (unsigned)o < sizeof outcome_names / sizeof outcome_names[0] ? outcome_names[o] : "?";
}

/* "N" with nothing after it, 0..9999, into *out. */
static int small_index(const char *p, int *out)
{
    char *end;
    if (*p < '0' || *p > '9')
        return -1;
    long v = strtol(p, &end, 10);
    if (*end || v > 9999)
        return -1;
    *out = (int)v;
    return 0;
}

const char *fault_server_targets(void)
{
    return backend_role_list();
}

int fault_target_parse(const char *text, struct fault_spec *f)
{
    if (strlen(text) >= sizeof f->target_text)
        return -1;
    snprintf(f->target_text, sizeof f->target_text, "%s", text);
    f->index = -1;
    if (strcmp(text, "holder") == 0) {
        f->target = TARGET_HOLDER;
        return 0;
    }
    if (strcmp(text, "random-client") == 0) {
        f->target = TARGET_RANDOM_CLIENT;
        return 0;
    }
    if (strncmp(text, "client:", 7) == 0) {
        f->target = TARGET_CLIENT;
        return small_index(text + 7, &f->index);
    }
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    const struct backend_role_name *role = backend_role_find(text, len);
    if (!role)
        return -1;
    if ((colon && role->indexed == 0) || (!colon && role->indexed == 2))
        return -1;
    if (colon && small_index(colon + 1, &f->index) != 0)
        return -1;
    f->target = TARGET_SERVER;
    snprintf(f->role, sizeof f->role, "%s", role->name);
    return 0;
}

/* Append to a record's note, after a "; " when it has one. */
void fault_note_add(struct fault_record *r, const char *fmt, ...)
{
    size_t used = strlen(r->note);
    if (used && used + 2 < sizeof r->note) {
        memcpy(r->note + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note + used, sizeof r->note - used, fmt, ap);
    va_end(ap);
}
