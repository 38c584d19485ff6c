/*
 * fault_partition.c - partition: the network between the run's hosts cut
 * for a while (harness/net/), as Jepsen's partition nemesis cuts it. A row
 * of the action table (fault_action.h) whose target is the links rather
 * than a process: groups (sides, each of hosts, clients or servers by
 * role), isolate (one side; every other host is the other) or a shape
 * drawn from the hosts (fault_shape.c: majority-minority, bridge), two-way
 * or one-way (what the first side sends is lost), drop or reject.
 *
 * It lands on observed state: once the rules are in, a probe across the
 * cut must fail and one inside a side must connect; both go in the
 * record's note with how long they took (a bridge must reach both sides),
 * and the instants the cut took effect and healed are its phases ("cut",
 * "healed"); a shape's seed is noted, so the same split can be asked for.
 * A cut that did not show is `failed` and healed at once, never `done`.
 * Lock errors from the cut until the heal plus the grace are the cut's
 * (fault_errors), as a server fault's are until its store serves again.
 * On a store that elects, the first poll that sees another leader is the
 * phase "leader". With `when: holder` it waits (up to its window) until a
 * client on the first side is inside its critical section (a minority
 * holder, as a split brain needs), and notes which. The cut is healed
 * after its duration, at the end of the run whatever ends it (finish),
 * and, should locklab die, with the hosts' namespaces themselves.
 */
#include "fault_engine.h"

#include <stdio.h>
#include <string.h>

#include "net.h"

#define PROBE_MS 300

/* The partition under way (one at a time). */
static struct {
    bool on;
    int rec;
    int64_t heal_at;
    unsigned ruled;        /* hosts with rules */
    int probe_from, probe_to; /* the probe across, to see the heal */
    /* a store that elects (more than one server with a leader at the
     * cut): asked every LEADER_POLL_NS until another leader serves */
    char leader_before[32];
    int64_t next_look;
} in_force;

#define LEADER_POLL_NS (20 * 1000000LL)

/* when: holder: a client running on a host of side (a mask) inside its
 * critical section now, read in the oracle's shared slots; -1 none. */
static int holder_on(struct faults *F, unsigned side)
{
    for (int i = 0; i < F->n_clients; i++) {
        int h = net_client_host(i);
        if (F->pids[i] > 0 && h != NET_LAB && (side & (1u << h)) &&
            atomic_load(&F->rg->slots[i].iv_phase) == IV_INSIDE)
            return i;
    }
    return -1;
}

/* A side named `holder` and no client was inside (when: holder waits). */
static bool no_holder;

/* The host member m of a side stands for now, or -1 with why (not_used:
 * the design does not run that server; no_holder: m is `holder` and no
 * client on a host is inside its critical section now). */
static int member_host(struct faults *F, const char *m, char *why, size_t n, bool *not_used)
{
    int h = net_host_find(m);
    if (h >= 0)
        return h;
    struct fault_spec t;
    memset(&t, 0, sizeof t);
    if (fault_target_parse(m, &t) != 0) {
        snprintf(why, n, "%s is no host, client or server", m);
        return -1;
    }
    if (t.target == TARGET_HOLDER) { /* the host of a client inside its critical section */
        int i = holder_on(F, ~0u);
        if (i < 0) {
            no_holder = true;
            snprintf(why, n, "no client on a host was inside its critical section");
            return -1;
        }
        return net_client_host(i);
    }
    if (t.target == TARGET_CLIENT) {
        h = net_client_host(t.index);
        if (h == NET_LAB)
            snprintf(why, n, "%s runs on no host", m);
        return h == NET_LAB ? -1 : h;
    }
    const struct backend_ops *be = backend_of(F->ops);
    F->n_roles = be ? be->roles(F->ops, F->s, F->roles, BACKEND_MAX_ROLES) : 0;
    struct server *srv = t.target == TARGET_SERVER ? fault_find_role(F, &t) : NULL;
    if (!srv) {
        *not_used = true;
        snprintf(why, n, "%s does not run on an embedded %s", F->ops->name, m);
        return -1;
    }
    h = net_host_of_ns(srv->ns_pid);
    if (h == NET_LAB)
        snprintf(why, n, "%s runs on no host", m);
    return h == NET_LAB ? -1 : h;
}

