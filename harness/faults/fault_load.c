/*
 * fault_load.c - the faults: list of a scenario, entry by entry, read
 * through the option-row engine (harness/scenario/opt_engine.h) like every
 * other section of the file.
 *
 * An entry is closed vocabulary (fault.h): when (at, every, count), an
 * action, a target or a failpoint, and the keys its action takes
 * (duration, window, offset, when). The keys are rows (fault_entry_opts);
 * the ones that need more than a scalar check (action, target, failpoint,
 * offset, when) have handlers, which fill the entry being read. Once the
 * entry is read it is checked against its action's row (fault_action.h):
 * the keys the row takes, the targets its hooks serve, the row's own rule.
 * Each combination that cannot mean anything (a duration on a kill, a
 * failover of a ZooKeeper) is refused here with its position, so that the
 * engine (faults.c) only ever acts on entries that make sense.
 */
#include "fault_load.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "failpoint_env.h"
#include "fault_action.h"
#include "lex.h"

/* The entry being read: load_faults reads entry s->n_faults. */
static struct fault_spec *entry_of(struct opt_loader *L)
{
    return &L->s->faults[L->s->n_faults];
}

static int load_action(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    char shown[SHOW_MAX], list[160], near[96];
    const char *const *actions = fault_action_words();
    if (want_scalar(L, v, kp, "an action") != 0)
        return -1;
    int a = find_word(actions, scalar_text(v));
    if (a < 0)
        return fail_at(L, v, "%s: unknown action '%s' (valid: %s)%s", kp,
                       show(shown, sizeof shown, scalar_text(v), v->data.scalar.length),
                       join_words(list, sizeof list, actions),
                       did_you_mean(near, sizeof near, scalar_text(v), v->data.scalar.length,
                                    actions));
    entry_of(L)->action = (enum fault_action)a;
    return 0;
}

static int load_target(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    char shown[SHOW_MAX];
    if (want_scalar(L, v, kp, "a target") != 0)
        return -1;
    if (fault_target_parse(scalar_text(v), entry_of(L)) != 0)
        return fail_at(L, v, "%s: unknown target '%s' (valid: holder, client:N, "
                             "random-client, %s)", kp,
                       show(shown, sizeof shown, scalar_text(v), v->data.scalar.length),
                       fault_server_targets());
    return 0;
}

static int load_failpoint(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    char shown[SHOW_MAX];
    struct fault_spec *f = entry_of(L);
    if (want_scalar(L, v, kp, "a failpoint name") != 0)
        return -1;
    if (!failpoint_known(scalar_text(v)) || v->data.scalar.length >= sizeof f->target_text)
        return fail_at(L, v, "%s: no failpoint '%s' (see locklab list --failpoints)", kp,
                       show(shown, sizeof shown, scalar_text(v), v->data.scalar.length));
    f->target = TARGET_FAILPOINT;
    snprintf(f->target_text, sizeof f->target_text, "%s", scalar_text(v));
    return 0;
}

