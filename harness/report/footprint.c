/*
 * footprint.c - after a sweep, what the harness itself cost at each step
 * (see report_print_footprint in report.h): how many client processes ran
 * the logical clients, the cores they and the lock servers used, whether
 * the step was client-bound, and the clients' memory in total and per
 * client. A scale sweep is only worth reading where the lab was not its own
 * limit, and this table says where that was.
 */
#include "report_parts.h"
#include "cpu.h"

void report_print_footprint(FILE *f, const struct run_result *const *res, int n)
{
    fprintf(f, "\nthe harness per step (client processes; cores of the clients / the lock "
               "servers, ! client-bound; the client processes' peak RSS summed, and per "
               "client; locklab's own RSS)\n%-21s %6s %6s %11s %10s %10s %10s\n",
            "step", "cycl/s", "procs", "cpu cl/sv", "rss", "rss/client", "parent");
    for (int i = 0; i < n; i++) {
        const struct run_result *x = res[i];
        const struct cpu_use *u = &x->cpu;
        char label[64], cpu[32], per[24];
        report_step_label(label, sizeof label, x->ops->name, x->sweep, x->per_client_keys,
                          x->clients, x->fencing);
        snprintf(cpu, sizeof cpu, "%.2f/%.2f%s", cpu_cores(u->clients_ns, x->elapsed_s),
                 cpu_cores(u->servers_ns, x->elapsed_s), u->client_bound ? "!" : "");
        snprintf(per, sizeof per, "%.0f KiB",
                 x->clients > 0 ? (double)u->clients_rss_kib / x->clients : 0.0);
        fprintf(f, "%-21s %6.0f %6d %11s %6.1f MiB %10s %6.1f MiB\n", label,
                x->throughput_per_s, u->client_procs, cpu, (double)u->clients_rss_kib / 1024,
                per, (double)u->harness_rss_kib / 1024);
    }
    fflush(f);
}