/* The sides of f as masks of hosts; how many, or -1 with why. */
static int sides_of(struct faults *F, const struct fault_spec *f, unsigned *side, char *why,
                    size_t n, bool *not_used)
{
    int k = 0;
    for (int g = 0; g < f->n_groups; g++, k++) {
        side[k] = 0;
        for (int i = 0; i < f->group_len[g]; i++) {
            int h = member_host(F, f->groups[g][i], why, n, not_used);
            if (h < 0)
                return -1;
            side[k] |= 1u << h;
        }
    }
    if (f->isolate) {
        side[k++] = ((1u << net_host_count()) - 1) & ~side[0];
    }
    for (int a = 0; a < k; a++) {
        if (!side[a]) {
            snprintf(why, n, "side %d has no host", a);
            return -1;
        }
        for (int b = a + 1; b < k; b++)
            if (side[a] & side[b]) {
                char names[96];
                snprintf(why, n, "%s on two sides", net_mask_names(side[a] & side[b], names,
                                                                   sizeof names));
                return -1;
            }
    }
    return k;
}

/* The sides of f's shape (fault_shape.c): 2, with *bridge the bridge's
 * host (-1 none) and *seed the shuffle's seed (the entry's, else drawn
 * now); or -1 with why (*not_used: the design does not run the pinned
 * server). */
static int shape_sides(struct faults *F, const struct fault_spec *f, unsigned *side, int *bridge,
                       int *seed, char *why, size_t n, bool *not_used)
{
    int pin = -1;
    if (f->pin[0] && (pin = member_host(F, f->pin, why, n, not_used)) < 0)
        return -1;
    uint32_t drawn = 0;
    if (!f->seed_given && lab_random_bytes(&drawn, sizeof drawn) != 0)
        drawn = (uint32_t)lab_now_ns();
    *seed = f->seed_given ? f->seed : (int)(drawn & 0x7fffffff);
    if (fault_shape_split(f->shape, net_host_count(), pin, *seed, side, bridge) != 0) {
        snprintf(why, n, "%d hosts make no %s", net_host_count(), f->target_text);
        return -1;
    }
    return 2;
}

static int first_host(unsigned m)
{
    for (int h = 0; h < SCN_MAX_HOSTS; h++)
        if (m & (1u << h))
            return h;
    return -1;
}

/* Probe from -> to, described into the record's note as "what: a->b
 * result (ms)"; the result. */
static enum net_probe probe_note(struct fault_record *r, const char *what, int from, int to)
{
    int64_t took;
    enum net_probe p = net_probe(from, to, PROBE_MS, &took);
    fault_note_add(r, "%s %s->%s %s in %.1f ms", what, net_host_name(from), net_host_name(to),
                   net_probe_word(p), (double)took / 1e6);
    return p;
}

static void heal(struct fault_record *r, const char *why)
{
    struct lab_err err = {0};
    int rc = net_heal(in_force.ruled, &err);
    int64_t at = lab_now_ns();
    in_force.ruled = 0;
    in_force.on = false;
    r->end_ns = at;
    r->back_ns = at; /* the links are whole again: the grace for lock errors runs from here */
    if (r->n_phases < FAULT_PHASES_MAX) {
        snprintf(r->phase[r->n_phases].name, sizeof r->phase[0].name, "healed");
        r->phase[r->n_phases++].at_ns = at;
    }
    if (rc != 0) {
        r->outcome = FAULT_FAILED;
        fault_note_add(r, "heal failed: %s", err.msg);
        return;
    }
    if (why)
        fault_note_add(r, "%s", why);
    if (r->outcome == FAULT_ACTIVE) {
        enum net_probe p = probe_note(r, "healed:", in_force.probe_from, in_force.probe_to);
        r->outcome = p == NET_PROBE_OK ? FAULT_DONE : FAULT_FAILED;
    }
}

