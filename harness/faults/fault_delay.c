/*
 * fault_delay.c - delay: a slow link between two hosts for a while, made
 * by the lab's own delaying proxy (harness/net/net_delay.c: there is no
 * `tc netem` here). A row of the action table (fault_action.h) whose
 * target is a link: between two hosts, both ways or one way (only what
 * the first host sends), latency give or take jitter per chunk.
 *
 * The proxy is in the link's path from the run's start, passing bytes on
 * at once; firing sets the link's delay in it, so the connections the
 * clients made long before are slowed too. It lands on observed state: a
 * probe through the proxy (connections to the far host's probe listener,
 * timed to the end of stream that comes back: one direction each) before
 * and once the delay is set; the added p50 of each direction goes in the
 * record's note, and a delay that did not add half the least it holds a
 * chunk (shown()) is `failed` (and healed at once), never `done`. The instants it took effect
 * and healed are its phases ("slowed", "healed"); at the heal a probe
 * must show the delay gone. Healed after its duration, at the end of the
 * run whatever ends it, and with the proxy should locklab die.
 */
#include "fault_engine.h"

#include <stdio.h>
#include <string.h>

#include "net.h"

#define PROBES NET_DELAY_PROBES_MAX /* connections of each probe, at once */
#define SLOTS 4       /* delays on at once, one a link */
#define MS2 2000000LL /* a probe's noise, well within: healed when it adds less */

static struct slot {
    bool on;
    int rec;
    int host[2];          /* the link: between[0], between[1] */
    bool one_way;         /* only what host[0] sends is held */
    int64_t least, heal_at; /* least: what the probe must see added (shown()) */
    int64_t base[2];      /* p50 before, dir 0: host[0] -> host[1], dir 1: the reverse */
} slots[SLOTS];

/* Probe both directions of s's link at once: p50 of what host[0] sends
 * host[1] (a probe from host[1]) into p[0], the reverse into p[1]. */
static int probe_link(const struct slot *s, int timeout_ms, int64_t *p)
{
    int from[2] = {s->host[1], s->host[0]}, to[2] = {s->host[0], s->host[1]};
    return net_delay_probe(from, to, 2, PROBES, timeout_ms, p);
}

/* What a probe's p50 must add for a delay to show: half the least a chunk
 * is held (latency - jitter), and never under a tenth of the latency (a
 * jitter as large as the latency may hold a chunk for nothing). */
static int64_t shown(const struct fault_spec *f)
{
    int64_t half = (f->latency_ns - f->jitter_ns) / 2, tenth = f->latency_ns / 10;
    return half > tenth ? half : tenth;
}

static bool delayed_dir(const struct slot *s, int d)
{
    return d == 0 || !s->one_way;
}

static void set_link(const struct slot *s, int64_t latency, int64_t jitter)
{
    net_delay_set(s->host[0], s->host[1], latency, jitter);
    if (!s->one_way)
        net_delay_set(s->host[1], s->host[0], latency, jitter);
}

static void heal(struct faults *F, struct slot *s, const char *why)
{
    struct fault_record *r = fault_rec(F, s->rec);
    set_link(s, 0, 0);
    int64_t at = lab_now_ns(), p[2];
    s->on = false;
    r->end_ns = at;
    if (r->n_phases < FAULT_PHASES_MAX) {
        snprintf(r->phase[r->n_phases].name, sizeof r->phase[0].name, "healed");
        r->phase[r->n_phases++].at_ns = at;
    }
    if (why)
        fault_note_add(r, "%s", why);
    int rc = probe_link(s, 1000, p);
    fault_note_add(r, "healed: %s->%s %+.1f ms, %s->%s %+.1f ms", net_host_name(s->host[0]),
                   net_host_name(s->host[1]), (double)(p[0] - s->base[0]) / 1e6,
                   net_host_name(s->host[1]), net_host_name(s->host[0]),
                   (double)(p[1] - s->base[1]) / 1e6);
    if (r->outcome != FAULT_ACTIVE)
        return;
    bool gone = rc == 0;
    for (int d = 0; d < 2 && gone; d++)
        gone = !delayed_dir(s, d) || p[d] - s->base[d] < (s->least > MS2 ? s->least : MS2);
    r->outcome = gone ? FAULT_DONE : FAULT_FAILED;
    if (!gone)
        fault_note_add(r, "still slow after the heal");
}

