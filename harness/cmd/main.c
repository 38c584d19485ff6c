/*
 * main.c - locklab's entry point: dispatch to a subcommand.
 *
 *   locklab run SCENARIO.yaml... [options]   run scenarios, print the table
 *   locklab explore FILE.yaml... [options]   random fault schedules, shrunk breaks
 *   locklab list                             implementations and scenarios
 *   locklab bench overhead [options]         harness overhead vs a bare loop
 *   locklab bench handoff [options]          handoff gaps: polling, backoff, pub/sub
 *   locklab plot RUN_DIR                     PNG and SVG plots of a run (gnuplot)
 *   locklab baseline save RUN_DIR FILE       keep a run as a baseline
 *   locklab compare FILE RUN_DIR             check a run against a baseline
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "lab.h"

#ifndef LOCKLAB_VERSION
#define LOCKLAB_VERSION "0.1.0"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: locklab <command> [options]\n"
            "\n"
            "A lab for distributed locks: runs YAML scenarios against lock implementations,\n"
            "measures them, and checks mutual exclusion with an oracle that trusts no lock.\n"
            "\n"
            "commands:\n"
            "  run SCENARIO.yaml...   run scenarios and report verdicts (exit 0 when every\n"
            "                         expectation holds, 1 when one fails)\n"
            "  explore FILE.yaml...   draw random fault schedules from a file's explore:\n"
            "                         section; shrink what breaks a design to a repro file\n"
            "  list                   show the lock implementations and shipped scenarios\n"
            "  bench overhead         compare a bare hiredis loop with locklab (harness cost)\n"
            "  bench handoff          handoff gaps of polling, backoff and pub/sub designs\n"
            "  plot RUN_DIR           draw a run's results as PNG and SVG with gnuplot\n"
            "  baseline save RUN_DIR FILE\n"
            "                         keep a run's verdicts and speed ratios as a baseline\n"
            "  compare FILE RUN_DIR   check a run against a baseline (exit 1 on a regression)\n"
            "\n"
            "`locklab <command> --help` describes each command's options;\n"
            "`locklab --version` prints the version.\n"
            "exit codes: 0 ok, 1 an expectation failed, 2 bad usage or scenario,\n"
            "            3 environment (server missing or unreachable), 130 interrupted\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return LAB_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return LAB_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("locklab %s\n", LOCKLAB_VERSION);
        return LAB_EXIT_OK;
    }
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "explore"))
        return cmd_explore(argc - 1, argv + 1);
    if (!strcmp(cmd, "list"))
        return cmd_list(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "baseline"))
        return cmd_baseline(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare"))
        return cmd_compare(argc - 1, argv + 1);
    if (!strcmp(cmd, "plot"))
        return cmd_plot(argc - 1, argv + 1);
    fprintf(stderr, "locklab: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return LAB_EXIT_USAGE;
}