static enum fault_fire partition_fire(struct faults *F, int spec, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    unsigned side[FAULT_GROUPS_MAX + 1];
    char why[160];
    bool not_used = false;
    if (in_force.on) {
        fault_rec_skip(F, spec, now, false, "another partition is under way");
        return FAULT_FIRED;
    }
    int bridge = -1, seed = 0;
    no_holder = false;
    int k = f->shape ? shape_sides(F, f, side, &bridge, &seed, why, sizeof why, &not_used)
                     : sides_of(F, f, side, why, sizeof why, &not_used);
    if (k < 0 && no_holder && f->when_holder && now < F->st[spec].window_end)
        return FAULT_RETRY;
    if (k < 0 && (!f->shape || not_used)) {
        fault_rec_skip(F, spec, now, not_used, "%s", why);
        return FAULT_FIRED;
    }
    int holder = -1; /* when: holder: a client of the first side holds the lock */
    if (k >= 0 && f->when_holder && (holder = holder_on(F, side[0])) < 0) {
        if (now < F->st[spec].window_end)
            return FAULT_RETRY;
        char names[96];
        fault_rec_skip(F, spec, now, false,
                       "no client on %s was inside its critical section within %lld ms",
                       net_mask_names(side[0], names, sizeof names),
                       (long long)(f->window_ns / 1000000));
        return FAULT_FIRED;
    }
    int idx;
    struct fault_record *r = fault_rec_new(&F->rg->head->faults, F->s, spec, &idx);
    if (!r)
        return FAULT_FIRED;
    if (k < 0) { /* a shape that cannot be formed now: no cut, never done */
        r->outcome = FAULT_FAILED;
        r->start_ns = r->end_ns = now;
        fault_note_add(r, "cannot form %s: %s", f->target_text, why);
        fault_rec_publish(&F->rg->head->faults, idx);
        return FAULT_FIRED;
    }
    size_t u = 0;
    for (int a = 0; a < k && u < sizeof r->hit; a++) {
        char names[96];
        int w = snprintf(r->hit + u, sizeof r->hit - u, "%s%s", a ? (f->one_way ? " -/-> " : " | ") : "",
                         net_mask_names(side[a], names, sizeof names));
        u += w > 0 ? (size_t)w : 0;
    }
    if (bridge >= 0 && u < sizeof r->hit)
        snprintf(r->hit + u, sizeof r->hit - u, " (bridge %s)", net_host_name(bridge));
    struct lab_err err = {0};
    int rc = 0;
    in_force.ruled = 0;
    for (int a = 0; a < k && rc == 0; a++)
        for (int b = a + 1; b < k && rc == 0; b++) {
            if (!f->one_way || a == 0)
                rc = net_cut(side[a], side[b], f->reject, &in_force.ruled, &err);
            if (rc == 0 && !f->one_way)
                rc = net_cut(side[b], side[a], f->reject, &in_force.ruled, &err);
        }
    int64_t at = lab_now_ns();
    r->start_ns = at;
    r->n_phases = 1;
    snprintf(r->phase[0].name, sizeof r->phase[0].name, "cut");
    r->phase[0].at_ns = at;
    r->outcome = FAULT_ACTIVE;
    fault_excuse_open(F, r); /* lock errors until the heal (and its grace) are the cut's */
    in_force.rec = idx;
    in_force.on = true;
    if (rc != 0) {
        r->outcome = FAULT_FAILED;
        fault_note_add(r, "%s", err.msg);
        heal(r, NULL);
        fault_rec_publish(&F->rg->head->faults, idx);
        return FAULT_FIRED;
    }
    fault_note_add(r, "%s", f->reject ? "reject" : "drop");
    if (holder >= 0) {
        r->client = holder;
        r->holder = true;
        fault_note_add(r, "while client %d held the lock (granted %.1f ms before the cut)", holder,
                       (double)(at - F->rg->slots[holder].cur.enter_ns) / 1e6);
    }
    if (f->shape)
        fault_note_add(r, "seed %d", seed);
    in_force.leader_before[0] = '\0';
    const struct backend_ops *be = backend_of(F->ops);
    if (be && be->health) {
        struct backend_health h;
        be->health(F->ops, F->s, &h);
        if (h.available && h.servers > 1)
            snprintf(in_force.leader_before, sizeof in_force.leader_before, "%s", h.leader);
    }
    in_force.next_look = at + LEADER_POLL_NS;
    in_force.probe_from = first_host(side[0]);
    in_force.probe_to = first_host(side[1]);
    enum net_probe across = probe_note(r, "across", in_force.probe_from, in_force.probe_to);
    int in_from = in_force.probe_from, in_to = in_force.probe_from;
    for (int a = 0; a < k; a++)
        if (side[a] & (side[a] - 1)) { /* a side of two hosts or more */
            in_from = first_host(side[a]);
            in_to = first_host(side[a] & ~(1u << in_from));
            break;
        }
    enum net_probe inside = probe_note(r, "inside", in_from, in_to);
    bool bridged = true; /* the bridge reaches both sides */
    for (int a = 0; bridge >= 0 && a < 2; a++)
        bridged &= probe_note(r, "bridge", bridge, first_host(side[a])) == NET_PROBE_OK;
    if (across == NET_PROBE_OK || inside != NET_PROBE_OK || !bridged) {
        r->outcome = FAULT_FAILED;
        heal(r, across == NET_PROBE_OK ? "the cut did not show: healed"
                : inside != NET_PROBE_OK ? "a side lost its own links: healed"
                                         : "the bridge lost a side: healed");
    } else {
        in_force.heal_at = at + f->duration_ns;
    }
    fault_rec_publish(&F->rg->head->faults, idx);
    return FAULT_FIRED;
}

