/*
 * cmd_baseline.c - `locklab baseline save RUN_DIR FILE` and `locklab
 * compare FILE RUN_DIR`: keep what a run showed and check a later run
 * against it (baseline.h says what is compared and how).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "baseline.h"
#include "cli.h"
#include "lab.h"

static void save_usage(FILE *f)
{
    fprintf(f,
            "usage: locklab baseline save RUN_DIR... FILE [--reference IMPL]\n"
            "                             [--tolerance-throughput X] [--tolerance-p50 X]\n"
            "\n"
            "Write FILE from RUN_DIR/summary.json: every step's verdict, and its throughput\n"
            "and acquire p50 as ratios to the reference design at the same step (medians\n"
            "over the rounds of `run --rounds`; with several RUN_DIRs, over every round of\n"
            "every run, as if they were one run's rounds). A later `locklab compare FILE RUN_DIR` or\n"
            "`locklab run ... --baseline FILE` fails on a changed verdict or a ratio worse\n"
            "by more than the tolerance.\n"
            "\n"
            "options:\n"
            "  --reference IMPL          the design speed is measured against (default\n"
            "                            redis-lua); it must run at every step\n"
            "  --tolerance-throughput X  how far the ops/s ratio may fall (default %.2f)\n"
            "  --tolerance-p50 X         how far the acquire p50 ratio may rise (default %.2f)\n"
            "\n"
            "exit codes: 0 written, 2 bad usage, a RUN_DIR unreadable or the reference missing\n",
            BASELINE_TOL_THROUGHPUT, BASELINE_TOL_P50);
}

static void compare_usage(FILE *f)
{
    fprintf(f,
            "usage: locklab compare FILE RUN_DIR [--junit OUT]\n"
            "\n"
            "Check RUN_DIR/summary.json against the baseline FILE: a table of every figure,\n"
            "and one JUnit testcase per figure in OUT (default RUN_DIR/baseline-junit.xml).\n"
            "\n"
            "exit codes: 0 nothing regressed, 1 a verdict changed, a step is missing or a\n"
            "speed ratio regressed past its tolerance, 2 bad usage or unreadable files\n");
}

static json_t *load(const char *path, const char *what)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        fprintf(stderr, "locklab: %s %s: %s (line %d)\n", what, path, e.text, e.line);
    return j;
}

json_t *baseline_load(const char *path)
{
    json_t *b = load(path, "baseline");
    if (b && !json_is_integer(json_object_get(b, "locklab_baseline"))) {
        fprintf(stderr, "locklab: %s is not a locklab baseline (no locklab_baseline key)\n",
                path);
        json_decref(b);
        return NULL;
    }
    return b;
}

static bool parse_tol(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || v <= 0 || v >= 10) {
        fprintf(stderr, "locklab: a tolerance is a fraction such as 0.25, not '%s'\n", s);
        return false;
    }
    *out = v;
    return true;
}

/* The summaries of n runs as one run's: their results in order, each
 * run's rounds numbered after the previous run's (a run without --rounds
 * is one round), run_id the runs' ids joined by ",". NULL: message printed. */
static json_t *load_runs(char **dirs, int n)
{
    json_t *all = json_array();
    char ids[2048] = "";
    int offset = 0;
    for (int i = 0; i < n; i++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/summary.json", dirs[i]);
        json_t *sum = load(path, "results");
        if (!sum) {
            json_decref(all);
            return NULL;
        }
        const char *id = json_string_value(json_object_get(sum, "run_id"));
        size_t len = strlen(ids);
        snprintf(ids + len, sizeof ids - len, "%s%s", i ? "," : "", id ? id : dirs[i]);
        int last = 0;
        size_t k;
        json_t *r;
        json_array_foreach(json_object_get(sum, "results"), k, r) {
            json_t *v = json_object_get(r, "round");
            int round = json_is_integer(v) ? (int)json_integer_value(v) : 1;
            if (round > last)
                last = round;
            json_object_set_new(r, "round", json_integer(offset + round));
            json_array_append(all, r);
        }
        offset += last;
        json_decref(sum);
    }
    return json_pack("{s:s, s:o}", "run_id", ids, "results", all);
}

