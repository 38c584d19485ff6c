/*
 * summary_json.c - results/<run-id>/summary.json: every result of the run
 * built with jansson, field names as docs/results.md defines them (a
 * contract that plots, CI, baselines and users read), including the fields
 * that explain a verdict: the first error a client hit, crashed clients,
 * the live overlap counter, what each fault did.
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "atomic_file.h"
#include "at_stake.h"
#include "cpu.h"
#include "fault.h"
#include "handoff_split.h"
#include "report_parts.h"
#include "report_stderr.h"
#include "verdict.h"

static json_t *latency_json(const struct hist *h)
{
    return json_pack("{s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I}", "count", (json_int_t)h->total,
                     "min", (json_int_t)(h->total ? h->min : 0), "mean", hist_mean(h), "p50",
                     (json_int_t)hist_percentile(h, 50), "p90", (json_int_t)hist_percentile(h, 90),
                     "p99", (json_int_t)hist_percentile(h, 99), "p999",
                     (json_int_t)hist_percentile(h, 99.9), "max", (json_int_t)h->max);
}

/* The oracle's own bookkeeping, beside the safety figures: how many
 * intervals it analysed, how many belonged to dead clients and were closed
 * by the parent, and whether the live counter agreed with the logs. */
static void safety_oracle_json(json_t *safety, const struct run_result *r)
{
    static const char *const cross[] = {"skipped", "ok", "mismatch"};
    json_object_set_new(safety, "intervals", json_integer(r->oracle.intervals));
    json_object_set_new(safety, "intervals_closed_by_harness", json_integer(r->intervals_closed));
    json_object_set_new(safety, "cross_check", json_string(cross[r->cross_check]));
    json_object_set_new(safety, "cross_check_note",
                        r->cross_note[0] ? json_string(r->cross_note) : json_null());
}

/* The lock's outcome and the resource's, what the stale holder of each
 * overlapping pair did, and the stale-holder window (docs/results.md). */
static void safety_stale_json(json_t *safety, const struct run_result *r)
{
    const struct oracle_stale *st = &r->stale;
    json_object_set_new(safety, "lock", json_string(verdict_lock_outcome(r)));
    json_object_set_new(safety, "resource", json_string(verdict_resource_outcome(r)));
    json_object_set_new(safety, "stale_pairs",
                        json_pack("{s:I, s:I, s:I, s:I, s:I}", "through", (json_int_t)st->through,
                                  "ordered", (json_int_t)st->ordered, "refused", (json_int_t)st->refused, "noticed",
                                  (json_int_t)st->noticed, "chance", (json_int_t)st->chance));
    json_t *win = json_object();
    json_object_set_new(win, "holders", json_integer(st->holders));
    json_object_set_new(win, "noticed", json_integer(st->holders_noticed));
    json_object_set_new(win, "p50_ms", st->holders ? json_real((double)st->window_p50_ns / 1e6)
                                                   : json_null());
    json_object_set_new(win, "max_ms", st->holders ? json_real((double)st->window_max_ns / 1e6)
                                                   : json_null());
    json_object_set_new(safety, "stale_window", win);
}

/* The servers the result really ran on (its store's table described them). */
static json_t *servers_json(const struct run_result *r)
{
    json_t *o = json_loads(r->servers, 0, NULL);
    json_t *all = json_object();
    if (o && json_object_size(o) > 0)
        json_object_set_new(all, r->ops->backend, o);
    else
        json_decref(o);
    return all;
}

static double ms_after(int64_t t, int64_t start)
{
    return (double)(t - start) / 1e6;
}

/* The server fault a run never recovered from (verdict unavailable), or
 * null: its entry, what it was, and the lock errors after it. */
static json_t *unavailable_json(const struct run_result *r)
{
    if (!r->unavailable)
        return json_null();
    const struct fault_record *f = &r->faults[r->unavailable_fault];
    return json_pack("{s:i, s:s, s:s, s:f, s:I, s:b}", "entry", f->spec, "action",
                     fault_action_name(f->action), "target", f->target, "start_ms",
                     ms_after(f->start_ns, r->start_ns), "errors_after",
                     (json_int_t)f->errors_after, "store_back", r->unavailable_back);
}

