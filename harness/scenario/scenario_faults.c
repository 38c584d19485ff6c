/*
 * scenario_faults.c - the faults: list of a scenario, entry by entry.
 *
 * An entry is closed vocabulary (fault.h): when (at, every, count), an
 * action, a target or a failpoint, and the keys its action takes
 * (duration, window, offset, when). Each combination that cannot mean
 * anything (a duration on a kill, a failover of a ZooKeeper) is refused
 * here with its position, so that the engine (faults.c) only ever acts on
 * entries that make sense.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "opt_engine.h"
#include "scenario_sections.h"
#include "backend.h"
#include "failpoint_env.h"
#include "fault.h"
#include "lex.h"

/* One scalar of a fault entry as a duration (> 0 unless zero_ok). */
static int fault_duration(struct opt_loader *L, const yaml_node_t *v, const char *kp, bool zero_ok,
                          int64_t *out)
{
    const char *what = zero_ok ? "a duration such as 500ms or 0" : "a duration such as 500ms";
    if (want_scalar(L, v, kp, what) != 0)
        return -1;
    if (duration_scan(scalar_text(v), out) != SCAN_OK || (!zero_ok && *out == 0))
        return wrong_type(L, v, kp, what);
    return 0;
}

/* Check an entry's keys against its action and target; 0 or -1. */
static int fault_check(struct opt_loader *L, const yaml_node_t *entry, const char *kp,
                       const struct fault_spec *f, bool has_at, bool has_every, bool has_count,
                       bool has_duration, bool has_target, bool has_window)
{
    const char *act = fault_action_name(f->action);
    bool fp = f->target == TARGET_FAILPOINT;
    if (fp + has_at + has_every != 1)
        return fail_at(L, entry, "%s: give exactly one of at, every or failpoint", kp);
    if (fp && has_target)
        return fail_at(L, entry, "%s: a failpoint hits the client that reaches it; "
                                 "drop target", kp);
    if (!fp && !has_target)
        return fail_at(L, entry, "%s: target is missing (holder, client:N, random-client, "
                                 "or a server: %s)", kp, fault_server_targets());
    if (fp && f->action != FAULT_KILL && f->action != FAULT_PAUSE && f->action != FAULT_SLEEP)
        return fail_at(L, entry, "%s: at a failpoint the action is kill, pause or sleep, "
                                 "not %s", kp, act);
    if (!fp && f->action == FAULT_SLEEP)
        return fail_at(L, entry, "%s: sleep is a failpoint action (the client sleeps where "
                                 "it is); use pause for a timed fault", kp);
    bool lasts = f->action == FAULT_PAUSE || f->action == FAULT_RESTART ||
                 f->action == FAULT_SLEEP;
    if (lasts && !has_duration)
        return fail_at(L, entry, "%s: %s needs a duration", kp, act);
    if (!lasts && has_duration)
        return fail_at(L, entry, "%s: %s takes no duration", kp, act);
    if (has_at && has_count)
        return fail_at(L, entry, "%s: count goes with every or failpoint, not at", kp);
    if (has_window && f->target != TARGET_HOLDER && !f->when_holder &&
        f->action != FAULT_FAILOVER)
        return fail_at(L, entry, "%s: window is how long to wait for a holder; the target "
                                 "is not holder and there is no when: holder", kp);
    if (f->action == FAULT_FAILOVER && strcmp(f->role, "redis-master") != 0)
        return fail_at(L, entry, "%s: failover applies to redis-master (the sentinel "
                                 "topology's master), not to %s", kp, f->target_text);
    bool server = f->target == TARGET_SERVER;
    if ((f->action == FAULT_RESTART || f->action == FAULT_STOP || f->action == FAULT_START) &&
        !server)
        return fail_at(L, entry, "%s: %s applies to a server (%s), not to %s", kp, act,
                       fault_server_targets(), f->target_text);
    return 0;
}

/* The keys of a server fault: offset (clock-jump) and when. 0 or -1. */
static int fault_check_server(struct opt_loader *L, const yaml_node_t *entry, const char *kp,
                              const struct fault_spec *f, bool has_offset)
{
    bool jump = f->action == FAULT_CLOCK_JUMP;
    if (jump && !has_offset)
        return fail_at(L, entry, "%s: clock-jump needs an offset (such as 30s, or -5s to go "
                                 "back)", kp);
    if (!jump && has_offset)
        return fail_at(L, entry, "%s: offset goes with clock-jump, not %s", kp,
                       fault_action_name(f->action));
    if (jump && (f->target != TARGET_SERVER ||
                 !backend_role_find(f->role, strlen(f->role))->clock))
        return fail_at(L, entry, "%s: clock-jump moves the wall clock of a Redis server: target "
                                 "redis or redis-node:I, not %s (ZooKeeper times its sessions "
                                 "with the monotonic clock: not supported)", kp, f->target_text);
    if (f->when_holder && f->target != TARGET_SERVER)
        return fail_at(L, entry, "%s: when: holder holds back a server fault until a client "
                                 "holds the lock; to hit the holder itself, write target: holder",
                       kp);
    return 0;
}

