/*
 * console.c - the table a run prints as it goes: a heading per scenario,
 * a column header, then one row per result, followed by the lines that
 * explain it (client-bound, optimistic, fencing, the first error, crashed
 * clients, what the faults did). docs/results.md, "The table", says what
 * the columns mean.
 */
#include <math.h>
#include <string.h>

#include "report_parts.h"
#include "cpu.h"
#include "at_stake.h"
#include "fault.h"
#include "verdict.h"

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

/* Wakeups per release for the table: "-" when not measured (NaN). */
static const char *fmt_wakeups(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2f", v);
    return buf;
}

const char *report_fmt_us(char *buf, size_t n, int64_t us)
{
    if (us < 1000)
        snprintf(buf, n, "%lldus", (long long)us);
    else if (us < 1000000)
        snprintf(buf, n, "%.1fms", (double)us / 1e3);
    else
        snprintf(buf, n, "%.2fs", (double)us / 1e6);
    return buf;
}

/* The faults aimed at a holder's grant: how far into the section they
 * landed, "; on holders 0.41-1.20 ms after their grant", or "". */
static void print_faults_aimed(const struct run_result *x, char *buf, size_t n)
{
    int64_t lo = INT64_MAX, hi = -1;
    for (int i = 0; i < x->n_faults; i++) {
        int64_t t = x->faults[i].in_section_ns;
        if (t >= 0 && x->faults[i].outcome != FAULT_SKIPPED) {
            lo = t < lo ? t : lo;
            hi = t > hi ? t : hi;
        }
    }
    if (hi < 0)
        return;
    if (lo == hi)
        snprintf(buf, n, "; on a holder %.2f ms after its grant", (double)lo / 1e6);
    else
        snprintf(buf, n, "; on holders %.2f-%.2f ms after their grants", (double)lo / 1e6,
                 (double)hi / 1e6);
}

/* A line per fault that could put the lock at stake (at_stake.h): did it,
 * in words, its window and the clients asking in it; then what the
 * verdict makes of them. */
static void print_stakes(FILE *f, const struct run_result *x)
{
    for (int i = 0; i < x->n_faults; i++) {
        const struct fault_record *r = &x->faults[i];
        if (r->at_stake == STAKE_NA)
            continue;
        char win[64] = "";
        if (r->at_stake == STAKE_YES)
            snprintf(win, sizeof win, " (%.2f-%.2f s, %d waiting)",
                     (double)(r->stake_from_ns - x->start_ns) / 1e9,
                     (double)(r->stake_to_ns - x->start_ns) / 1e9, r->stake_waiters);
        fprintf(f, "%20s   fault %d (%s %s at %.2f s): %s: %s%s\n", "", r->spec,
                fault_action_name(r->action), r->target, (double)(r->start_ns - x->start_ns) / 1e9,
                r->at_stake == STAKE_YES ? "at stake" : "not at stake", r->stake_why, win);
    }
    if (x->verdict == VERDICT_SAFE && x->stake_judged)
        fprintf(f, "%20s   safe under faults: the lock was at stake %d time%s and held\n", "",
                x->stake_yes, x->stake_yes == 1 ? "" : "s");
    else if (x->verdict == VERDICT_NOT_EXERCISED)
        fprintf(f, "%20s   not exercised: %d fault%s could have put the lock at stake, none "
                "did: the run shows nothing of it under them\n", "", x->stake_judged,
                x->stake_judged == 1 ? "" : "s");
}

/* The first error, on one line of the table: whole up to CONSOLE_ERROR_MAX
 * bytes, else its start and where the rest is (summary.json keeps it whole,
 * docs/results.md). */
