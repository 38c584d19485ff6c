/*
 * compare.c - after a scenario whose designs use two stores or more, the
 * stores side by side (see report_print_comparison in report.h): each
 * implementation's ops/s and acquire p50/p99 per key layout and client
 * count, and the ratio of the first store's best rate to each other's.
 */
#include <string.h>

#include "backend.h"
#include "report_parts.h"

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
                        report_fmt_us(p50, sizeof p50, hist_percentile(&x->acquire, 50)),
                        report_fmt_us(p99, sizeof p99, hist_percentile(&x->acquire, 99)));
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