/* A clock offset: a duration, negative with a leading '-', never 0. */
static int fault_offset(struct opt_loader *L, const yaml_node_t *v, const char *kp, int64_t *out)
{
    const char *what = "a duration such as 30s, or -5s to go back";
    if (want_scalar(L, v, kp, what) != 0)
        return -1;
    const char *t = scalar_text(v);
    bool back = *t == '-';
    if (duration_scan(t + (back || *t == '+'), out) != SCAN_OK || *out == 0)
        return wrong_type(L, v, kp, what);
    if (back)
        *out = -*out;
    return 0;
}

/* The keys of a fault entry, in the order load_fault's has[] counts them,
 * and what each means (`locklab list --options`). */
const char *const fault_keys[] = {"at", "every", "count", "duration", "action", "target",
                                         "failpoint", "window", "offset", "when", NULL};
const char *const fault_key_help[] = {
    "when the fault fires, after the start barrier",
    "fire periodically, this far apart",
    "how many times (every: until the run ends; failpoint: 1)",
    "how long a pause or a restart's down time lasts",
    "pause, kill, restart, stop, start, failover, clock-jump, sleep (at a failpoint)",
    "holder, client:N, random-client, or a server role (redis, zookeeper-leader, ...)",
    "fire when a client reaches this failpoint (locklab list --failpoints)",
    "how long a holder target or when: holder may wait for a holder (default 1s)",
    "clock-jump: how far the server's wall clock moves (+ or -)",
    "holder: fire a server fault only while a client holds the lock",
    NULL};
_Static_assert(sizeof fault_keys == sizeof fault_key_help, "one help per fault key");

static int load_fault(struct opt_loader *L, const yaml_node_t *entry, const char *kp,
                      struct fault_spec *f)
{
    const char *const *actions = fault_action_words;
    const char *const *keys = fault_keys;
    char shown[SHOW_MAX], list[160], sub[128];
    bool has[10] = {false};
    if (entry->type != YAML_MAPPING_NODE)
        return wrong_type(L, entry, kp, "a mapping such as {at: 1s, action: pause, target: "
                                        "holder, duration: 2s}");
    memset(f, 0, sizeof *f);
    f->index = -1;
    f->window_ns = 1000000000LL;
    const yaml_node_t *action = NULL;
    for (yaml_node_pair_t *p = entry->data.mapping.pairs.start; p < entry->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = node_at(L, p->key), *v = node_at(L, p->value);
        int w = k->type == YAML_SCALAR_NODE ? find_word(keys, scalar_text(k)) : -1;
        if (w < 0)
            return fail_at(L, k, "%s: unknown key '%s' (valid: %s)", kp,
                           k->type == YAML_SCALAR_NODE
                               ? show(shown, sizeof shown, scalar_text(k), k->data.scalar.length)
                               : "?",
                           join_words(list, sizeof list, keys));
        if (has[w])
            return fail_at(L, k, "%s: %s given twice", kp, keys[w]);
        has[w] = true;
        snprintf(sub, sizeof sub, "%s.%s", kp, keys[w]);
        int64_t n;
        switch (w) {
        case 0:
            if (fault_duration(L, v, sub, true, &f->at_ns) != 0)
                return -1;
            break;
        case 1:
            if (fault_duration(L, v, sub, false, &f->every_ns) != 0)
                return -1;
            f->at_ns = f->every_ns;
            break;
        case 2:
            if (want_scalar(L, v, sub, "an integer from 1 to 1000000") != 0 ||
                int_scan(scalar_text(v), &n) != SCAN_OK || n < 1 || n > 1000000)
                return wrong_type(L, v, sub, "an integer from 1 to 1000000");
            f->count = (int)n;
            break;
        case 3:
            if (fault_duration(L, v, sub, false, &f->duration_ns) != 0)
                return -1;
            break;
        case 4:
            if (want_scalar(L, v, sub, "an action") != 0)
                return -1;
            action = v;
            if (find_word(actions, scalar_text(v)) < 0)
                return fail_at(L, v, "%s: unknown action '%s' (valid: %s)", sub,
                               show(shown, sizeof shown, scalar_text(v), v->data.scalar.length),
                               join_words(list, sizeof list, actions));
            f->action = (enum fault_action)find_word(actions, scalar_text(v));
            break;
        case 5:
            if (want_scalar(L, v, sub, "a target") != 0)
                return -1;
            if (fault_target_parse(scalar_text(v), f) != 0)
                return fail_at(L, v, "%s: unknown target '%s' (valid: holder, client:N, "
                                     "random-client, %s)", sub,
                               show(shown, sizeof shown, scalar_text(v), v->data.scalar.length),
                               fault_server_targets());
            break;
        case 6:
            if (want_scalar(L, v, sub, "a failpoint name") != 0)
                return -1;
            if (!failpoint_known(scalar_text(v)) ||
                v->data.scalar.length >= sizeof f->target_text)
                return fail_at(L, v, "%s: no failpoint '%s' (see locklab list --failpoints)",
                               sub, show(shown, sizeof shown, scalar_text(v),
                                         v->data.scalar.length));
            f->target = TARGET_FAILPOINT;
            snprintf(f->target_text, sizeof f->target_text, "%s", scalar_text(v));
            break;
        case 7:
            if (fault_duration(L, v, sub, false, &f->window_ns) != 0)
                return -1;
            break;
        case 8:
            if (fault_offset(L, v, sub, &f->offset_ns) != 0)
                return -1;
            break;
        default:
            if (want_scalar(L, v, sub, "holder") != 0)
                return -1;
            if (strcmp(scalar_text(v), "holder") != 0)
                return fail_at(L, v, "%s: unknown value '%s' (valid: holder: fire only while "
                                     "a client holds the lock)", sub,
                               show(shown, sizeof shown, scalar_text(v), v->data.scalar.length));
            f->when_holder = true;
            break;
        }
    }
    if (!action)
        return fail_at(L, entry, "%s: action is missing (pause, kill, restart, stop, start, "
                                 "clock-jump; sleep at a failpoint)", kp);
    if (fault_check(L, entry, kp, f, has[0], has[1], has[2], has[3], has[5], has[7]) != 0 ||
        fault_check_server(L, entry, kp, f, has[8]) != 0)
        return -1;
    if (!has[2])
        f->count = f->target == TARGET_FAILPOINT || has[0] ? 1 : 0; /* every: unbounded */
    f->window_given = has[7];
    f->line = (int)entry->start_mark.line + 1;
    f->column = (int)entry->start_mark.column + 1;
    return 0;
}

