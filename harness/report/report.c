/*
 * report.c - the console table and the result files (see report.h).
 *
 * summary.json is built with jansson from the run results, field names as
 * docs/results.md defines them (a contract that plots, CI and users read),
 * including the fields that explain a verdict: the first error a client
 * hit, crashed clients, the live overlap counter.
 */
#include "report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "report_stderr.h"

/* ------------------------------------------------------------- file output */

static int mkdir_p(const char *path)
{
    char buf[1200];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* Open path.tmp for writing; report_commit renames it into place. */
static FILE *tmp_open(const char *path, char *tmp, size_t n)
{
    snprintf(tmp, n, "%s.tmp", path);
    return fopen(tmp, "w");
}

static int tmp_commit(FILE *f, const char *tmp, const char *path, struct lab_err *err)
{
    int bad = ferror(f) | (fflush(f) != 0) | (fsync(fileno(f)) != 0);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        lab_err_set(err, errno, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ summary.json */

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
        if (f->action == FAULT_CLOCK_JUMP) /* what the server's own clock did */
            json_object_set_new(o, "clock_jump_ms", json_real((double)f->jump_ns / 1e6));
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
    return json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:b}", "cores", u->cores,
                     "machine_busy", u->machine_busy,
                     "clients_s", (double)u->clients_ns / 1e9, "clients_cores",
                     cpu_cores(u->clients_ns, r->elapsed_s), "servers_s",
                     (double)u->servers_ns / 1e9, "servers_cores",
                     cpu_cores(u->servers_ns, r->elapsed_s), "harness_s",
                     (double)u->harness_ns / 1e9, "per_server_s", servers, "client_bound",
                     u->client_bound);
}

/* "off", "on" or "unsupported" (asked for, no sound token: ran unfenced). */
static const char *fencing_name(enum fencing_mode m)
{
    return m == FENCING_ON ? "on" : m == FENCING_UNSUPPORTED ? "unsupported" : "off";
}

/* An optimistic design's figures (lock.h, LOCK_CAP_OPTIMISTIC): every
 * read is an attempt, a write that changed no row a conflict (retried);
 * the conflict rate is conflicts over the writes tried. */
static double conflict_rate(const struct run_result *r)
{
    int64_t writes = r->released + r->release_not_owner;
    return writes ? (double)r->release_not_owner / (double)writes : 0;
}

static json_t *optimistic_json(const struct run_result *r)
{
    return json_pack("{s:I, s:I, s:I, s:f}", "attempts", (json_int_t)r->acquired, "commits",
                     (json_int_t)r->work.units_done, "conflicts",
                     (json_int_t)r->release_not_owner, "conflict_rate", conflict_rate(r));
}

static json_t *result_json(const struct run_result *r, const char *run_dir)
{
    json_t *o = json_object();
    json_object_set_new(o, "impl", json_string(r->ops->name));
    json_object_set_new(o, "backend", json_string(r->ops->backend));
    json_object_set_new(o, "scenario", json_string(r->scenario));
    json_object_set_new(o, "clients", json_integer(r->clients));
    json_object_set_new(o, "keys", json_string(r->per_client_keys ? "per-client" : "hot"));
    json_object_set_new(o, "fencing", json_string(fencing_name(r->fencing)));
    char tag[SCN_NAME_MAX + 32];
    report_result_tag(r, tag, sizeof tag);
    json_object_set_new(o, "files", json_string(tag));
    json_t *kept = report_stderr_json(run_dir, r, tag);
    if (kept)
        json_object_set_new(o, "adapter_stderr", kept);
    json_object_set_new(o, "verdict", json_string(verdict_name(r->verdict)));
    json_object_set_new(o, "expect", r->expect == VERDICT_NONE ? json_null()
                                                               : json_string(verdict_name(r->expect)));
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
    json_object_set_new(o, "fault_errors", json_integer(r->fault_errors));
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
    json_object_set_new(o, "unavailable", unavailable_json(r));
    json_object_set_new(o, "servers", servers_json(r));
    json_object_set_new(o, "workload",
                        json_pack("{s:I, s:I, s:I}", "units_done", (json_int_t)r->work.units_done,
                                  "final_value", (json_int_t)r->work.final_value,
                                  "stale_refused_by_clients",
                                  (json_int_t)r->stale_refused_by_clients));
    json_object_set_new(
        o, "lock_stats",
        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "round_trips",
                  (json_int_t)r->stats.round_trips, "polls", (json_int_t)r->stats.polls,
                  "notifications", (json_int_t)r->stats.notifications, "renewals",
                  (json_int_t)r->stats.renewals, "renewal_failures",
                  (json_int_t)r->stats.renewal_failures, "unreplicated",
                  (json_int_t)r->stats.unreplicated));
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
    json_object_set_new(o, "recovery_ms", r->recovery_ns >= 0
                                              ? json_real((double)r->recovery_ns / 1e6)
                                              : json_null());
    json_object_set_new(o, "first_error",
                        r->first_error[0] ? json_string(r->first_error) : json_null());
    return o;
}