static enum fault_fire delay_fire(struct faults *F, int spec, int64_t now)
{
    const struct fault_spec *f = &F->s->faults[spec];
    int a = net_host_find(f->groups[0][0]), b = net_host_find(f->groups[1][0]);
    struct slot *s = NULL;
    for (int i = 0; i < SLOTS; i++) {
        const struct slot *o = &slots[i];
        if (o->on && ((o->host[0] == a && o->host[1] == b) || (o->host[0] == b && o->host[1] == a))) {
            fault_rec_skip(F, spec, now, false, "another delay is on this link");
            return FAULT_FIRED;
        }
        if (!o->on && !s)
            s = &slots[i];
    }
    if (!s) {
        fault_rec_skip(F, spec, now, false, "%d delays are on already", SLOTS);
        return FAULT_FIRED;
    }
    int idx;
    struct fault_record *r = fault_rec_new(&F->rg->head->faults, F->s, spec, &idx);
    if (!r)
        return FAULT_FIRED;
    *s = (struct slot){.rec = idx, .host = {a, b}, .one_way = f->one_way,
                       .least = shown(f)};
    snprintf(r->hit, sizeof r->hit, "%s %s %s", f->groups[0][0], f->one_way ? "->" : "<->",
             f->groups[1][0]);
    r->start_ns = now;
    if (a < 0 || b < 0 || !net_delay_in_path(a, b)) {
        r->outcome = FAULT_FAILED;
        fault_note_add(r, "the delaying proxy is not in the path of this link");
        fault_rec_publish(&F->rg->head->faults, idx);
        return FAULT_FIRED;
    }
    long live = net_delay_live(); /* the run's own connections: no probe's yet */
    int base_rc = probe_link(s, 1000, s->base);
    set_link(s, f->latency_ns, f->jitter_ns);
    int64_t at = lab_now_ns(), p[2];
    r->start_ns = at;
    r->n_phases = 1;
    snprintf(r->phase[0].name, sizeof r->phase[0].name, "slowed");
    r->phase[0].at_ns = at;
    r->outcome = FAULT_ACTIVE;
    s->on = true;
    int rc = probe_link(s, (int)((f->latency_ns + f->jitter_ns) / 1000000) + 1000, p);
    bool landed = base_rc == 0 && rc == 0;
    if (f->jitter_ns)
        fault_note_add(r, "latency %.0f+-%.0f ms", (double)f->latency_ns / 1e6,
                       (double)f->jitter_ns / 1e6);
    else
        fault_note_add(r, "latency %.0f ms", (double)f->latency_ns / 1e6);
    for (int d = 0; d < 2; d++) {
        const char *x = net_host_name(s->host[d]), *y = net_host_name(s->host[1 - d]);
        fault_note_add(r, "%sp50 %s->%s %+.1f ms (%.1f -> %.1f)", d ? "" : "probe ", x, y,
                       (double)(p[d] - s->base[d]) / 1e6, (double)s->base[d] / 1e6,
                       (double)p[d] / 1e6);
        if (delayed_dir(s, d))
            landed = landed && p[d] - s->base[d] >= s->least;
    }
    fault_note_add(r, "%ld connections in path", live);
    if (!landed) {
        r->outcome = FAULT_FAILED;
        heal(F, s, base_rc || rc ? "a probe failed: healed" : "the delay did not show: healed");
    } else {
        s->heal_at = at + f->duration_ns;
    }
    fault_rec_publish(&F->rg->head->faults, idx);
    return FAULT_FIRED;
}

static int64_t delay_tick(struct faults *F, int64_t now)
{
    int64_t next = INT64_MAX;
    for (int i = 0; i < SLOTS; i++) {
        if (!slots[i].on)
            continue;
        if (now >= slots[i].heal_at)
            heal(F, &slots[i], NULL);
        else if (slots[i].heal_at < next)
            next = slots[i].heal_at;
    }
    return next;
}

static void delay_finish(struct faults *F, bool interrupted)
{
    for (int i = 0; i < SLOTS; i++)
        if (slots[i].on)
            heal(F, &slots[i], interrupted ? "healed early: the run was interrupted"
                                           : "healed early: the run ended");
}

static const char *delay_check(const struct fault_spec *f, char *buf, size_t n)
{
    if (!f->between)
        snprintf(buf, n, "delay takes between: [h1, h2] (two hosts), not groups or isolate");
    else if (!f->latency_ns)
        snprintf(buf, n, "delay needs a latency, such as 200ms");
    else if (f->jitter_ns > f->latency_ns)
        snprintf(buf, n, "jitter (%.0f ms) is more than the latency (%.0f ms)",
                 (double)f->jitter_ns / 1e6, (double)f->latency_ns / 1e6);
    else if (f->reject)
        snprintf(buf, n, "mode goes with partition, not delay");
    else
        return NULL;
    return buf;
}

const struct fault_action_ops fault_delay = {
    .word = "delay",
    .keys = FA_DURATION | FA_LATENCY,
    .check = delay_check,
    .fire_net = delay_fire,
    .tick = delay_tick,
    .finish = delay_finish,
};