/* What the fault timeline did in this run. */
static json_t *faults_json(const struct run_result *r)
{
    json_t *a = json_array();
    for (int i = 0; i < r->n_faults; i++) {
        const struct fault_record *f = &r->faults[i];
        json_t *o = json_pack("{s:i, s:s, s:s, s:s, s:f, s:f, s:s}", "entry", f->spec, "action",
                              fault_action_name(f->action), "target", f->target, "outcome",
                              fault_outcome_name(f->outcome), "start_ms",
                              ms_after(f->start_ns, r->start_ns), "end_ms",
                              ms_after(f->end_ns, r->start_ns), "note", f->note);
        json_object_set_new(o, "hit", f->hit[0] ? json_string(f->hit) : json_null());
        json_object_set_new(o, "pid", f->pid ? json_integer(f->pid) : json_null());
        json_object_set_new(o, "client", f->client >= 0 ? json_integer(f->client) : json_null());
        if (f->n_phases) {
            json_t *ph = json_object();
            for (int k = 0; k < f->n_phases; k++)
                json_object_set_new(ph, f->phase[k].name,
                                    json_real(ms_after(f->phase[k].at_ns, r->start_ns)));
            json_object_set_new(o, "phases_ms", ph);
        }
        if (f->leader[0]) { /* a store that elects: who led once it served again, and
                               when a leader served after the fault took it away */
            json_object_set_new(o, "leader", json_string(f->leader));
            json_object_set_new(o, "leader_back_ms",
                                f->leader_ns ? json_real(ms_after(f->leader_ns, f->start_ns))
                                             : json_null());
        }
        bool server = fault_took_service(f);
        if (f->action == FAULT_PARTITION && f->holder) { /* the holder cut off: until it
                                                            left, until another's grant */
            json_object_set_new(o, "next_grant_ms", f->taken_ns >= 0
                                                        ? json_real((double)f->taken_ns / 1e6)
                                                        : json_null());
            json_object_set_new(o, "holder_left_ms", f->left_ns >= 0
                                                         ? json_real((double)f->left_ns / 1e6)
                                                         : json_null());
        }
        if ((f->action == FAULT_KILL && f->client >= 0) || server)
            json_object_set_new(o, "recovery_ms", f->recovery_ns >= 0
                                                      ? json_real((double)f->recovery_ns / 1e6)
                                                      : json_null());
        if (server) { /* when the store served again, the grace after it, errors after it */
            json_object_set_new(o, "back_ms", f->back_ns ? json_real(ms_after(f->back_ns,
                                                                              r->start_ns))
                                                         : json_null());
            json_object_set_new(o, "grace_ms", json_integer(f->grace_ns / 1000000));
            json_object_set_new(o, "errors_after", json_integer(f->errors_after));
        }
        if (f->in_section_ns >= 0) /* aimed at a holder: how far into its section it landed */
            json_object_set_new(o, "in_section_ms", json_real((double)f->in_section_ns / 1e6));
        if (f->action == FAULT_CLOCK_JUMP) /* what the server's own clock did */
            json_object_set_new(o, "clock_jump_ms", json_real((double)f->jump_ns / 1e6));
        /* did it put the lock at stake (at_stake.h): yes, no or n/a, its
         * window and the clients asking in it, in words */
        json_object_set_new(o, "at_stake", json_string(fault_stake_name(f->at_stake)));
        json_object_set_new(o, "stake_from_ms", f->at_stake == STAKE_YES
                                                    ? json_real(ms_after(f->stake_from_ns,
                                                                         r->start_ns))
                                                    : json_null());
        json_object_set_new(o, "stake_to_ms", f->at_stake == STAKE_YES
                                                  ? json_real(ms_after(f->stake_to_ns,
                                                                       r->start_ns))
                                                  : json_null());
        json_object_set_new(o, "stake_waiters", json_integer(f->stake_waiters));
        json_object_set_new(o, "stake_why", json_string(f->stake_why));
        json_array_append_new(a, o);
    }
    return a;
}

