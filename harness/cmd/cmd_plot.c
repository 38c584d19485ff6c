/*
 * cmd_plot.c - `locklab plot RUN_DIR`: the options and usage of the plot
 * command; the drawing is plot_run_dir() (plot/plot_run.c).
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "datadir.h"
#include "lab.h"
#include "plot.h"
#include "report_html.h"

static void plot_usage(FILE *f)
{
    fprintf(f,
            "usage: locklab plot RUN_DIR [--quiet]\n"
            "\n"
            "Draw a run's results with gnuplot, as PNG and SVG beside them: for each\n"
            "scenario in RUN_DIR/summary.json,\n"
            "  <scenario>-latency     acquire latency by percentile, one line per implementation\n"
            "  <scenario>-throughput  throughput against clients, per implementation and key mode\n"
            "  <scenario>-wakeups     wakeups per release, one bar per implementation\n"
            "  <scenario>-timeline    every acquire's latency over the run (when the run wrote\n"
            "                         <impl>/<scenario>.timeline.tsv)\n"
            "and RUN_DIR/report.html again, with them inlined. The numbers gnuplot reads\n"
            "are left in RUN_DIR/plot-data/; the scripts are\n"
            "%s/*.gp ($LOCKLAB_DATA_DIR/plots when set).\n"
            "\n"
            "options:\n"
            "  -q, --quiet   print only errors\n"
            "  -h, --help    this text\n"
            "\n"
            "exit codes: 0 plots written, 2 bad usage or RUN_DIR/summary.json missing,\n"
            "3 gnuplot not installed (install gnuplot-nox) or it failed\n",
            lab_data_dir("plots"));
}

int cmd_plot(int argc, char **argv)
{
    static const struct option longopts[] = {{"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int quiet = 0, ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
        switch (ch) {
        case 'q': quiet = 1; break;
        case 'h': plot_usage(stdout); return LAB_EXIT_OK;
        default:
            fprintf(stderr, "locklab: plot: unknown option '%s'\n\n", argv[optind - 1]);
            plot_usage(stderr);
            return LAB_EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "locklab: plot: %s\n\n",
                argc - optind ? "give exactly one RUN_DIR" : "no RUN_DIR given");
        plot_usage(stderr);
        return LAB_EXIT_USAGE;
    }
    int rc = plot_run_dir(argv[optind], quiet);
    if (rc == 0) { /* the page inlines the plots: draw it again with them */
        struct lab_err err = {0};
        if (report_html_write(argv[optind], &err) != 0)
            fprintf(stderr, "locklab plot: warning: %s\n", err.msg);
    }
    return rc;
}