/* While the cut lasts, a store that elects is asked who leads: the first
 * poll that sees another leader serve (alone) is the phase "leader", and
 * the note says who and how long after the cut (the election's time as
 * the store reports it). */
static int64_t leader_look(struct faults *F, int64_t now)
{
    if (!in_force.leader_before[0])
        return INT64_MAX;
    if (now < in_force.next_look)
        return in_force.next_look;
    struct backend_health h;
    backend_of(F->ops)->health(F->ops, F->s, &h);
    struct fault_record *r = fault_rec(F, in_force.rec);
    if (h.available && strcmp(h.leader, in_force.leader_before) != 0 &&
        r->n_phases < FAULT_PHASES_MAX) {
        int64_t at = lab_now_ns();
        snprintf(r->phase[r->n_phases].name, sizeof r->phase[0].name, "leader");
        r->phase[r->n_phases++].at_ns = at;
        fault_note_add(r, "new leader %s %.2f s after the cut", h.leader,
                       (double)(at - r->start_ns) / 1e9);
        in_force.leader_before[0] = '\0';
        return INT64_MAX;
    }
    in_force.next_look = now + LEADER_POLL_NS;
    return in_force.next_look;
}

static int64_t partition_tick(struct faults *F, int64_t now)
{
    if (!in_force.on)
        return INT64_MAX;
    if (now < in_force.heal_at) {
        int64_t look = leader_look(F, now);
        return look < in_force.heal_at ? look : in_force.heal_at;
    }
    if (in_force.leader_before[0])
        fault_note_add(fault_rec(F, in_force.rec), "%s still led at the heal",
                       in_force.leader_before);
    in_force.leader_before[0] = '\0';
    heal(fault_rec(F, in_force.rec), NULL);
    return INT64_MAX;
}

static void partition_finish(struct faults *F, bool interrupted)
{
    if (in_force.on)
        heal(fault_rec(F, in_force.rec), interrupted ? "healed early: the run was interrupted"
                                                : "healed early: the run ended");
}

static const char *partition_check(const struct fault_spec *f, char *buf, size_t n)
{
    if (f->target != TARGET_NET) {
        snprintf(buf, n, "partition takes groups, isolate or shape, not a target");
        return buf;
    }
    if (!f->isolate && !f->shape && f->n_groups < 2) {
        snprintf(buf, n, "groups needs two sides or more, such as [[h1], [h2, h3]]");
        return buf;
    }
    return NULL;
}

const struct fault_action_ops fault_partition = {
    .word = "partition",
    .keys = FA_DURATION,
    .check = partition_check,
    .fire_net = partition_fire,
    .tick = partition_tick,
    .finish = partition_finish,
};