/* Where the run's CPU time went: seconds, and cores used on average. */
static json_t *cpu_json(const struct run_result *r)
{
    const struct cpu_use *u = &r->cpu;
    json_t *servers = json_object();
    for (int i = 0; i < u->n_servers; i++)
        json_object_set_new(servers, u->server[i].name, json_real((double)u->server[i].ns / 1e9));
    json_t *o = json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:b, s:s?}", "cores", u->cores,
                     "machine_busy", u->machine_busy,
                     "clients_s", (double)u->clients_ns / 1e9, "clients_cores",
                     cpu_cores(u->clients_ns, r->elapsed_s), "servers_s",
                     (double)u->servers_ns / 1e9, "servers_cores",
                     cpu_cores(u->servers_ns, r->elapsed_s), "harness_s",
                     (double)u->harness_ns / 1e9, "per_server_s", servers, "client_bound",
                     u->client_bound, "client_bound_why",
                     !u->client_bound ? NULL : u->client_core ? "client-core" : "saturated");
    if (!o)
        return NULL;
    /* the harness's footprint: its client processes' peak RSS and the
     * parent's, and both with the clients' CPU per logical client */
    double per = r->clients > 0 ? 1.0 / r->clients : 0;
    json_object_set_new(o, "client_processes", json_integer(u->client_procs));
    json_object_set_new(o, "clients_rss_kib", json_integer(u->clients_rss_kib));
    json_object_set_new(o, "harness_rss_kib", json_integer(u->harness_rss_kib));
    json_object_set_new(o, "per_client",
                        json_pack("{s:f, s:f}", "cpu_ms_per_s",
                                  cpu_cores(u->clients_ns, r->elapsed_s) * 1e3 * per,
                                  "rss_kib", (double)u->clients_rss_kib * per));
    return o;
}

/* The open-loop schedule and how well it was kept; null for a closed loop. */
static json_t *arrival_json(const struct run_result *r)
{
    if (r->arrival_rate <= 0)
        return json_null();
    return json_pack("{s:f, s:s, s:f, s:I, s:I, s:f}", "rate_per_s", r->arrival_rate,
                     "distribution", r->arrival_dist == ARRIVAL_CONSTANT ? "constant" : "poisson",
                     "late_ms", (double)r->arrival_late_ns / 1e6, "starts",
                     (json_int_t)r->arrivals, "late", (json_int_t)r->late_starts,
                     "late_fraction",
                     r->arrivals > 0 ? (double)r->late_starts / (double)r->arrivals : 0.0);
}

const char *report_fencing_name(enum fencing_mode m)
{
    return m == FENCING_ON ? "on" : m == FENCING_UNSUPPORTED ? "unsupported" : "off";
}

/* An optimistic design's figures (lock.h, LOCK_CAP_OPTIMISTIC): every
 * read is an attempt, a write that changed no row a conflict (retried);
 * the conflict rate is conflicts over the writes tried. */
double report_conflict_rate(const struct run_result *r)
{
    int64_t writes = r->released + r->release_not_owner;
    return writes ? (double)r->release_not_owner / (double)writes : 0;
}

/* The handoffs a wake-up message led to, split into their parts (us):
 * delivery (release sent -> message at the waiter's socket), scheduling
 * (-> the waiter's attempt sent: its wake-up), the winning acquire (->
 * granted), each part's mean and median; and the attempts woken waiters
 * lost per handoff. */
static json_t *handoff_split_json(const struct lock_stats *st)
{
    double n = (double)st->split_handoffs;
    double d = (double)st->split_delivery_ns / n / 1e3, sc = (double)st->split_scheduling_ns / n / 1e3,
           a = (double)st->split_acquire_ns / n / 1e3;
    json_t *o = json_pack("{s:I, s:f, s:f, s:f, s:f, s:f}", "handoffs",
                          (json_int_t)st->split_handoffs, "delivery_us", d, "scheduling_us", sc,
                          "acquire_us", a, "total_us", d + sc + a, "losing_attempts_per_handoff",
                          (double)st->split_lost / n);
    json_object_set_new(o, "p50_us",
                        json_pack("{s:f, s:f, s:f}", "delivery",
                                  handoff_split_p50(st, HANDOFF_DELIVERY), "scheduling",
                                  handoff_split_p50(st, HANDOFF_SCHEDULING), "acquire",
                                  handoff_split_p50(st, HANDOFF_ACQUIRE)));
    return o;
}

static json_t *optimistic_json(const struct run_result *r)
{
    return json_pack("{s:I, s:I, s:I, s:f}", "attempts", (json_int_t)r->acquired, "commits",
                     (json_int_t)r->work.units_done, "conflicts",
                     (json_int_t)r->release_not_owner, "conflict_rate", report_conflict_rate(r));
}

