/*
 * progress.c - the progress line and the fault lines of a run on a
 * terminal (progress.h).
 *
 * Everything goes to stderr, so that the table on stdout stays clean when
 * it is piped. The line is cut to the terminal's width: a line that
 * wrapped could not be rewritten in place.
 */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fault.h"
#include "lab.h"

void progress_init(struct progress *p, bool on, int n_scenarios)
{
    memset(p, 0, sizeof *p);
    p->on = on;
    p->n_scenarios = n_scenarios;
}

bool progress_wanted(bool quiet)
{
    const char *v = getenv("LOCKLAB_PROGRESS");
    if (quiet)
        return false;
    if (v && !strcmp(v, "1"))
        return true;
    if (v && !strcmp(v, "0"))
        return false;
    return isatty(2);
}

void progress_plan(struct progress *p, const struct scenario *s, int runs)
{
    if (s->ops_per_client > 0) {
        p->left_bounded += runs;
        p->left_bounded_max_ns += runs * s->max_duration_ns;
    } else {
        p->left_timed += runs;
        p->left_timed_ns += runs * s->max_duration_ns;
    }
}

void progress_begin(struct progress *p, int scenario, int step, int n_steps, const char *label,
                    const struct scenario *s)
{
    p->scenario = scenario;
    p->step = step;
    p->n_steps = n_steps;
    snprintf(p->label, sizeof p->label, "%s", label);
    p->planned_ns = s->max_duration_ns;
    p->ops_bound = s->ops_per_client > 0 ? s->ops_per_client * s->clients : 0;
    p->begun_ns = lab_now_ns();
    if (p->ops_bound) {
        p->left_bounded--;
        p->left_bounded_max_ns -= s->max_duration_ns;
    } else {
        p->left_timed--;
        p->left_timed_ns -= s->max_duration_ns;
    }
    memset(p->fault_shown, 0, sizeof p->fault_shown);
    memset(p->phases_shown, 0, sizeof p->phases_shown);
}

void progress_end(struct progress *p, double measured_s)
{
    int64_t wall = lab_now_ns() - p->begun_ns, measured = (int64_t)(measured_s * 1e9);
    p->done++;
    p->setup_ns += wall > measured ? wall - measured : 0;
    if (p->ops_bound) {
        p->bounded_done++;
        p->bounded_wall_ns += wall;
    }
}

const char *progress_fmt_duration(char *buf, size_t n, double seconds)
{
    if (seconds < 60)
        snprintf(buf, n, "%.1fs", seconds);
    else if (seconds < 3600)
        snprintf(buf, n, "%dm%02ds", (int)(seconds / 60), (int)seconds % 60);
    else
        snprintf(buf, n, "%dh%02dm", (int)(seconds / 3600), (int)seconds / 60 % 60);
    return buf;
}

/* Seconds left in the invocation, and whether that is only a bound. */
static double eta_s(const struct progress *p, int64_t done_ops, int64_t elapsed_ns, bool *bound)
{
    int64_t left = p->planned_ns > elapsed_ns ? p->planned_ns - elapsed_ns : 0;
    *bound = p->ops_bound && done_ops == 0; /* no pace yet: its max_duration */
    if (p->ops_bound && done_ops > 0) {
        /* this step: at the pace so far, within its max_duration */
        double more = (double)elapsed_ns * (double)(p->ops_bound - done_ops) / (double)done_ops;
        if (done_ops >= p->ops_bound)
            more = 0;
        if (more < (double)left)
            left = (int64_t)more;
    }
    /* the steps to come: by time, at max_duration plus the setup seen so
     * far; by ops, as long as such steps took (setup included), or at
     * their max_duration plus setup while none has finished */
    int64_t setup = p->done ? p->setup_ns / p->done : 0;
    left += p->left_timed_ns + p->left_timed * setup;
    if (p->left_bounded && p->bounded_done) {
        left += p->left_bounded * (p->bounded_wall_ns / p->bounded_done);
    } else if (p->left_bounded) {
        left += p->left_bounded_max_ns + p->left_bounded * setup;
        *bound = true;
    }
    return (double)left / 1e9;
}

static int term_width(void)
{
    struct winsize ws;
    if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
        return ws.ws_col;
    return 120;
}