/* A clock offset: a duration, negative with a leading '-', never 0. */
static int load_offset(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    const char *what = "a duration such as 30s, or -5s to go back";
    int64_t *out = &entry_of(L)->offset_ns;
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

static int load_when(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    char shown[SHOW_MAX];
    if (want_scalar(L, v, kp, "holder") != 0)
        return -1;
    if (strcmp(scalar_text(v), "holder") != 0)
        return fail_at(L, v, "%s: unknown value '%s' (valid: holder: fire only while "
                             "a client holds the lock)", kp,
                       show(shown, sizeof shown, scalar_text(v), v->data.scalar.length));
    entry_of(L)->when_holder = true;
    return 0;
}

/* point: where in a holder's critical section the fault lands. */
static int load_point(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    char shown[SHOW_MAX];
    if (want_scalar(L, v, kp, "grant or random") != 0)
        return -1;
    const char *t = scalar_text(v);
    if (strcmp(t, "grant") != 0 && strcmp(t, "random") != 0)
        return fail_at(L, v, "%s: unknown value '%s' (valid: grant: right after a grant, "
                             "random: a point drawn within the business time)", kp,
                       show(shown, sizeof shown, t, v->data.scalar.length));
    entry_of(L)->point = strcmp(t, "random") == 0 ? FAULT_POINT_RANDOM : FAULT_POINT_GRANT;
    return 0;
}

/* One member of a partition's side: a host's name (checked against
 * hosts: once the file is read), client:N or a server role. */
static int load_member(struct opt_loader *L, const yaml_node_t *v, const char *kp,
                       char *out, size_t n)
{
    char shown[SHOW_MAX];
    struct fault_spec t;
    if (want_scalar(L, v, kp, "a host, client:N or a server role") != 0)
        return -1;
    const char *text = scalar_text(v);
    memset(&t, 0, sizeof t);
    bool role = fault_target_parse(text, &t) == 0 &&
                (t.target == TARGET_CLIENT || t.target == TARGET_SERVER);
    if (v->data.scalar.length >= n || (!role && strchr(text, ':')))
        return fail_at(L, v, "%s: '%s' is no host, client:N or server role", kp,
                       show(shown, sizeof shown, text, v->data.scalar.length));
    snprintf(out, n, "%s", text);
    return 0;
}

/* The entry's target text for its records: "h1,client:0|h2". */
static void net_target_text(struct fault_spec *f)
{
    char text[sizeof f->target_text] = "";
    size_t u = 0;
    for (int g = 0; g < f->n_groups; g++)
        for (int i = 0; i < f->group_len[g] && u < sizeof text; i++) {
            int w = snprintf(text + u, sizeof text - u, "%s%s", i ? "," : g ? "|" : "",
                             f->groups[g][i]);
            u += w > 0 ? (size_t)w : 0;
        }
    memcpy(f->target_text, text, sizeof text);
}

static int load_groups(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    struct fault_spec *f = entry_of(L);
    const char *what = "a list of sides, each a list of hosts, clients or servers: "
                       "[[h1, client:0], [h2, h3]]";
    if (v->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, v, kp, what);
    f->n_groups = 0;
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        const yaml_node_t *g = node_at(L, *it);
        if (g->type != YAML_SEQUENCE_NODE || g->data.sequence.items.start == g->data.sequence.items.top)
            return wrong_type(L, g, kp, what);
        if (f->n_groups == FAULT_GROUPS_MAX)
            return fail_at(L, g, "%s: at most %d sides", kp, FAULT_GROUPS_MAX);
        int k = f->n_groups++;
        f->group_len[k] = 0;
        for (yaml_node_item_t *m = g->data.sequence.items.start; m < g->data.sequence.items.top;
             m++) {
            if (f->group_len[k] == FAULT_GROUP_MAX)
                return fail_at(L, node_at(L, *m), "%s: at most %d members a side", kp,
                               FAULT_GROUP_MAX);
            if (load_member(L, node_at(L, *m), kp, f->groups[k][f->group_len[k]],
                            sizeof f->groups[0][0]) != 0)
                return -1;
            f->group_len[k]++;
        }
    }
    f->target = TARGET_NET;
    net_target_text(f);
    return 0;
}

static int load_isolate(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    struct fault_spec *f = entry_of(L);
    if (load_member(L, v, kp, f->groups[0][0], sizeof f->groups[0][0]) != 0)
        return -1;
    f->n_groups = 1;
    f->group_len[0] = 1;
    f->isolate = true;
    f->target = TARGET_NET;
    char member[sizeof f->groups[0][0]];
    memcpy(member, f->groups[0][0], sizeof member);
    snprintf(f->target_text, sizeof f->target_text, "isolate %s", member);
    return 0;
}

