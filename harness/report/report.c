/*
 * report.c - the run directory (see report.h): results/<run-id>/ made when
 * the run starts, every result's files and the summary rewritten as each
 * one arrives (report_add), the results/latest link at the end
 * (report_finish); the file stems of a result; and the run's JUnit cases,
 * one per result, handed to the one JUnit writer (junit.h).
 */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "junit.h"
#include "report_parts.h"
#include "verdict.h"

/* --------------------------------------------------------------- junit.xml */

/* One result as a testcase: the scenario its class, the design (and the
 * sweep step, the fencing) its name, the figures behind a failed
 * expectation its failure text. */
struct run_case {
    char name[160];
    char failure[64];
    char detail[512 + RUN_ERROR_MAX]; /* the figures, then first_error whole */
};

static void run_case_of(const struct run_result *x, struct run_case *c, struct junit_case *jc)
{
    size_t len = (size_t)snprintf(c->name, sizeof c->name, "%s", x->ops->name);
    if (x->sweep && len < sizeof c->name)
        len += (size_t)snprintf(c->name + len, sizeof c->name - len, " %s/%d",
                                x->per_client_keys ? "per-client" : "hot", x->clients);
    if (x->fencing != FENCING_OFF && len < sizeof c->name)
        snprintf(c->name + len, sizeof c->name - len, " fencing=%s",
                 report_fencing_name(x->fencing));
    *jc = (struct junit_case){.classname = x->scenario, .name = c->name, .time_s = x->elapsed_s};
    if (x->pass)
        return;
    char want[160];
    snprintf(c->failure, sizeof c->failure, "expected %s, got %s",
             verdict_set_name(x->expect, want, sizeof want), verdict_name(x->verdict));
    char *d = c->detail;
    size_t n = sizeof c->detail;
    len = (size_t)snprintf(d, n, "violations=%lld oversold=%lld lost_updates=%lld timeouts=%lld "
                           "errors=%lld", (long long)x->oracle.violations,
                           (long long)x->work.oversold, (long long)x->work.lost_updates,
                           (long long)x->timeouts, (long long)x->errors);
    if (x->fencing == FENCING_ON && len < n)
        len += (size_t)snprintf(d + len, n - len, " stale_writes_rejected=%lld "
                                "stale_reads_rejected=%lld rightful_refused=%lld",
                                (long long)x->work.stale_writes_rejected,
                                (long long)x->work.stale_reads_rejected,
                                (long long)x->rightful_refused);
    if ((x->stale.holders > 0) && len < n)
        len += (size_t)snprintf(d + len, n - len, " lock=%s resource=%s stale_through=%lld "
                                "stale_ordered=%lld stale_refused=%lld stale_noticed=%lld "
                                "stale_chance=%lld",
                                verdict_lock_outcome(x), verdict_resource_outcome(x),
                                (long long)x->stale.through, (long long)x->stale.ordered,
                                (long long)x->stale.refused,
                                (long long)x->stale.noticed, (long long)x->stale.chance);
    if (x->unavailable && len < n) {
        const struct fault_record *u = &x->faults[x->unavailable_fault];
        len += (size_t)snprintf(d + len, n - len, " unavailable_after_fault=%d errors_after=%lld",
                                u->spec, (long long)u->errors_after);
    }
    if (x->first_error[0] && len < n)
        snprintf(d + len, n - len, " first_error=%s", x->first_error);
    jc->failure = c->failure;
    jc->detail = c->detail;
}

static int write_junit_to(const struct report *r, const char *path, struct lab_err *err)
{
    int n = r->n_results;
    struct run_case *rc = calloc((size_t)n + 1, sizeof *rc);
    struct junit_case *jc = calloc((size_t)n + 1, sizeof *jc);
    int ret = -1;
    if (!rc || !jc)
        lab_err_set(err, ENOMEM, "out of memory");
    else {
        for (int i = 0; i < n; i++)
            run_case_of(r->results[i], &rc[i], &jc[i]);
        struct junit_suite s = {.title = "locklab", .name = r->run_id, .timed = true,
                                .cases = jc, .n = n};
        ret = junit_write(path, &s, err);
    }
    free(rc);
    free(jc);
    return ret;
}

static int write_junit(struct report *r, struct lab_err *err)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/junit.xml", r->dir);
    if (write_junit_to(r, path, err) != 0)
        return -1;
    return r->junit_copy[0] ? write_junit_to(r, r->junit_copy, err) : 0;
}

/* ------------------------------------------------------------ run directory */

int report_open(struct report *r, const char *root, const struct scenario *const *scenarios,
                int n_scenarios, const char *junit_copy, struct lab_err *err)
{
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    r->started_ns = lab_now_ns();
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
    if (atomic_file_mkdir_p(r->root) != 0) {
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
    int rc = report_write_hgrms(r, copy, err);
    copy->holds = NULL; /* written; the caller's to free */
    if (rc != 0 || report_write_summary(r, false, err) != 0 || write_junit(r, err) != 0)
        return -1;
    return 0;
}

int report_skip(struct report *r, const char *scenario, const char *impl, int clients,
                const char *keys, const char *why, struct lab_err *err)
{
    if (!r->skipped)
        r->skipped = json_array();
    if (!r->skipped ||
        json_array_append_new(r->skipped,
                              json_pack("{s:s, s:s, s:i, s:s, s:s}", "scenario", scenario, "impl",
                                        impl, "clients", clients, "keys", keys, "why", why)) != 0) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    return report_write_summary(r, false, err);
}

int report_finish(struct report *r, bool complete, struct lab_err *err)
{
    r->complete = complete;
    if (report_write_summary(r, complete, err) != 0 || write_junit(r, err) != 0)
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

void report_set_command(struct report *r, int argc, char *const *argv)
{
    r->argc = argc;
    r->argv = argv;
}

int report_conclude(struct report *r, int exit_code, struct lab_err *err)
{
    r->exit_code = exit_code;
    r->duration_s = (double)(lab_now_ns() - r->started_ns) / 1e9;
    return report_write_summary(r, r->complete, err);
}

void report_free(struct report *r)
{
    for (int i = 0; i < r->n_results; i++)
        free(r->results[i]);
    free(r->results);
    r->results = NULL;
    json_decref(r->skipped);
    r->skipped = NULL;
    r->n_results = r->cap_results = 0;
}
