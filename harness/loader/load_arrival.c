/*
 * load_arrival.c - the scenario's arrival.rate: how many acquires per
 * second the clients start together in an open-loop run (the schedule
 * itself is harness/run/arrival.c). Written as a number of acquires per
 * second, "2000/s" or "2000"; a fraction is allowed ("0.5/s"). The row is
 * read after the rest of the file (OPT_LATE), so it can refuse a
 * workload.think: in an open loop the schedule says when a client asks
 * again, and a pause after each release would only make it late.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load_sections.h"

#define RATE_MAX 10000000.0 /* acquires per second: far above any store here */

int load_arrival_rate(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    const char *want = "a rate of acquires per second above 0, as 2000/s";
    if (want_scalar(L, value, keypath, want) != 0)
        return -1;
    const char *text = scalar_text(value);
    char *end = NULL;
    errno = 0;
    double rate = strtod(text, &end);
    if (end == text || errno != 0)
        return wrong_type(L, value, keypath, want);
    if (strcmp(end, "/s") != 0 && *end != '\0')
        return wrong_type(L, value, keypath, want);
    if (!isfinite(rate) || rate <= 0 || rate > RATE_MAX)
        return fail_at(L, value, "%s: %s is out of range (above 0, at most %.0f/s)", keypath,
                       text, RATE_MAX);
    if (L->s->think_ns > 0)
        return fail_at(L, value, "%s: an open-loop run takes no workload.think (the schedule "
                                 "says when each client starts its next acquire)", keypath);
    L->s->arrival_rate = rate;
    return 0;
}