static json_t *result_json(const struct run_result *r, const char *run_dir)
{
    json_t *o = json_object();
    json_object_set_new(o, "impl", json_string(r->ops->name));
    json_object_set_new(o, "backend", json_string(r->ops->backend));
    json_object_set_new(o, "scenario", json_string(r->scenario));
    json_object_set_new(o, "clients", json_integer(r->clients));
    json_object_set_new(o, "keys", json_string(r->per_client_keys ? "per-client" : "hot"));
    json_object_set_new(o, "fencing", json_string(report_fencing_name(r->fencing)));
    json_object_set_new(o, "sweep", json_boolean(r->sweep));
    char tag[SCN_NAME_MAX + 32];
    report_result_tag(r, tag, sizeof tag);
    json_object_set_new(o, "files", json_string(tag));
    json_t *kept = report_stderr_json(run_dir, r, tag);
    if (kept)
        json_object_set_new(o, "adapter_stderr", kept);
    json_object_set_new(o, "verdict", json_string(verdict_name(r->verdict)));
    char want[160];
    json_object_set_new(o, "expect", r->expect == 0 ? json_null()
                                     : json_string(verdict_set_name(r->expect, want, sizeof want)));
    json_object_set_new(o, "pass", json_boolean(r->pass));
    json_object_set_new(o, "complete", json_boolean(r->complete));
    json_object_set_new(o, "elapsed_s", json_real(r->elapsed_s));
    json_object_set_new(o, "throughput_per_s", json_real(r->throughput_per_s));
    json_object_set_new(
        o, "ops",
        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "acquired",
                  (json_int_t)r->acquired, "timeouts", (json_int_t)r->timeouts, "errors",
                  (json_int_t)r->errors, "released", (json_int_t)r->released,
                  "released_unchecked", (json_int_t)r->released_unchecked,
                  "release_not_owner", (json_int_t)r->release_not_owner, "release_errors",
                  (json_int_t)r->release_errors, "release_deleted_other",
                  (json_int_t)r->release_deleted_other, "nested_acquired",
                  (json_int_t)r->nested_acquired, "nested_timeouts",
                  (json_int_t)r->nested_timeouts));
    json_object_set_new(o, "arrival", arrival_json(r));
    json_object_set_new(o, "fault_errors", json_integer(r->fault_errors));
    json_object_set_new(o, "fault_timeouts", json_integer(r->fault_timeouts));
    json_object_set_new(o, "lock_life_ms", json_real((double)r->lock_life_ns / 1e6));
    if (r->fault_errors)
        json_object_set_new(o, "fault_error", json_string(r->fault_error));
    json_object_set_new(o, "latency_us",
                        json_pack("{s:o, s:o, s:o, s:o}", "acquire", latency_json(&r->acquire),
                                  "hold", latency_json(&r->hold), "release",
                                  latency_json(&r->release), "handoff", latency_json(&r->handoff)));
    json_object_set_new(
        o, "safety",
        json_pack("{s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:I}", "violations",
                  (json_int_t)r->oracle.violations, "max_concurrent_holders",
                  r->oracle.max_concurrent,
                  "overlap_us", (json_int_t)(r->oracle.overlap_ns / 1000), "oversold",
                  (json_int_t)r->work.oversold, "lost_updates", (json_int_t)r->work.lost_updates,
                  "stale_writes_rejected", (json_int_t)r->work.stale_writes_rejected,
                  "stale_reads_rejected", (json_int_t)r->work.stale_reads_rejected, "live_overlaps",
                  (json_int_t)r->live_overlaps, "live_max_holders", r->max_holders_live,
                  "intervals_dropped",
                  (json_int_t)r->intervals_dropped));
    safety_oracle_json(json_object_get(o, "safety"), r);
    json_object_set_new(json_object_get(o, "safety"), "rightful_refused",
                        json_integer(r->rightful_refused));
    safety_stale_json(json_object_get(o, "safety"), r);
    json_object_set_new(o, "unavailable", unavailable_json(r));
    json_object_set_new(o, "servers", servers_json(r));
    json_object_set_new(o, "workload",
                        json_pack("{s:I, s:I, s:I, s:I}", "units_done", (json_int_t)r->work.units_done,
                                  "final_value", (json_int_t)r->work.final_value,
                                  "stale_refused_by_clients",
                                  (json_int_t)r->stale_refused_by_clients, "aborted",
                                  (json_int_t)r->aborted));
    json_object_set_new(
        o, "lock_stats",
        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "round_trips",
                  (json_int_t)r->stats.round_trips, "polls", (json_int_t)r->stats.polls,
                  "notifications", (json_int_t)r->stats.notifications, "renewals",
                  (json_int_t)r->stats.renewals, "renewal_failures",
                  (json_int_t)r->stats.renewal_failures, "unreplicated",
                  (json_int_t)r->stats.unreplicated));
    if (r->stats.split_handoffs > 0) /* a notified design's handoffs, split (handoff_split.h) */
        json_object_set_new(o, "handoff_split", handoff_split_json(&r->stats));
    if (r->ops->caps & LOCK_CAP_OPTIMISTIC) /* not a lock: its attempts, sales and conflicts */
        json_object_set_new(o, "optimistic", optimistic_json(r));
    /* NaN: not measured (an adapter's library does not show its wakeups) */
    json_object_set_new(o, "wakeups_per_release", isnan(r->wakeups_per_release)
                                                      ? json_null()
                                                      : json_real(r->wakeups_per_release));
    json_object_set_new(o, "server_ops_per_acquire", json_real(r->server_ops_per_acquire));
    json_object_set_new(o, "cpu", cpu_json(r));
    if (r->round > 0)
        json_object_set_new(o, "round", json_integer(r->round));
    if (r->repeat > 0)
        json_object_set_new(o, "repeat", json_integer(r->repeat));
    json_object_set_new(o, "server_wakeups_per_release",
                        isnan(r->server_wakeups_per_release)
                            ? json_null()
                            : json_real(r->server_wakeups_per_release));
    json_object_set_new(
        o, "clients_status",
        json_pack("{s:i, s:i, s:i, s:i}", "failed_start", r->clients_failed_start, "crashed",
                  r->clients_crashed, "killed", r->clients_killed, "killed_by_fault",
                  r->clients_killed_by_fault));
    json_object_set_new(o, "faults", faults_json(r));
    /* faults that could put the lock at stake, and those that did */
    json_object_set_new(o, "at_stake", json_integer(r->stake_yes));
    json_object_set_new(o, "at_stake_judged", json_integer(r->stake_judged));
    json_object_set_new(o, "recovery_ms", r->recovery_ns >= 0
                                              ? json_real((double)r->recovery_ns / 1e6)
                                              : json_null());
    json_object_set_new(o, "holds", json_pack("{s:I, s:I}", "kept", (json_int_t)r->n_holds,
                                              "total", (json_int_t)r->holds_total));
    json_object_set_new(o, "first_error",
                        r->first_error[0] ? json_string(r->first_error) : json_null());
    return o;
}