static void draw_line(struct progress *p, const struct region *rg, int n_clients, int64_t start)
{
    int64_t acq = 0, ops = 0, now = lab_now_ns();
    for (int i = 0; i < n_clients; i++) {
        acq += rg->slots[i].acquired;
        ops += rg->slots[i].acquired + rg->slots[i].timeouts;
    }
    bool bound;
    double eta = eta_s(p, ops, now - start, &bound);
    char el[24], plan[24], left[24], line[512];
    snprintf(line, sizeof line,
             "  scenario %d/%d, step %d/%d: %s  %s / %s%s  %lld acquired  ETA %s%s",
             p->scenario, p->n_scenarios, p->step, p->n_steps, p->label,
             progress_fmt_duration(el, sizeof el, (double)(now - start) / 1e9),
             progress_fmt_duration(plan, sizeof plan, (double)p->planned_ns / 1e9),
             p->ops_bound ? " max" : "", (long long)acq, bound ? "<= " : "",
             progress_fmt_duration(left, sizeof left, eta));
    fprintf(stderr, "\r%.*s\033[K", term_width() - 1, line); /* then erase the rest */
    fflush(stderr);
    p->line_at_ns = now;
}

void progress_clear(struct progress *p)
{
    if (!p->on || !p->line_at_ns)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->line_at_ns = 0;
}

/* One fault record as a line: fired (it lasts), landed (instant), skipped,
 * failed, or ended. */
static void fault_line(const struct fault_record *r, int64_t start, bool ended)
{
    double at = (double)((ended ? r->end_ns : r->start_ns) - start) / 1e9;
    const char *what = ended && r->outcome == FAULT_FAILED ? "FAILED"
                       : ended                        ? "ended"
                       : r->outcome == FAULT_ACTIVE   ? "fired"
                       : r->outcome == FAULT_SKIPPED  ? "skipped"
                       : r->outcome == FAULT_FAILED   ? "FAILED"
                                                      : "landed";
    fprintf(stderr, "  fault %d (%s %s): %s at %.2fs", r->spec + 1, fault_action_name(r->action),
            r->target, what, at);
    if (!ended && r->hit[0])
        fprintf(stderr, " on %s", r->hit);
    if (!ended && r->in_section_ns >= 0) /* aimed at a holder's grant */
        fprintf(stderr, ", %.2f ms into its section", (double)r->in_section_ns / 1e6);
    if (ended)
        fprintf(stderr, " (lasted %.2fs)", (double)(r->end_ns - r->start_ns) / 1e9);
    if (r->note[0] && (r->outcome == FAULT_SKIPPED || r->outcome == FAULT_FAILED))
        fprintf(stderr, ": %s", r->note);
    fputc('\n', stderr);
}

void progress_tick(struct progress *p, const struct region *rg, int n_clients, int64_t start,
                   bool draw)
{
    if (!p->on)
        return;
    const struct fault_log *log = &rg->head->faults;
    int n = atomic_load(&log->n);
    for (int i = 0; i < n && i < FAULT_RECORDS_MAX; i++) {
        if (!atomic_load(&log->published[i]) || p->fault_shown[i] == 2)
            continue;
        const struct fault_record *r = &log->rec[i];
        bool active = r->outcome == FAULT_ACTIVE;
        if (r->not_used) { /* not for this design: not news */
            p->fault_shown[i] = 2;
            continue;
        }
        progress_clear(p);
        if (p->fault_shown[i] == 0)
            fault_line(r, start, false);
        for (int k = p->phases_shown[i]; k < r->n_phases && k < FAULT_PHASES_MAX; k++)
            fprintf(stderr, "  fault %d (%s %s): %s at %.2fs\n", r->spec + 1,
                    fault_action_name(r->action), r->target, r->phase[k].name,
                    (double)(r->phase[k].at_ns - start) / 1e9);
        p->phases_shown[i] = (unsigned char)r->n_phases;
        if (!active && p->fault_shown[i] == 1)
            fault_line(r, start, true);
        p->fault_shown[i] = active ? 1 : 2;
    }
    if (draw)
        draw_line(p, rg, n_clients, start);
}
