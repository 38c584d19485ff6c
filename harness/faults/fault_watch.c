/*
 * fault_watch.c - timing a store's recovery after a server fault (see
 * fault_watch.h).
 *
 * Each poll asks the backend once how its servers stand (available: one
 * leader serves with a quorum; whole: every running server serves) and
 * applies the answer to every open watch. An election is a leader lost
 * (no leader seen at a poll) or changed (another leads than before the
 * fault); leader_ns is the first poll that saw a leader serve after it.
 * Times in notes count from the fault's start, in seconds, as a person
 * reads them ("new leader zookeeper:2 after 1.83 s").
 */
#include "fault_watch.h"

#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "fault_action.h"
#include "region.h"

static double after_s(int64_t t, const struct fault_record *r)
{
    return (double)(t - r->start_ns) / 1e9;
}

static const struct backend_ops *health_of(const struct fault_watches *W)
{
    const struct backend_ops *be = backend_of(W->ops);
    return be && be->health ? be : NULL;
}

void fault_watch_init(struct fault_watches *W, const struct lock_ops *ops,
                      const struct scenario *s, struct fault_log *log)
{
    memset(W, 0, sizeof *W);
    W->ops = ops;
    W->s = s;
    W->log = log;
}

bool fault_watch_open(struct fault_watches *W, int rec, const struct server *srv,
                      const char *name)
{
    const struct backend_ops *be = health_of(W);
    if (!be || W->n == FAULT_WATCH_MAX)
        return false;
    struct backend_health h;
    be->health(W->ops, W->s, &h);
    memset(&W->w[W->n], 0, sizeof W->w[0]);
    W->w[W->n].rec = rec;
    W->w[W->n].srv = srv;
    snprintf(W->w[W->n].leader_before, sizeof W->w[0].leader_before, "%s",
             h.available ? h.leader : "");
    W->n++;
    W->used = true;
    W->next_poll = 0; /* look at the next tick */
    if (h.available && strcmp(h.leader, name) == 0)
        fault_note_add(&W->log->rec[rec], "it was the leader");
    return true;
}

bool fault_watch_has(const struct fault_watches *W, int rec)
{
    for (int k = 0; k < W->n; k++)
        if (W->w[k].rec == rec)
            return true;
    return false;
}

/* Has record r done its own part: a pause continued, a restarted server
 * started again? A kill or a stop leaves its server down: at once. */
static bool own_part_over(const struct fault_record *r)
{
    return fault_action_is(r->action, FA_LEAVES_DOWN) || r->end_ns != 0;
}

/* End watch k at now, whole again; the record says who leads and since when. */
static void watch_close(struct fault_watches *W, int k, int64_t now,
                        const struct backend_health *h)
{
    struct fault_record *r = &W->log->rec[W->w[k].rec];
    snprintf(r->leader, sizeof r->leader, "%s", h->leader);
    r->leader_ns = W->w[k].leader_ns;
    if (!h->leader[0] && !W->w[k].leader_before[0])
        ; /* a store without a leader (one server, or independent masters) */
    else if (!r->leader_ns)
        fault_note_add(r, "leader %s kept", h->leader);
    else if (strcmp(h->leader, W->w[k].leader_before) == 0)
        fault_note_add(r, "%s leads again after %.2f s", h->leader, after_s(r->leader_ns, r));
    else
        fault_note_add(r, "new leader %s after %.2f s", h->leader, after_s(r->leader_ns, r));
    /* the others may serve while the one started again has died */
    bool died = fault_action_is(r->action, FA_STARTS) && W->w[k].srv->pid <= 0;
    if (died)
        fault_note_add(r, "it exited after it was started again (its log says why)");
    else
        fault_note_add(r, "all serving after %.2f s", after_s(now, r));
    if (r->end_ns < now)
        r->end_ns = now;
    r->outcome = died ? FAULT_FAILED : FAULT_DONE;
    W->w[k] = W->w[--W->n];
}

void fault_watch_taken(struct fault_watches *W, const struct server *srv, int except_rec,
                       const char *by)
{
    for (int k = W->n - 1; k >= 0; k--) {
        struct fault_record *r = &W->log->rec[W->w[k].rec];
        if (W->w[k].srv != srv || W->w[k].rec == except_rec ||
            !fault_action_is(r->action, FA_STARTS))
            continue;
        /* it was started: the start landed; its rejoin was cut short by the lab */
        fault_note_add(r, "%s before it had rejoined", by);
        if (!r->end_ns)
            r->end_ns = lab_now_ns();
        if (!r->back_ns)
            r->back_ns = r->end_ns; /* the fault that takes it down now opens its own window */
        r->outcome = FAULT_DONE;
        W->w[k] = W->w[--W->n];
    }
}

/* One look at the store, applied to every watch. */
static void watch_look(struct fault_watches *W, int64_t now, struct backend_health *h)
{
    health_of(W)->health(W->ops, W->s, h);
    for (int k = W->n - 1; k >= 0; k--) {
        struct fault_record *r = &W->log->rec[W->w[k].rec];
        if (r->outcome != FAULT_ACTIVE) { /* failed (or closed) elsewhere */
            W->w[k] = W->w[--W->n];
            continue;
        }
        if (!h->available) {
            W->w[k].lost = true;
            continue;
        }
        if (!W->w[k].leader_ns && h->leader[0] &&
            (W->w[k].lost || strcmp(h->leader, W->w[k].leader_before) != 0))
            W->w[k].leader_ns = now;
        if (!r->back_ns && own_part_over(r))
            r->back_ns = now; /* the store says it serves again: the outage is over */
        if (h->whole && own_part_over(r))
            watch_close(W, k, now, h);
    }
    W->next_poll = now + FAULT_WATCH_POLL_NS;
}

int64_t fault_watch_poll(struct fault_watches *W, int64_t now)
{
    if (W->n == 0)
        return INT64_MAX;
    if (now >= W->next_poll) {
        struct backend_health h;
        watch_look(W, now, &h);
    }
    return W->n ? W->next_poll : INT64_MAX;
}

void fault_watch_settle(struct fault_watches *W, bool interrupted)
{
    if (!W->used || !health_of(W))
        return;
    int64_t began = lab_now_ns(), deadline = began + FAULT_WATCH_SETTLE_NS;
    struct backend_health h = {0};
    const char *why = "the run was interrupted before the servers settled";
    while (!interrupted) {
        int64_t now = lab_now_ns();
        watch_look(W, now, &h);
        if (W->n == 0 && h.available && h.whole && h.running == h.servers)
            return;
        /* every server was brought back: one still down a second on has died
         * (or a second Ctrl-C killed them all) */
        if ((h.running < h.servers && now - began > 1000000000LL) || now >= deadline) {
            why = h.running == h.servers ? "the servers did not settle in time"
                                         : "a server is not running after the run";
            break;
        }
        lab_sleep_ns(FAULT_WATCH_POLL_NS, NULL);
    }
    if (W->n == 0 && !interrupted)
        fprintf(stderr, "locklab: warning: %s: %s\n", backend_of(W->ops)->title, why);
    while (W->n > 0) {
        struct fault_record *r = &W->log->rec[W->w[W->n - 1].rec];
        fault_note_add(r, "%s", why);
        if (!r->end_ns)
            r->end_ns = lab_now_ns();
        r->outcome = interrupted ? FAULT_DONE : FAULT_FAILED;
        W->n--;
    }
}