/* When the last timed fault of s is over at the latest (INT64_MIN: none
 * is, or one repeats without end); *which its entry. */
static int64_t last_fault_end(const struct scenario *s, int *which)
{
    int64_t last = INT64_MIN;
    for (int i = 0; i < s->n_faults; i++) {
        const struct fault_spec *f = &s->faults[i];
        if (f->target == TARGET_FAILPOINT)
            continue;
        if (f->every_ns && !f->count)
            return INT64_MIN;
        int64_t end = f->at_ns + (f->every_ns ? f->every_ns * (f->count - 1) : 0) +
                      f->duration_ns + (f->when_holder || f->action == FAULT_FAILOVER ||
                                                f->target == TARGET_HOLDER
                                            ? f->window_ns
                                            : 0);
        if (end >= last) {
            last = end;
            *which = i;
        }
    }
    return last;
}

/* The faults once the whole file is read: a failover without a window
 * waits for a fresh grant as long as the lease plus the business time
 * (and a second), so that a lock held at the cut has expired in the
 * replicas and another client has been granted; and a warning when the
 * run has less time after its last fault than lock.wait, since then no
 * acquire can even time out after it. */
void scenario_faults_finish(struct opt_loader *L)
{
    struct scenario *s = L->s;
    for (int i = 0; i < s->n_faults; i++)
        if (s->faults[i].action == FAULT_FAILOVER && !s->faults[i].window_given)
            s->faults[i].window_ns = s->ttl_ns + s->business_ns + 1000000000LL;
    int k = -1;
    int64_t last = last_fault_end(s, &k);
    if (last == INT64_MIN || last >= s->max_duration_ns || s->wait_ns <= s->max_duration_ns - last)
        return;
    fprintf(stderr, "locklab: warning: %s:%d:%d: the run has %.2f s left after faults[%d] (over "
            "by %.2f s of %.2f s), less than lock.wait (%.2f s): no acquire can time out after "
            "the last fault\n", L->path, s->faults[k].line, s->faults[k].column,
            (double)(s->max_duration_ns - last) / 1e9, k, (double)last / 1e9,
            (double)s->max_duration_ns / 1e9, (double)s->wait_ns / 1e9);
}

int load_faults(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    struct scenario *s = L->s;
    char kp[64];
    if (value->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, value, keypath, "a sequence of fault entries (write [] for none)");
    s->n_faults = 0;
    for (yaml_node_item_t *it = value->data.sequence.items.start;
         it < value->data.sequence.items.top; it++) {
        if (s->n_faults == FAULT_SPECS_MAX)
            return fail_at(L, node_at(L, *it), "%s: at most %d entries", keypath,
                           FAULT_SPECS_MAX);
        snprintf(kp, sizeof kp, "%s[%d]", keypath, s->n_faults);
        if (load_fault(L, node_at(L, *it), kp, &s->faults[s->n_faults]) != 0)
            return -1;
        s->n_faults++;
    }
    return 0;
}
