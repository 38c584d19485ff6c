/*
 * hgrm.c - a result's latency files under the run directory:
 * <impl>/<stem>.{acquire,hold,release,handoff}.hgrm, HdrHistogram's
 * percentile-distribution text (docs/results.md; its plotters read it), and
 * <impl>/<stem>.timeline.tsv, every grant's time, acquire and hold, which
 * `locklab plot` draws, and <impl>/<stem>.holds.tsv, every critical section
 * (up to RUN_HOLDS_MAX) for the hold timelines of report.html and `locklab
 * plot`. Each is written atomically (atomic_file.h).
 */
#include <errno.h>
#include <string.h>

#include "atomic_file.h"
#include "report_parts.h"

int report_write_hgrms(const struct report *r, const struct run_result *x, struct lab_err *err)
{
    char dir[1300];
    snprintf(dir, sizeof dir, "%s/%s", r->dir, x->ops->name);
    if (atomic_file_mkdir_p(dir) != 0) {
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
    struct atomic_file a;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1500];
        snprintf(path, sizeof path, "%s/%s.%s.hgrm", dir, tag, files[i].name);
        FILE *f = atomic_file_open(&a, path, err);
        if (!f)
            return -1;
        hist_write_hgrm(files[i].h, f, 5, 1.0);
        if (atomic_file_commit(&a, err) != 0)
            return -1;
    }
    char path[1500];
    snprintf(path, sizeof path, "%s/%s.timeline.tsv", dir, tag);
    FILE *f = atomic_file_open(&a, path, err);
    if (!f)
        return -1;
    fprintf(f, "# t_s acquire_us hold_us client\n");
    for (int i = 0; i < x->n_timeline; i++)
        fprintf(f, "%.6f %.1f %.1f %d\n", x->timeline[i].t_s, x->timeline[i].acquire_us,
                x->timeline[i].hold_us, x->timeline[i].client);
    if (atomic_file_commit(&a, err) != 0)
        return -1;
    if (!x->holds)
        return 0; /* out of memory in the runner: no hold timeline */
    snprintf(path, sizeof path, "%s/%s.holds.tsv", dir, tag);
    if (!(f = atomic_file_open(&a, path, err)))
        return -1;
    fprintf(f, "# enter_s exit_s client key token flags (of %lld critical sections)\n",
            (long long)x->holds_total);
    for (int64_t i = 0; i < x->n_holds; i++) {
        const struct hold *h = &x->holds[i];
        fprintf(f, "%.9f %.9f %d %d %lld %u\n", h->enter_s, h->exit_s, h->client, h->key,
                (long long)h->token, h->flags);
    }
    return atomic_file_commit(&a, err);
}