int report_write_summary(const struct report *r, bool complete, struct lab_err *err)
{
    json_t *root = json_object();
    json_object_set_new(root, "run_id", json_string(r->run_id));
    json_object_set_new(root, "started_at", json_string(r->started_at));
    json_object_set_new(root, "host", json_string(r->host));
    char names[1024] = "";
    json_t *scns = json_array();
    for (int i = 0; i < r->n_scenarios; i++) {
        const struct scenario *s = r->scenarios[i];
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", i ? "," : "", s->name);
        json_t *impls = json_array(); /* as run: --impl replaces the file's list */
        for (int k = 0; k < s->n_impls; k++)
            json_array_append_new(impls, json_string(s->impls[k]));
        json_array_append_new(scns, json_pack("{s:s, s:s, s:s, s:o}", "name", s->name, "file",
                                              s->path, "description", s->description, "impls",
                                              impls));
    }
    json_object_set_new(root, "scenario", json_string(names));
    json_object_set_new(root, "scenarios", scns);
    json_object_set_new(root, "complete", json_boolean(complete));
    report_provenance_json(r, root);
    json_t *arr = json_array();
    for (int i = 0; i < r->n_results; i++)
        json_array_append_new(arr, result_json(r->results[i], r->dir));
    json_object_set_new(root, "results", arr);
    /* steps not run (report_skip) */
    json_object_set_new(root, "skipped", r->skipped ? json_incref(r->skipped) : json_array());

    char path[1300];
    snprintf(path, sizeof path, "%s/summary.json", r->dir);
    struct atomic_file a;
    FILE *f = atomic_file_open(&a, path, err);
    if (!f) {
        json_decref(root);
        return -1;
    }
    json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(root);
    return atomic_file_commit(&a, err);
}