static int write_summary(struct report *r, bool complete, struct lab_err *err)
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
        json_array_append_new(scns, json_pack("{s:s, s:s, s:s}", "name", s->name, "file",
                                              s->path, "description", s->description));
    }
    json_object_set_new(root, "scenario", json_string(names));
    json_object_set_new(root, "scenarios", scns);
    json_object_set_new(root, "complete", json_boolean(complete));
    json_t *arr = json_array();
    for (int i = 0; i < r->n_results; i++)
        json_array_append_new(arr, result_json(r->results[i], r->dir));
    json_object_set_new(root, "results", arr);

    char path[1300], tmp[1310];
    snprintf(path, sizeof path, "%s/summary.json", r->dir);
    FILE *f = tmp_open(path, tmp, sizeof tmp);
    if (!f) {
        json_decref(root);
        lab_err_set(err, errno, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(root);
    return tmp_commit(f, tmp, path, err);
}

/* --------------------------------------------------------------- junit.xml */

void report_xml_escaped(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static int write_junit_to(struct report *r, const char *path, struct lab_err *err)
{
    char tmp[1310];
    FILE *f = tmp_open(path, tmp, sizeof tmp);
    if (!f) {
        lab_err_set(err, errno, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    int failures = 0;
    double total = 0;
    for (int i = 0; i < r->n_results; i++) {
        failures += !r->results[i]->pass;
        total += r->results[i]->elapsed_s;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"locklab\" tests=\"%d\" failures=\"%d\" time=\"%.3f\">\n",
            r->n_results, failures, total);
    fprintf(f, "  <testsuite name=\"");
    report_xml_escaped(f, r->run_id);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" time=\"%.3f\">\n", r->n_results, failures, total);
    for (int i = 0; i < r->n_results; i++) {
        const struct run_result *x = r->results[i];
        fprintf(f, "    <testcase classname=\"");
        report_xml_escaped(f, x->scenario);
        fprintf(f, "\" name=\"");
        report_xml_escaped(f, x->ops->name);
        if (x->sweep)
            fprintf(f, " %s/%d", x->per_client_keys ? "per-client" : "hot", x->clients);
        if (x->fencing != FENCING_OFF)
            fprintf(f, " fencing=%s", fencing_name(x->fencing));
        fprintf(f, "\" time=\"%.3f\">", x->elapsed_s);
        if (!x->pass) {
            fprintf(f, "\n      <failure message=\"expected %s, got %s\">",
                    verdict_name(x->expect), verdict_name(x->verdict));
            fprintf(f, "violations=%lld oversold=%lld lost_updates=%lld timeouts=%lld errors=%lld",
                    (long long)x->oracle.violations, (long long)x->work.oversold,
                    (long long)x->work.lost_updates, (long long)x->timeouts,
                    (long long)x->errors);
            if (x->fencing == FENCING_ON)
                fprintf(f, " stale_writes_rejected=%lld stale_reads_rejected=%lld "
                        "rightful_refused=%lld", (long long)x->work.stale_writes_rejected,
                        (long long)x->work.stale_reads_rejected,
                        (long long)x->rightful_refused);
            if (x->unavailable) {
                const struct fault_record *u = &x->faults[x->unavailable_fault];
                fprintf(f, " unavailable_after_fault=%d errors_after=%lld", u->spec,
                        (long long)u->errors_after);
            }
            if (x->first_error[0]) {
                fputs(" first_error=", f);
                report_xml_escaped(f, x->first_error);
            }
            fprintf(f, "</failure>\n    ");
        }
        fprintf(f, "</testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    return tmp_commit(f, tmp, path, err);
}

static int write_junit(struct report *r, struct lab_err *err)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/junit.xml", r->dir);
    if (write_junit_to(r, path, err) != 0)
        return -1;
    return r->junit_copy[0] ? write_junit_to(r, r->junit_copy, err) : 0;
}

/* ------------------------------------------------------------------- hgrm */

static int write_hgrms(struct report *r, const struct run_result *x, struct lab_err *err)
{
    char dir[1300];
    snprintf(dir, sizeof dir, "%s/%s", r->dir, x->ops->name);
    if (mkdir_p(dir) != 0) {
        lab_err_set(err, errno, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    const struct {
        const char *name;
        const struct hist *h;
    } files[] = {{"acquire", &x->acquire}, {"hold", &x->hold}, {"release", &x->release},
                 {"handoff", &x->handoff}};
    char tag[SCN_NAME_MAX + 32];
    report_result_tag(x, tag, sizeof tag);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1500], tmp[1510];
        snprintf(path, sizeof path, "%s/%s.%s.hgrm", dir, tag, files[i].name);
        FILE *f = tmp_open(path, tmp, sizeof tmp);
        if (!f) {
            lab_err_set(err, errno, "cannot write %s: %s", tmp, strerror(errno));
            return -1;
        }
        hist_write_hgrm(files[i].h, f, 5, 1.0);
        if (tmp_commit(f, tmp, path, err) != 0)
            return -1;
    }
    char path[1500], tmp[1510];
    snprintf(path, sizeof path, "%s/%s.timeline.tsv", dir, tag);
    FILE *f = tmp_open(path, tmp, sizeof tmp);
    if (!f) {
        lab_err_set(err, errno, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    fprintf(f, "# t_s acquire_us hold_us client\n");
    for (int i = 0; i < x->n_timeline; i++)
        fprintf(f, "%.6f %.1f %.1f %d\n", x->timeline[i].t_s, x->timeline[i].acquire_us,
                x->timeline[i].hold_us, x->timeline[i].client);
    return tmp_commit(f, tmp, path, err);
}

void report_stem(char *buf, size_t n, const char *scenario, bool sweep, int per_client_keys,
                 int clients, int fencing)
{
    const char *fenced = fencing ? "-fenced" : "";
    if (sweep)
        snprintf(buf, n, "%s-%s-%d%s", scenario, per_client_keys ? "keyed" : "hot", clients,
                 fenced);
    else
        snprintf(buf, n, "%s%s", scenario, fenced);
}

void report_step_tag(char *buf, size_t n, const char *scenario, bool sweep, int per_client_keys,
                     int clients, int fencing, int round)
{
    report_stem(buf, n, scenario, sweep, per_client_keys, clients, fencing);
    if (round > 1) { /* run --rounds: every round keeps its own files */
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "-r%d", round);
    }
}

void report_result_tag(const struct run_result *x, char *buf, size_t n)
{
    report_step_tag(buf, n, x->scenario, x->sweep, x->per_client_keys, x->clients,
                    x->fencing != FENCING_OFF, x->round);
    if (x->repeat > 1) { /* the reference run again in the same round */
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "-ref%d", x->repeat);
    }
}


/* ------------------------------------------------------------------ public */

int report_open(struct report *r, const char *root, const struct scenario *const *scenarios,
                int n_scenarios, const char *junit_copy, struct lab_err *err)
{
    memset(r, 0, sizeof *r);
    snprintf(r->root, sizeof r->root, "%s", root);
    snprintf(r->junit_copy, sizeof r->junit_copy, "%s", junit_copy ? junit_copy : "");
    r->scenarios = scenarios;
    r->n_scenarios = n_scenarios;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(r->started_at, sizeof r->started_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    if (gethostname(r->host, sizeof r->host - 1) != 0)
        snprintf(r->host, sizeof r->host, "unknown");
    if (mkdir_p(r->root) != 0) {
        lab_err_set(err, errno, "cannot create %s: %s", r->root, strerror(errno));
        return -1;
    }
    const char *label = n_scenarios == 1 ? scenarios[0]->name : "multi";
    for (int n = 0; n < 100; n++) {
        if (n == 0)
            snprintf(r->run_id, sizeof r->run_id, "%s-%s", stamp, label);
        else
            snprintf(r->run_id, sizeof r->run_id, "%s-%s-%d", stamp, label, n);
        snprintf(r->dir, sizeof r->dir, "%s/%s", r->root, r->run_id);
        if (mkdir(r->dir, 0755) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    lab_err_set(err, errno, "cannot create %s: %s", r->dir, strerror(errno));
    return -1;
}

int report_add(struct report *r, const struct run_result *res, struct lab_err *err)
{
    if (r->n_results == r->cap_results) {
        int cap = r->cap_results ? 2 * r->cap_results : 8;
        struct run_result **p = realloc(r->results, (size_t)cap * sizeof *p);
        if (!p) {
            lab_err_set(err, ENOMEM, "out of memory");
            return -1;
        }
        r->results = p;
        r->cap_results = cap;
    }
    struct run_result *copy = malloc(sizeof *copy);
    if (!copy) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    *copy = *res;
    r->results[r->n_results++] = copy;
    if (write_hgrms(r, copy, err) != 0 || write_summary(r, false, err) != 0 ||
        write_junit(r, err) != 0)
        return -1;
    return 0;
}

int report_finish(struct report *r, bool complete, struct lab_err *err)
{
    if (write_summary(r, complete, err) != 0 || write_junit(r, err) != 0)
        return -1;
    char link[1100], tmp[1110];
    snprintf(link, sizeof link, "%s/latest", r->root);
    snprintf(tmp, sizeof tmp, "%s/.latest.tmp", r->root);
    unlink(tmp);
    if (symlink(r->run_id, tmp) != 0 || rename(tmp, link) != 0) {
        lab_err_set(err, errno, "cannot point %s at %s: %s", link, r->run_id, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

void report_free(struct report *r)
{
    for (int i = 0; i < r->n_results; i++)
        free(r->results[i]);
    free(r->results);
    r->results = NULL;
    r->n_results = r->cap_results = 0;
}

/* ---------------------------------------------------------------- console */

static const char *workload_label(const struct scenario *s)
{
    static const char *const names[] = {[WORKLOAD_COUNTER] = "counter",
                                        [WORKLOAD_STOCK] = "stock",
                                        [WORKLOAD_REENTRANT] = "reentrant"};
    return names[s->workload];
}

void report_print_heading(FILE *f, const struct scenario *s, int clients)
{
    char who[128];
    if (s->n_client_steps > 1 || s->n_key_modes > 1)
        snprintf(who, sizeof who, "%d to %d clients (%d steps) on %s keys", s->client_steps[0],
                 s->client_steps[s->n_client_steps - 1], s->n_client_steps,
                 s->n_key_modes > 1 ? "hot and per-client" : s->key_modes[0] ? "per-client" : "hot");
    else
        snprintf(who, sizeof who, "%d clients", clients);
    const char *fencing = s->n_fence_modes > 1 ? ", fencing off and on (+fence)"
                          : s->fencing         ? ", fencing on (+fence)"
                                               : "";
    fprintf(f, "\n== %s (%s): %s, %s workload%s, ttl %.0f ms, business %.1f ms\n", s->name,
            s->path, who, workload_label(s), fencing, (double)s->ttl_ns / 1e6,
            (double)s->business_ns / 1e6);
    fprintf(f, "%-21s %-9s %-9s %-4s %8s %8s %8s %8s %6s %8s %5s %5s %6s %6s %6s %8s %7s %9s\n",
            "impl", "verdict", "expect", "pass", "ops/s", "acq p50", "acq p99", "handoff", "viol",
            "overlap", "overs", "lost", "notown", "misdel", "renew", "wake/rel", "srv/acq",
            "cpu cl/sv");
}

/* Microseconds as a short human string: 850us, 12.3ms, 4.20s. */
/* Wakeups per release for the table: "-" when not measured (NaN). */
static const char *fmt_wakeups(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2f", v);
    return buf;
}

static const char *fmt_us(char *buf, size_t n, int64_t us)
{
    if (us < 1000)
        snprintf(buf, n, "%lldus", (long long)us);
    else if (us < 1000000)
        snprintf(buf, n, "%.1fms", (double)us / 1e3);
    else
        snprintf(buf, n, "%.2fs", (double)us / 1e6);
    return buf;
}

/* One line on what the fault timeline did, when the scenario has one. */
static void print_faults(FILE *f, const struct run_result *x)
{
    int n[4] = {0}, not_used = 0;
    for (int i = 0; i < x->n_faults; i++) {
        if (x->faults[i].not_used)
            not_used++;
        else
            n[x->faults[i].outcome]++;
    }
    if (n[FAULT_DONE] + n[FAULT_SKIPPED] + n[FAULT_FAILED] == 0 && !x->faults_missed)
        return;
    char rec[32] = "";
    if (x->recovery_ns >= 0)
        fmt_us(rec, sizeof rec, x->recovery_ns / 1000);
    int64_t election = 0;
    for (int i = 0; i < x->n_faults; i++)
        if (x->faults[i].leader_ns && x->faults[i].leader_ns - x->faults[i].start_ns > election)
            election = x->faults[i].leader_ns - x->faults[i].start_ns;
    char elect[48] = "", t[24];
    if (election)
        snprintf(elect, sizeof elect, "; a leader again after %s", fmt_us(t, sizeof t, election / 1000));
    char errs[64] = "";
    if (x->fault_errors)
        snprintf(errs, sizeof errs, "; %lld lock errors while a server was down",
                 (long long)x->fault_errors);
    char back[48] = ""; /* the slowest first grant after a store served again */
    int64_t slowest = -1;
    for (int i = 0; i < x->n_faults; i++)
        if (x->faults[i].client < 0 && x->faults[i].recovery_ns > slowest)
            slowest = x->faults[i].recovery_ns;
    if (slowest >= 0)
        snprintf(back, sizeof back, "; granted %s after the store was back",
                 fmt_us(t, sizeof t, slowest / 1000));
    fprintf(f, "%20s   faults: %d landed, %d skipped, %d failed%s%s%s%s%s%s%s\n", "", n[FAULT_DONE],
            n[FAULT_SKIPPED], n[FAULT_FAILED], not_used ? " (others not for this design)" : "",
            rec[0] ? "; recovery " : "", rec, back, elect, errs,
            x->unrecovered_kills ? "; a killed holder's lock was never granted again" : "");
    if (x->unavailable) {
        const struct fault_record *u = &x->faults[x->unavailable_fault];
        fprintf(f, "%20s   unavailable: no grant after fault %d (%s %s at %.2f s), %s; %lld lock "
                "errors followed\n", "", u->spec, fault_action_name(u->action), u->target,
                (double)(u->start_ns - x->start_ns) / 1e9,
                x->unavailable_back ? "though the store served again"
                                    : "the store did not serve again while the clients asked",
                (long long)u->errors_after);
    }
}

void report_print_row(FILE *f, const struct run_result *x)
{
    char a[24], b[24], c[24], d[24], e[24], label[64], step[32] = "", cpu[32];
    /* cores used on average by the clients and the lock servers; ! client-bound */
    snprintf(cpu, sizeof cpu, "%.1f/%.1f%s", cpu_cores(x->cpu.clients_ns, x->elapsed_s),
             cpu_cores(x->cpu.servers_ns, x->elapsed_s), x->cpu.client_bound ? "!" : "");
    if (x->sweep)
        snprintf(step, sizeof step, " %s/%d", x->per_client_keys ? "keyed" : "hot", x->clients);
    snprintf(label, sizeof label, "%s%s%s", x->ops->name, step,
             x->fencing == FENCING_ON ? " +fence" : x->fencing ? " -fence" : "");
    fprintf(f,
            "%-21s %-9s %-9s %-4s %8.0f %8s %8s %8s %6lld %8s %5lld %5lld %6lld %6lld %6lld "
            "%8s %7.2f %9s%s\n",
            label, verdict_name(x->verdict),
            x->expect == VERDICT_NONE ? "-" : verdict_name(x->expect), x->pass ? "ok" : "FAIL",
            x->throughput_per_s, fmt_us(a, sizeof a, hist_percentile(&x->acquire, 50)),
            fmt_us(b, sizeof b, hist_percentile(&x->acquire, 99)),
            fmt_us(c, sizeof c, hist_percentile(&x->handoff, 50)),
            (long long)x->oracle.violations, fmt_us(d, sizeof d, x->oracle.overlap_ns / 1000),
            (long long)x->work.oversold, (long long)x->work.lost_updates,
            (long long)x->release_not_owner, (long long)x->release_deleted_other,
            (long long)x->stats.renewals, fmt_wakeups(e, sizeof e, x->wakeups_per_release),
            x->server_ops_per_acquire, cpu, x->complete ? "" : "  (incomplete)");
    if (x->cpu.client_bound)
        fprintf(f, "%20s   client-bound: the clients used %.2f of %d cores, %.0f %% busy; these "
                "figures measure this machine, not the lock service\n", "",
                cpu_cores(x->cpu.clients_ns, x->elapsed_s), x->cpu.cores,
                x->cpu.machine_busy * 100);
    if (x->ops->caps & LOCK_CAP_OPTIMISTIC)
        fprintf(f, "%20s   optimistic, not a lock: %lld reads, %lld sales committed, %lld "
                   "conflicts retried (%.0f%% of writes); overlaps are by design, the damage "
                   "judges\n", "", (long long)x->acquired, (long long)x->work.units_done,
                (long long)x->release_not_owner, 100 * conflict_rate(x));
    if (x->fencing == FENCING_ON)
        fprintf(f, "%20s   fencing on: the stock store refused %lld stale writes and %lld stale "
                "reads%s\n", "", (long long)x->work.stale_writes_rejected,
                (long long)x->work.stale_reads_rejected,
                x->rightful_refused ? "; the token went backwards:" : "");
    if (x->fencing == FENCING_ON && x->rightful_refused)
        fprintf(f, "%20s   %lld holders refused that no later grant overlapped\n", "",
                (long long)x->rightful_refused);
    else if (x->fencing == FENCING_UNSUPPORTED)
        fprintf(f, "%20s   fencing asked for, but %s gives no sound token: ran unfenced\n", "",
                x->ops->name);
    if (x->first_error[0] && (x->verdict == VERDICT_ERROR || !x->pass))
        fprintf(f, "%20s   first error: %s\n", "", x->first_error);
    if (x->clients_crashed || x->clients_killed || x->clients_failed_start)
        fprintf(f, "%20s   clients: %d crashed, %d killed at the end, %d failed to start\n", "",
                x->clients_crashed, x->clients_killed, x->clients_failed_start);
    print_faults(f, x);
    fflush(f);
}

/* ------------------------------------------------------------- comparison */

/* Registry index of x's store, -1 for none. */
static int store_of(const struct run_result *x)
{
    const struct backend_ops *be = backend_of(x->ops);
    return be ? backend_index(be) : -1;
}

void report_print_comparison(FILE *f, const struct run_result *const *res, int n)
{
    /* the stores of the registry that the results use, in registry order;
     * the first is compared with each of the others */
    bool used[BACKEND_MAX] = {false};
    for (int i = 0; i < n; i++)
        if (store_of(res[i]) >= 0)
            used[store_of(res[i])] = true;
    int st[BACKEND_MAX], ns = 0;
    for (int i = 0; i < backend_count; i++)
        if (used[i])
            st[ns++] = i;
    if (ns < 2)
        return;
    int a = st[0];
    const char *ta = backend_registry[a]->title;
    char title[160] = "", ratios[160] = "";
    for (int k = 0; k < ns; k++) {
        size_t u = strlen(title), v = strlen(ratios);
        snprintf(title + u, sizeof title - u, "%s%s", k ? " vs " : "",
                 backend_registry[st[k]]->title);
        if (k)
            snprintf(ratios + v, sizeof ratios - v, "%sbest %s ops/s over best %s ops/s",
                     k > 1 ? "; " : "", ta, backend_registry[st[k]]->title);
    }
    /* implementations in order of first appearance */
    const struct lock_ops *impls[SCN_MAX_IMPLS];
    int ni = 0;
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < ni && impls[j] != res[i]->ops)
            j++;
        if (j == ni && ni < SCN_MAX_IMPLS)
            impls[ni++] = res[i]->ops;
    }
    fprintf(f, "\n%s, side by side (ops/s, acquire p50 / p99; ratio = %s)\n%-10s %7s", title,
            ratios, "keys", "clients");
    for (int j = 0; j < ni; j++)
        fprintf(f, " | %-24.24s", impls[j]->name);
    for (int k = 1; k < ns; k++)
        fprintf(f, " | %9.9s", backend_registry[st[k]]->title);
    fprintf(f, "\n");
    for (int mode = 0; mode < 2; mode++) {
        /* client counts of this mode, in run order of the first implementation */
        for (int i = 0; i < n; i++) {
            const struct run_result *row = res[i];
            if (row->ops != impls[0] || row->per_client_keys != mode)
                continue;
            double best[BACKEND_MAX] = {0};
            bool fenced = row->fencing != FENCING_OFF; /* a step of a fencing sweep */
            fprintf(f, "%-10s %7d", mode ? (fenced ? "keyed+fnc" : "per-client")
                                         : (fenced ? "hot+fence" : "hot"),
                    row->clients);
            for (int j = 0; j < ni; j++) {
                const struct run_result *x = NULL;
                for (int k = 0; k < n && !x; k++)
                    if (res[k]->ops == impls[j] && res[k]->per_client_keys == mode &&
                        res[k]->clients == row->clients &&
                        (res[k]->fencing != FENCING_OFF) == fenced)
                        x = res[k];
                if (!x) {
                    fprintf(f, " | %-24s", "-");
                    continue;
                }
                char p50[24], p99[24];
                fprintf(f, " | %8.0f %7s %7s", x->throughput_per_s,
                        fmt_us(p50, sizeof p50, hist_percentile(&x->acquire, 50)),
                        fmt_us(p99, sizeof p99, hist_percentile(&x->acquire, 99)));
                int xs = store_of(x);
                if (xs >= 0 && x->throughput_per_s > best[xs])
                    best[xs] = x->throughput_per_s;
            }
            for (int k = 1; k < ns; k++)
                if (best[st[k]] > 0)
                    fprintf(f, " | %9.2f", best[a] / best[st[k]]);
                else
                    fprintf(f, " | %9s", "-");
            fprintf(f, "\n");
        }
    }
    fflush(f);
}