#define CONSOLE_ERROR_MAX 300
static void print_first_error(FILE *f, const char *text)
{
    if (strlen(text) <= CONSOLE_ERROR_MAX)
        fprintf(f, "%20s   first error: %s\n", "", text);
    else
        fprintf(f, "%20s   first error: %.*s... (full text in summary.json)\n", "",
                CONSOLE_ERROR_MAX, text);
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
        report_fmt_us(rec, sizeof rec, x->recovery_ns / 1000);
    int64_t election = 0;
    for (int i = 0; i < x->n_faults; i++)
        if (x->faults[i].leader_ns && x->faults[i].leader_ns - x->faults[i].start_ns > election)
            election = x->faults[i].leader_ns - x->faults[i].start_ns;
    char elect[48] = "", t[24];
    if (election)
        snprintf(elect, sizeof elect, "; a leader again after %s", report_fmt_us(t, sizeof t, election / 1000));
    char errs[112] = "";
    if (x->fault_errors)
        snprintf(errs, sizeof errs, "; %lld lock errors while a server was down",
                 (long long)x->fault_errors);
    if (x->fault_timeouts) /* waits the store's outage cut short: not `blocked` */
        snprintf(errs + strlen(errs), sizeof errs - strlen(errs),
                 "; %lld acquires timed out while the store was down",
                 (long long)x->fault_timeouts);
    char back[48] = ""; /* the slowest first grant after a store served again */
    int64_t slowest = -1;
    for (int i = 0; i < x->n_faults; i++)
        if (x->faults[i].client < 0 && x->faults[i].recovery_ns > slowest)
            slowest = x->faults[i].recovery_ns;
    if (slowest >= 0)
        snprintf(back, sizeof back, "; granted %s after the store was back",
                 report_fmt_us(t, sizeof t, slowest / 1000));
    for (int i = 0; i < x->n_faults; i++) /* a holder cut off: when another took the lock */
        if (x->faults[i].action == FAULT_PARTITION && x->faults[i].holder &&
            x->faults[i].taken_ns >= 0)
            snprintf(back, sizeof back, "; another client granted %s after the cut",
                     report_fmt_us(t, sizeof t, x->faults[i].taken_ns / 1000));
    char aimed[64] = "";
    print_faults_aimed(x, aimed, sizeof aimed);
    fprintf(f, "%20s   faults: %d landed, %d skipped, %d failed%s%s%s%s%s%s%s%s\n", "", n[FAULT_DONE],
            n[FAULT_SKIPPED], n[FAULT_FAILED], not_used ? " (others not for this design)" : "",
            rec[0] ? "; recovery " : "", rec, back, elect, errs,
            x->unrecovered_kills ? "; a killed holder's lock was never granted again" : "",
            aimed);
    print_stakes(f, x);
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

/* Under an overlap, the lock's outcome and the resource's apart, what the
 * stale holders did after the later grants, and how long they went on
 * believing (docs/results.md). */
static void print_stale(FILE *f, const struct run_result *x)
{
    const struct oracle_stale *st = &x->stale;
    if (st->holders == 0 && strcmp(verdict_lock_outcome(x), "exclusive") == 0)
        return;
    char p50[24] = "-", max[24] = "-";
    if (st->holders > 0) {
        report_fmt_us(p50, sizeof p50, st->window_p50_ns / 1000);
        report_fmt_us(max, sizeof max, st->window_max_ns / 1000);
    }
    fprintf(f, "%20s   lock %s, resource %s: stale holders' accesses after the later grant: "
            "%lld through, %lld in token order, %lld refused, %lld noticed their loss, %lld "
            "untouched by chance; stale-holder window p50 %s, max %s (%lld holders, %lld "
            "noticed)\n", "",
            verdict_lock_outcome(x), verdict_resource_outcome(x), (long long)st->through,
            (long long)st->ordered, (long long)st->refused, (long long)st->noticed, (long long)st->chance, p50, max,
            (long long)st->holders, (long long)st->holders_noticed);
}

void report_print_row(FILE *f, const struct run_result *x)
{
    char a[24], b[24], c[24], d[24], e[24], label[64], cpu[32], want[160];
    /* cores used on average by the clients and the lock servers; ! client-bound;
     * to the hundredth, as summary.json and report.html give them */
    snprintf(cpu, sizeof cpu, "%.2f/%.2f%s", cpu_cores(x->cpu.clients_ns, x->elapsed_s),
             cpu_cores(x->cpu.servers_ns, x->elapsed_s), x->cpu.client_bound ? "!" : "");
    report_step_label(label, sizeof label, x->ops->name, x->sweep, x->per_client_keys,
                      x->clients, x->fencing);
    fprintf(f,
            "%-21s %-9s %-9s %-4s %8.0f %8s %8s %8s %6lld %8s %5lld %5lld %6lld %6lld %6lld "
            "%8s %7.2f %9s%s\n",
            label, verdict_name(x->verdict),
            verdict_set_name(x->expect, want, sizeof want), x->pass ? "ok" : "FAIL",
            x->throughput_per_s, report_fmt_us(a, sizeof a, hist_percentile(&x->acquire, 50)),
            report_fmt_us(b, sizeof b, hist_percentile(&x->acquire, 99)),
            report_fmt_us(c, sizeof c, hist_percentile(&x->handoff, 50)),
            (long long)x->oracle.violations, report_fmt_us(d, sizeof d, x->oracle.overlap_ns / 1000),
            (long long)x->work.oversold, (long long)x->work.lost_updates,
            (long long)x->release_not_owner, (long long)x->release_deleted_other,
            (long long)x->stats.renewals, fmt_wakeups(e, sizeof e, x->wakeups_per_release),
            x->server_ops_per_acquire, cpu, x->complete ? "" : "  (incomplete)");
    if (x->cpu.client_bound)
        fprintf(f, "%20s   client-bound: the clients used %.2f of %d cores (the lock servers "
                "%.2f), %.0f %% busy%s; these figures measure this machine, not the lock "
                "service\n", "",
                cpu_cores(x->cpu.clients_ns, x->elapsed_s), x->cpu.cores,
                cpu_cores(x->cpu.servers_ns, x->elapsed_s), x->cpu.machine_busy * 100,
                x->cpu.client_core ? ", one client process at a whole core" : "");
    if (x->arrival_rate > 0)
        fprintf(f, "%20s   open loop at %.0f/s (%s): %lld of %lld starts late (%.1f %%, over "
                "%.1f ms behind the schedule); acquire counts from the intended start\n", "",
                x->arrival_rate, x->arrival_dist == ARRIVAL_CONSTANT ? "constant" : "poisson",
                (long long)x->late_starts, (long long)x->arrivals,
                x->arrivals > 0 ? 100.0 * (double)x->late_starts / (double)x->arrivals : 0.0,
                (double)x->arrival_late_ns / 1e6);
    if (x->ops->caps & LOCK_CAP_OPTIMISTIC)
        fprintf(f, "%20s   optimistic, not a lock: %lld reads, %lld sales committed, %lld "
                   "conflicts retried (%.0f%% of writes); overlaps are by design, the damage "
                   "judges\n", "", (long long)x->acquired, (long long)x->work.units_done,
                (long long)x->release_not_owner, 100 * report_conflict_rate(x));
    if (x->aborted)
        fprintf(f, "%20s   aborted: %lld units left before their write, the lock reported "
                "lost (lock.on_disconnect: abort)\n", "", (long long)x->aborted);
    print_stale(f, x);
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
        print_first_error(f, x->first_error);
    if (x->clients_crashed || x->clients_killed || x->clients_failed_start)
        fprintf(f, "%20s   clients: %d crashed, %d killed at the end, %d failed to start\n", "",
                x->clients_crashed, x->clients_killed, x->clients_failed_start);
    print_faults(f, x);
    fflush(f);
}

const char *report_exit_meaning(int code)
{
    switch (code) {
    case LAB_EXIT_OK: return "every expectation met";
    case LAB_EXIT_EXPECT: return "an expectation failed, or the baseline gate found a regression";
    case LAB_EXIT_USAGE: return "bad usage or scenario";
    case LAB_EXIT_ENV: return "a server would not start or could not be reached";
    case LAB_EXIT_INTERRUPTED: return "interrupted: the results so far, marked incomplete";
    default: return "see locklab run --help";
    }
}

void report_print_closing(FILE *f, const struct report *r, int exit_code)
{
    int met = 0, unmet = 0;
    for (int i = 0; i < r->n_results; i++)
        if (r->results[i]->expect != 0)
            *(r->results[i]->pass ? &met : &unmet) += 1;
    fprintf(f, "%d expectation%s met, %d unmet; exit %d: %s\n", met, met == 1 ? "" : "s", unmet,
            exit_code, report_exit_meaning(exit_code));
}