static int baseline_save(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"reference", required_argument, NULL, 'r'},
        {"tolerance-throughput", required_argument, NULL, 't'},
        {"tolerance-p50", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *reference = "redis-lua";
    double tol_tp = BASELINE_TOL_THROUGHPUT, tol_p50 = BASELINE_TOL_P50;
    opterr = 0;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'r': reference = optarg; break;
        case 't': if (!parse_tol(optarg, &tol_tp)) return LAB_EXIT_USAGE; break;
        case 'p': if (!parse_tol(optarg, &tol_p50)) return LAB_EXIT_USAGE; break;
        case 'h': save_usage(stdout); return LAB_EXIT_OK;
        default:
            fprintf(stderr, "locklab: baseline save: unknown option '%s'\n\n", argv[optind - 1]);
            save_usage(stderr);
            return LAB_EXIT_USAGE;
        }
    }
    if (argc - optind < 2) {
        save_usage(stderr);
        return LAB_EXIT_USAGE;
    }
    json_t *sum = load_runs(argv + optind, argc - optind - 1);
    if (!sum)
        return LAB_EXIT_USAGE;
    struct lab_err err = {0};
    json_t *b = baseline_build(sum, reference, tol_tp, tol_p50, &err);
    json_decref(sum);
    if (!b) {
        fprintf(stderr, "locklab: baseline save: %s\n", err.msg);
        return LAB_EXIT_USAGE;
    }
    const char *file = argv[argc - 1];
    struct atomic_file a;
    FILE *f = atomic_file_open(&a, file, &err);
    int rc = -1;
    if (f && json_dumpf(b, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
        lab_err_set(&err, errno, "cannot write %s: %s", file, strerror(errno));
        atomic_file_abort(&a);
    } else if (f)
        rc = atomic_file_commit(&a, &err);
    json_decref(b);
    if (rc != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        return LAB_EXIT_USAGE;
    }
    printf("baseline: %s (reference %s)\n", file, reference);
    return LAB_EXIT_OK;
}

int baseline_check_run(json_t *baseline, const char *run_dir, const char *junit)
{
    char path[1100], out[1100];
    snprintf(path, sizeof path, "%s/summary.json", run_dir);
    json_t *sum = load(path, "results");
    if (!sum)
        return LAB_EXIT_USAGE;
    /* from `run`: the comparison also goes beside the results, for
     * report.html (RUN_DIR/baseline.txt) */
    char *table = NULL;
    size_t table_len = 0;
    FILE *to = stdout;
    if (!junit) {
        snprintf(out, sizeof out, "%s/baseline-junit.xml", run_dir);
        junit = out;
        FILE *mem = open_memstream(&table, &table_len);
        to = mem ? mem : stdout;
    }
    struct lab_err err = {0};
    int rc = baseline_compare(baseline, sum, to, junit, &err);
    json_decref(sum);
    if (to != stdout) {
        fclose(to);
        fputs(table, stdout);
        snprintf(path, sizeof path, "%s/baseline.txt", run_dir);
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(table, f);
            fclose(f);
        }
        free(table);
    }
    if (rc < 0) {
        fprintf(stderr, "locklab: compare: %s\n", err.msg);
        return LAB_EXIT_USAGE;
    }
    return rc ? LAB_EXIT_EXPECT : LAB_EXIT_OK;
}

int cmd_compare(int argc, char **argv)
{
    static const struct option longopts[] = {{"junit", required_argument, NULL, 'j'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *junit = NULL;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'j': junit = optarg; break;
        case 'h': compare_usage(stdout); return LAB_EXIT_OK;
        default:
            fprintf(stderr, "locklab: compare: unknown option '%s'\n\n", argv[optind - 1]);
            compare_usage(stderr);
            return LAB_EXIT_USAGE;
        }
    }
    if (argc - optind != 2) {
        compare_usage(stderr);
        return LAB_EXIT_USAGE;
    }
    json_t *b = baseline_load(argv[optind]);
    if (!b)
        return LAB_EXIT_USAGE;
    int rc = baseline_check_run(b, argv[optind + 1], junit);
    json_decref(b);
    return rc;
}

int cmd_baseline(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "save") == 0)
        return baseline_save(argc - 1, argv + 1);
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        save_usage(stdout);
        return LAB_EXIT_OK;
    }
    fprintf(stderr, "locklab: baseline: the only subcommand is save\n\n");
    save_usage(stderr);
    return LAB_EXIT_USAGE;
}