/* shape: majority-minority or bridge (fault_spec.h). */
static int load_shape(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    static const char *const words[] = {[FAULT_SHAPE_MAJORITY_MINORITY] = "majority-minority",
                                        [FAULT_SHAPE_BRIDGE] = "bridge"};
    struct fault_spec *f = entry_of(L);
    char shown[SHOW_MAX];
    if (want_scalar(L, v, kp, "majority-minority or bridge") != 0)
        return -1;
    for (int k = FAULT_SHAPE_MAJORITY_MINORITY; k <= FAULT_SHAPE_BRIDGE; k++)
        if (strcmp(scalar_text(v), words[k]) == 0) {
            f->shape = k;
            f->target = TARGET_NET;
            snprintf(f->target_text, sizeof f->target_text, "%s", words[k]);
            return 0;
        }
    return fail_at(L, v, "%s: unknown shape '%s' (valid: majority-minority, bridge)", kp,
                   show(shown, sizeof shown, scalar_text(v), v->data.scalar.length));
}

/* minority: / middle: the member whose host a shape puts there. */
static int load_pin(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    struct fault_spec *f = entry_of(L);
    return load_member(L, v, kp, f->pin, sizeof f->pin);
}

/* delay's link: two distinct hosts (checked against hosts: once the file
 * is read), as a partition's two sides of one host each. */
static int load_between(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    struct fault_spec *f = entry_of(L);
    const char *what = "two hosts of hosts:, such as [h1, h2]";
    char shown[SHOW_MAX];
    if (v->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, v, kp, what);
    if (v->data.sequence.items.top - v->data.sequence.items.start != 2)
        return fail_at(L, v, "%s: a link is two hosts, not %td", kp,
                       v->data.sequence.items.top - v->data.sequence.items.start);
    for (int k = 0; k < 2; k++) {
        const yaml_node_t *m = node_at(L, v->data.sequence.items.start[k]);
        struct fault_spec t;
        memset(&t, 0, sizeof t);
        if (want_scalar(L, m, kp, what) != 0)
            return -1;
        if (m->data.scalar.length >= sizeof f->groups[0][0] ||
            fault_target_parse(scalar_text(m), &t) == 0 || strchr(scalar_text(m), ':'))
            return fail_at(L, m, "%s: '%s' is no host (%s)", kp,
                           show(shown, sizeof shown, scalar_text(m), m->data.scalar.length), what);
        snprintf(f->groups[k][0], sizeof f->groups[0][0], "%s", scalar_text(m));
        f->group_len[k] = 1;
    }
    if (strcmp(f->groups[0][0], f->groups[1][0]) == 0)
        return fail_at(L, v, "%s: a link is between two different hosts", kp);
    f->n_groups = 2;
    f->between = true;
    f->target = TARGET_NET;
    net_target_text(f);
    return 0;
}

static int load_word_pair(struct opt_loader *L, const yaml_node_t *v, const char *kp,
                          const char *no, const char *yes, bool *out)
{
    char shown[SHOW_MAX];
    if (want_scalar(L, v, kp, no) != 0)
        return -1;
    if (strcmp(scalar_text(v), no) != 0 && strcmp(scalar_text(v), yes) != 0)
        return fail_at(L, v, "%s: unknown value '%s' (valid: %s, %s)", kp,
                       show(shown, sizeof shown, scalar_text(v), v->data.scalar.length), no, yes);
    *out = strcmp(scalar_text(v), yes) == 0;
    return 0;
}

static int load_direction(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    return load_word_pair(L, v, kp, "both", "one-way", &entry_of(L)->one_way);
}

static int load_mode(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    return load_word_pair(L, v, kp, "drop", "reject", &entry_of(L)->reject);
}

#define FIELD(f) OPT_FIELD(struct fault_spec, f)

/* The keys of a fault entry and what each means (also `locklab list
 * --options`). */
