/*
 * stems.c - the file name stems of scenario steps and results (stems.h):
 * a sweep step carries its key layout and client count, a fenced step
 * "-fenced", a later round "-rN", the reference run again "-refN", so that
 * no two results of one run share a file.
 */
#include "stems.h"

#include <stdio.h>
#include <string.h>

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

void report_step_label(char *buf, size_t n, const char *impl, bool sweep, int per_client_keys,
                       int clients, int fencing)
{
    char step[32] = "";
    if (sweep)
        snprintf(step, sizeof step, " %s/%d", per_client_keys ? "keyed" : "hot", clients);
    snprintf(buf, n, "%s%s%s", impl, step,
             fencing == FENCING_ON ? " +fence" : fencing ? " -fence" : "");
}