const struct opt fault_entry_opts[] = {
    { .name = "at", .type = OPT_DUR, FIELD(at_ns), .min = 0,
      .help = "when the fault fires, after the start barrier" },
    { .name = "every", .type = OPT_DUR, FIELD(every_ns), .min = 1,
      .help = "fire periodically, this far apart" },
    { .name = "count", .type = OPT_INT, FIELD(count), .min = 1, .max = 1000000,
      .help = "how many times (every: until the run ends; failpoint: 1)" },
    { .name = "duration", .type = OPT_DUR, FIELD(duration_ns), .min = 1,
      .help = "how long a pause or a restart's down time lasts" },
    { .name = "action", .type = OPT_NODE, .fn = load_action, .help = fault_actions_help },
    { .name = "target", .type = OPT_NODE, .fn = load_target,
      .help = "holder, client:N, random-client, or a server role (redis, zookeeper-leader, ...)" },
    { .name = "failpoint", .type = OPT_NODE, .fn = load_failpoint,
      .help = "fire when a client reaches this failpoint (locklab list --failpoints)" },
    { .name = "window", .type = OPT_DUR, FIELD(window_ns), .min = 1,
      .help = "how long a holder target or when: holder may wait for a holder (default 1s)" },
    { .name = "point", .type = OPT_NODE, .fn = load_point,
      .help = "target holder: where in its critical section the fault lands: grant (default: "
              "right after a grant) or random (a point drawn within the business time)" },
    { .name = "offset", .type = OPT_NODE, .fn = load_offset,
      .help = "clock-jump: how far the server's wall clock moves (+ or -)" },
    { .name = "when", .type = OPT_NODE, .fn = load_when,
      .help = "holder: fire a server fault only while a client holds the lock (a partition: "
              "a client on its first side)" },
    { .name = "groups", .type = OPT_NODE, .fn = load_groups,
      .help = "partition: the sides, each a list of hosts, client:N or server roles" },
    { .name = "isolate", .type = OPT_NODE, .fn = load_isolate,
      .help = "partition: one host, client:N or server role cut from every other host" },
    { .name = "shape", .type = OPT_NODE, .fn = load_shape,
      .help = "partition: majority-minority or bridge, the sides drawn from the run's hosts" },
    { .name = "seed", .type = OPT_INT, FIELD(seed), .min = 0, .max = 2147483647,
      .help = "partition shape: the shuffle's seed (default: drawn, and recorded)" },
    { .name = "minority", .type = OPT_NODE, .fn = load_pin,
      .help = "majority-minority: a host, client:N or server role whose host is in the minority" },
    { .name = "middle", .type = OPT_NODE, .fn = load_pin,
      .help = "bridge: a host, client:N or server role whose host is the bridge" },
    { .name = "direction", .type = OPT_NODE, .fn = load_direction,
      .help = "partition, delay: both (default) or one-way (only what the first side sends "
              "is lost, or held)" },
    { .name = "mode", .type = OPT_NODE, .fn = load_mode,
      .help = "partition: drop (default: silence) or reject (a TCP reset at once)" },
    { .name = "between", .type = OPT_NODE, .fn = load_between,
      .help = "delay: the link, two hosts [h1, h2]" },
    { .name = "latency", .type = OPT_DUR, FIELD(latency_ns), .min = 1,
      .help = "delay: how long what one host sends the other is held (one way)" },
    { .name = "jitter", .type = OPT_DUR, FIELD(jitter_ns), .min = 0,
      .help = "delay: latency give or take this much, uniformly, per chunk (default 0)" },
    { .name = NULL },
};

/* Did the entry give key name? */
static bool has_key(struct opt_loader *L, const yaml_node_t *entry, const char *name)
{
    for (yaml_node_pair_t *p = entry->data.mapping.pairs.start; p < entry->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = node_at(L, p->key);
        if (k->type == YAML_SCALAR_NODE && strcmp(scalar_text(k), name) == 0)
            return true;
    }
    return false;
}

static bool act_at_failpoint(const struct fault_action_ops *a)
{
    return a->at_failpoint != NULL;
}

static bool act_offset(const struct fault_action_ops *a)
{
    return a->keys & FA_OFFSET;
}

static bool act_timed(const struct fault_action_ops *a)
{
    return a->hit_client || a->hit_server || a->fire_server || a->fire_net;
}

static bool act_failpoint_only(const struct fault_action_ops *a)
{
    return !act_timed(a);
}

/* Check an entry's keys against its action's row (fault_action.h: the keys
 * it takes, the targets its hooks serve, its own rule) and its target; 0
 * or -1. */
static int fault_check(struct opt_loader *L, const yaml_node_t *entry, const char *kp,
                       const struct fault_spec *f, bool has_at, bool has_every, bool has_count,
                       bool has_duration, bool has_target, bool has_window, bool has_offset)
{
    const struct fault_action_ops *row = fault_action_of(f->action);
    const char *act = row->word;
    char words[96], msg[240];
    bool fp = f->target == TARGET_FAILPOINT, server = f->target == TARGET_SERVER;
    bool net = f->target == TARGET_NET;
    if (fp + has_at + has_every != 1)
        return fail_at(L, entry, "%s: give exactly one of at, every or failpoint", kp);
    if (net && (has_target || fp || !row->fire_net))
        return fail_at(L, entry, "%s: groups, isolate and shape go with partition alone, "
                                 "without a target or failpoint", kp);
    if (net && (has_key(L, entry, "groups") + has_key(L, entry, "isolate") +
                has_key(L, entry, "shape")) > 1)
        return fail_at(L, entry, "%s: give one of groups, isolate and shape", kp);
    if (net || row->fire_net)
        return row->check && row->check(f, msg, sizeof msg) ? fail_at(L, entry, "%s: %s", kp, msg)
               : !(row->keys & FA_DURATION) || has_duration
                   ? 0
                   : fail_at(L, entry, "%s: %s needs a duration", kp, act);
    if (fp && has_target)
        return fail_at(L, entry, "%s: a failpoint hits the client that reaches it; "
                                 "drop target", kp);
    if (!fp && !has_target)
        return fail_at(L, entry, "%s: target is missing (holder, client:N, random-client, "
                                 "or a server: %s)", kp, fault_server_targets());
    if (fp && !row->at_failpoint)
        return fail_at(L, entry, "%s: at a failpoint the action is %s, not %s", kp,
                       fault_action_join(words, sizeof words, act_at_failpoint, " or "), act);
    if (!fp && !act_timed(row))
        return fail_at(L, entry, "%s: %s is a failpoint action %s", kp, act, row->hint);
    bool lasts = row->keys & FA_DURATION;
    if (lasts && !has_duration)
        return fail_at(L, entry, "%s: %s needs a duration", kp, act);
    if (!lasts && has_duration)
        return fail_at(L, entry, "%s: %s takes no duration", kp, act);
    if (has_at && has_count)
        return fail_at(L, entry, "%s: count goes with every or failpoint, not at", kp);
    if (has_window && f->target != TARGET_HOLDER && !f->when_holder && !(row->keys & FA_WINDOW))
        return fail_at(L, entry, "%s: window is how long to wait for a holder; the target "
                                 "is not holder and there is no when: holder", kp);
    if (!fp && row->check && row->check(f, msg, sizeof msg))
        return fail_at(L, entry, "%s: %s", kp, msg);
    if (!fp && !server && !row->hit_client)
        return fail_at(L, entry, "%s: %s applies to a server (%s), not to %s", kp, act,
                       fault_server_targets(), f->target_text);
    if ((row->keys & FA_OFFSET) && !has_offset)
        return fail_at(L, entry, "%s: %s needs an offset (such as 30s, or -5s to go back)", kp,
                       act);
    if (!(row->keys & FA_OFFSET) && has_offset)
        return fail_at(L, entry, "%s: offset goes with %s, not %s", kp,
                       fault_action_join(words, sizeof words, act_offset, " or "), act);
    if (f->when_holder && !server && f->target != TARGET_NET)
        return fail_at(L, entry, "%s: when: holder holds back a server fault or a partition "
                                 "until a client holds the lock; to hit the holder itself, "
                                 "write target: holder",
                       kp);
    return 0;
}

static bool act_latency(const struct fault_action_ops *a)
{
    return a->keys & FA_LATENCY;
}

/* between, latency and jitter go with the actions that take a latency,
 * and between instead of groups or isolate. 0 or -1. */
static int link_keys_check(struct opt_loader *L, const yaml_node_t *entry, const char *kp,
                           const struct fault_spec *f)
{
    char words[64];
    bool link = has_key(L, entry, "between") || has_key(L, entry, "latency") ||
                has_key(L, entry, "jitter");
    if (link && !(fault_action_of(f->action)->keys & FA_LATENCY))
        return fail_at(L, entry, "%s: between, latency and jitter go with %s", kp,
                       fault_action_join(words, sizeof words, act_latency, " or "));
    if (f->between && (has_key(L, entry, "groups") || has_key(L, entry, "isolate") ||
                       has_key(L, entry, "shape")))
        return fail_at(L, entry, "%s: give between, not groups, isolate or shape", kp);
    return 0;
}

static int load_fault(struct opt_loader *L, const yaml_node_t *entry, const char *kp,
                      struct fault_spec *f)
{
    if (entry->type != YAML_MAPPING_NODE)
        return wrong_type(L, entry, kp, "a mapping such as {at: 1s, action: pause, target: "
                                        "holder, duration: 2s}");
    memset(f, 0, sizeof *f);
    f->index = -1;
    f->window_ns = 1000000000LL;
    if (load_section(L, fault_entry_opts, entry, kp, (char *)f, -1) != 0)
        return -1;
    bool has_at = has_key(L, entry, "at"), has_every = has_key(L, entry, "every");
    bool has_count = has_key(L, entry, "count"), has_window = has_key(L, entry, "window");
    if (has_every)
        f->at_ns = f->every_ns;
    if (!has_key(L, entry, "action")) {
        char timed[160], fp_only[64];
        return fail_at(L, entry, "%s: action is missing (%s; %s at a failpoint)", kp,
                       fault_action_join(timed, sizeof timed, act_timed, ", "),
                       fault_action_join(fp_only, sizeof fp_only, act_failpoint_only, ", "));
    }
    if (fault_check(L, entry, kp, f, has_at, has_every, has_count,
                    has_key(L, entry, "duration"), has_key(L, entry, "target"), has_window,
                    has_key(L, entry, "offset")) != 0)
        return -1;
    if (f->target != TARGET_NET && (has_key(L, entry, "direction") || has_key(L, entry, "mode")))
        return fail_at(L, entry, "%s: direction and mode go with partition", kp);
    if (f->target != TARGET_HOLDER && has_key(L, entry, "point"))
        return fail_at(L, entry, "%s: point goes with target: holder", kp);
    f->seed_given = has_key(L, entry, "seed");
    if (!f->shape && (f->seed_given || f->pin[0]))
        return fail_at(L, entry, "%s: seed, minority and middle go with a partition's shape", kp);
    if (has_key(L, entry, "minority") != (f->pin[0] && f->shape == FAULT_SHAPE_MAJORITY_MINORITY) ||
        has_key(L, entry, "middle") != (f->pin[0] && f->shape == FAULT_SHAPE_BRIDGE))
        return fail_at(L, entry, "%s: minority goes with shape: majority-minority, middle with "
                                 "shape: bridge", kp);
    if (f->pin[0]) {
        size_t u = strlen(f->target_text);
        snprintf(f->target_text + u, sizeof f->target_text - u, " %s %.24s",
                 f->shape == FAULT_SHAPE_BRIDGE ? "middle" : "minority", f->pin);
    }
    if (link_keys_check(L, entry, kp, f) != 0)
        return -1;
    if (!has_count)
        f->count = f->target == TARGET_FAILPOINT || has_at ? 1 : 0; /* every: unbounded */
    f->window_given = has_window;
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
                      f->duration_ns + (f->when_holder || f->target == TARGET_HOLDER ||
                                                (fault_action_of(f->action)->keys & FA_WINDOW)
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
/* A partition's members named as hosts are hosts of the file, and a
 * partition needs hosts at all. 0 or -1. */
static int partitions_finish(struct opt_loader *L)
{
    struct scenario *s = L->s;
    int rc = 0;
    for (int i = 0; i < s->n_faults; i++) {
        const struct fault_spec *f = &s->faults[i];
        if (f->target != TARGET_NET)
            continue;
        yaml_mark_t at = {.line = (size_t)f->line - 1, .column = (size_t)f->column - 1};
        if (!s->n_hosts) {
            rc = fail_mark(L, &at, "faults[%d]: a %s acts between hosts: declare them "
                           "(hosts:, docs/scenarios.md)", i, fault_action_name(f->action));
            continue;
        }
        if (f->shape && s->n_hosts < 3) {
            rc = fail_mark(L, &at, "faults[%d]: shape %s needs 3 hosts or more (hosts: declares "
                           "%d): two sides%s", i, f->target_text, s->n_hosts,
                           f->shape == FAULT_SHAPE_BRIDGE ? " and a bridge between them"
                                                          : ", one a strict majority");
            continue;
        }
        for (int g = 0; g <= f->n_groups; g++)
            for (int k = 0; k < (g < f->n_groups ? f->group_len[g] : !!f->pin[0]); k++) {
                struct fault_spec t;
                const char *m = g < f->n_groups ? f->groups[g][k] : f->pin;
                bool host = false;
                for (int h = 0; h < s->n_hosts; h++)
                    host |= strcmp(s->hosts[h].name, m) == 0;
                if (!host && fault_target_parse(m, &t) != 0)
                    rc = fail_mark(L, &at, "faults[%d]: '%s' is no host of hosts:, client:N, "
                                   "holder or server role", i, m);
                else if (!host && t.target == TARGET_HOLDER) /* a side of the holder's host */
                    s->faults[i].when_holder = true;
            }
    }
    return rc;
}

int fault_load_finish(struct opt_loader *L)
{
    struct scenario *s = L->s;
    if (partitions_finish(L) != 0)
        return -1;
    for (int i = 0; i < s->n_faults; i++)
        if ((fault_action_of(s->faults[i].action)->keys & FA_WINDOW) && !s->faults[i].window_given)
            s->faults[i].window_ns = s->ttl_ns + s->business_ns + 1000000000LL;
    int k = -1;
    int64_t last = last_fault_end(s, &k);
    if (last == INT64_MIN || last >= s->max_duration_ns || s->wait_ns <= s->max_duration_ns - last)
        return 0;
    fprintf(stderr, "locklab: warning: %s:%d:%d: the run has %.2f s left after faults[%d] (over "
            "by %.2f s of %.2f s), less than lock.wait (%.2f s): no acquire can time out after "
            "the last fault\n", L->path, s->faults[k].line, s->faults[k].column,
            (double)(s->max_duration_ns - last) / 1e9, k, (double)last / 1e9,
            (double)s->max_duration_ns / 1e9, (double)s->wait_ns / 1e9);
    return 0;
}

int load_faults(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    struct scenario *s = L->s;
    char kp[64];
    if (value->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, value, keypath, "a sequence of fault entries (write [] for none)");
    s->n_faults = 0;
    int rc = 0;
    for (yaml_node_item_t *it = value->data.sequence.items.start;
         it < value->data.sequence.items.top; it++) {
        if (s->n_faults == FAULT_SPECS_MAX)
            return fail_at(L, node_at(L, *it), "%s: at most %d entries", keypath,
                           FAULT_SPECS_MAX);
        snprintf(kp, sizeof kp, "%s[%td]", keypath, it - value->data.sequence.items.start);
        if (load_fault(L, node_at(L, *it), kp, &s->faults[s->n_faults]) != 0)
            rc = -1; /* the next entries are still checked */
        else
            s->n_faults++;
    }
    return rc;
}
