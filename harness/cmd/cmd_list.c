/*
 * cmd_list.c - `locklab list`: every lock implementation with its backend,
 * capabilities and one-line summary, and under it the design's own
 * settings (its lock_ops.options rows: key, default, help), then the
 * shipped scenarios and the demo's, by path from the working directory (or
 * from their install directory), with their planned duration. Columns are
 * as wide as their widest entry; a long capability list wraps in its own. Given scenario files, it lists the adapters each one
 * declares (name, backend, command: docs/adapters.md) after the designs.
 * --failpoints lists the failpoints; --options every key a scenario file
 * takes, printed from the loader's option rows (the reference the docs'
 * test checks docs/scenarios.md and the man page against).
 */
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lock.h"
#include "cli.h"
#include "datadir.h"
#include "failpoint_env.h"
#include "plan.h"
#include "progress.h"
#include "scenario_load.h"

/* Directory holding the shipped scenarios (datadir.h). */
static const char *cli_scenario_dir(void)
{
    return lab_data_dir("scenarios");
}

static void caps_string(unsigned caps, char *buf, size_t n)
{
    static const struct {
        unsigned flag;
        const char *name;
    } names[] = {{LOCK_CAP_TTL, "ttl"},         {LOCK_CAP_RENEWS, "renews"},
                 {LOCK_CAP_REENTRANT, "reentrant"}, {LOCK_CAP_NOTIFIES, "notifies"},
                 {LOCK_CAP_FENCING, "fencing"}, {LOCK_CAP_MULTI_MASTER, "multi-master"},
                 {LOCK_CAP_OPTIMISTIC, "optimistic"}};
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (caps & names[i].flag) {
            size_t len = strlen(buf);
            snprintf(buf + len, n - len, "%s%s", len ? "," : "", names[i].name);
        }
    if (!buf[0])
        snprintf(buf, n, "-");
}

#define CAPS_W 24 /* the capabilities' column */

/* The first capabilities of the list caps that fit the column, into line;
 * returns the rest (after the comma where it broke, "" at the end). */
static const char *caps_line(const char *caps, char line[CAPS_W + 1])
{
    size_t n = strlen(caps);
    if (n > CAPS_W) {
        n = 0;
        for (size_t i = 0; caps[i] && i <= CAPS_W; i++)
            if (caps[i] == ',')
                n = i + 1; /* keep the comma: the list goes on below */
        if (n == 0)
            n = CAPS_W;
    }
    snprintf(line, CAPS_W + 1, "%.*s", (int)n, caps);
    return caps + n;
}

/* A design's own settings, indented under it: key, default, help. Keys
 * of nested mappings are shown by their dotted path; a derived value is
 * shown by name, as not a key of the file. */
static void list_options(const struct opt *rows, const char *path)
{
    char key[96];

    for (const struct opt *o = rows; o && o->name; o++) {
        if (o->flags & OPT_DERIVED)
            snprintf(key, sizeof key, "(derived) %s", o->name);
        else
            snprintf(key, sizeof key, "%s.%s", path, o->name);
        if (o->type == OPT_SECTION)
            list_options(o->sub, key);
        else
            printf("    %-28s %-9s %s\n", key, o->def ? o->def : "-", o->help);
    }
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int yaml_file(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0;
}

/* A scenario's planned duration: every run at its run.max_duration ("80s"),
 * or at most that when run.ops_per_client may end the runs sooner
 * ("<= 21m00s"). */
static void planned(const struct scenario *s, char *buf, size_t n)
{
    char d[24];
    progress_fmt_duration(d, sizeof d, (double)(plan_runs(s) * s->max_duration_ns) / 1e9);
    snprintf(buf, n, "%s%s", s->ops_per_client > 0 ? "<= " : "", d);
}

/* The scenarios in dir/sub (sub "" for dir itself), each by its path as
 * shown: shown/sub/<file>, in a column w wide; print: false only returns
 * the widest such path. */
static int list_scenario_dir(const char *dir, const char *sub, const char *shown, int w,
                             bool print)
{
    char path[2048];
    snprintf(path, sizeof path, "%s%s%s", dir, *sub ? "/" : "", sub);
    struct dirent **ents;
    int n = scandir(path, &ents, yaml_file, by_name);
    if (n < 0) {
        if (!*sub && print)
            printf("  (cannot read %s)\n", dir);
        return 0;
    }
    struct scenario *s = print ? malloc(sizeof *s) : NULL;
    int widest = 0;
    for (int i = 0; i < n; i++) {
        char file[2304], name[2304], err[1024], dur[32];
        snprintf(file, sizeof file, "%s/%s", path, ents[i]->d_name);
        snprintf(name, sizeof name, "%s%s%s%s", shown, *shown ? "/" : "", *sub ? sub : "",
                 *sub ? "/" : "");
        snprintf(name + strlen(name), sizeof name - strlen(name), "%s", ents[i]->d_name);
        widest = (int)strlen(name) > widest ? (int)strlen(name) : widest;
        if (!print)
            ; /* only measuring */
        else if (s && scenario_load(file, s, err, sizeof err) == 0) {
            planned(s, dur, sizeof dur);
            printf("  %-*s %-9s %s\n", w, name, dur, s->description);
        } else {
            printf("  %-*s %-9s (invalid: %s)\n", w, name, "-", s ? err : "out of memory");
        }
        free(ents[i]);
    }
    free(ents);
    free(s);
    return widest;
}

/* The shipped scenarios (and the demo's, scenarios/demo/), by their path
 * relative to the working directory when they are under it (what `locklab
 * run` takes), else relative to the directory they are installed in. */
static void list_scenarios(void)
{
    const char *dir = cli_scenario_dir();
    char real[PATH_MAX], cwd[PATH_MAX], shown[PATH_MAX];
    const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    size_t lc = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
    if (realpath(dir, real) && lc && strncmp(real, cwd, lc) == 0 && real[lc] == '/') {
        snprintf(shown, sizeof shown, "%s", real + lc + 1);
        printf("\nscenarios (paths from here; duration: every run at run.max_duration):\n");
    } else {
        snprintf(shown, sizeof shown, "%s", base);
        printf("\nscenarios (paths from %.*s; duration: every run at run.max_duration):\n",
               (int)(base - dir > 1 ? base - dir - 1 : base - dir), dir);
    }
    int w = list_scenario_dir(dir, "", shown, 0, false);
    int wd = list_scenario_dir(dir, "demo", shown, 0, false);
    w = wd > w ? wd : w;
    printf("  %-*s %-9s %s\n", w, "path", "duration", "description");
    list_scenario_dir(dir, "", shown, w, true);
    list_scenario_dir(dir, "demo", shown, w, true);
}

/* The adapters the scenario at path declares (print: false only checks
 * that it loads). 0, or LAB_EXIT_USAGE when it does not load (the
 * loader's message on stderr). */
static int list_adapters(const char *path, bool print)
{
    struct scenario *s = malloc(sizeof *s);
    char err[1024];
    if (!s || scenario_load(path, s, err, sizeof err) != 0) {
        fprintf(stderr, "locklab: %s\n", s ? err : "out of memory");
        free(s);
        return LAB_EXIT_USAGE;
    }
    if (!print) {
        free(s);
        return LAB_EXIT_OK;
    }
    printf("\nadapters declared in %s:\n", path);
    if (s->n_adapters == 0)
        printf("  (none)\n");
    for (int i = 0; i < s->n_adapters; i++) {
        const struct scenario_adapter *a = &s->adapters[i];
        bool listed = false;
        for (int j = 0; j < s->n_impls; j++)
            listed |= strcmp(s->impls[j], a->spec.name) == 0;
        printf("%-22s %-11s %s%s\n", a->spec.name, a->spec.backend,
               a->ops.summary, listed ? "" : " (not in impls)");
        printf("%-22s %-11s runs in %s; ready within %lld ms, replies within WAIT_MS + "
               "%lld ms\n", "", "", a->spec.dir, (long long)(a->spec.ready_timeout_ns / 1000000),
               (long long)(a->spec.grace_ns / 1000000));
    }
    free(s);
    return LAB_EXIT_OK;
}

int cmd_list(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: locklab list [--failpoints | --options] [SCENARIO.yaml...]\n\nShow every lock "
               "implementation (name, backend, capabilities, summary),\nunder each the "
               "settings of its own a scenario's lock: section takes\n(key, default, help), "
               "and the scenarios shipped in %s\n(and demo/), by path from "
               "here or from there, with their planned duration.\n"
               "Given scenario files, also the adapters each declares (name, backend,\n"
               "command; their capabilities come from the program's ready line when it runs).\n"
               "--failpoints lists the failpoints that %s can arm.\n"
               "--options lists every key a scenario file takes (path, default, help).\n",
               cli_scenario_dir(), FAILPOINT_ENV);
        return LAB_EXIT_OK;
    }
    if (argc == 2 && !strcmp(argv[1], "--failpoints")) {
        failpoint_list();
        return LAB_EXIT_OK;
    }
    if (argc == 2 && !strcmp(argv[1], "--options")) {
        scenario_print_keys(stdout);
        return LAB_EXIT_OK;
    }
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-') {
            fprintf(stderr, "locklab: list: unknown option '%s'\n", argv[i]);
            return LAB_EXIT_USAGE;
        } else if (list_adapters(argv[i], false) != LAB_EXIT_OK) {
            return LAB_EXIT_USAGE; /* before anything is printed */
        }
    int wn = (int)strlen("implementation"), wb = (int)strlen("backend");
    for (int i = 0; i < lock_registry_count; i++) {
        int a = (int)strlen(lock_registry[i]->name), b = (int)strlen(lock_registry[i]->backend);
        wn = a > wn ? a : wn;
        wb = b > wb ? b : wb;
    }
    printf("%-*s %-*s %-*s %s\n", wn, "implementation", wb, "backend", CAPS_W, "capabilities",
           "summary");
    for (int i = 0; i < lock_registry_count; i++) {
        const struct lock_ops *o = lock_registry[i];
        char caps[96], line[CAPS_W + 1];
        caps_string(o->caps, caps, sizeof caps);
        const char *rest = caps_line(caps, line);
        printf("%-*s %-*s %-*s %s\n", wn, o->name, wb, o->backend, CAPS_W, line, o->summary);
        while (*rest) { /* the capabilities that did not fit, under them */
            rest = caps_line(rest, line);
            printf("%-*s %-*s %s\n", wn, "", wb, "", line);
        }
        if (o->no_fencing)
            printf("%-*s %-*s %-*s no fencing: %s\n", wn, "", wb, "", CAPS_W, "", o->no_fencing);
        list_options(o->options, "lock");
    }
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            if (list_adapters(argv[i], true) != LAB_EXIT_OK)
                return LAB_EXIT_USAGE;
        return LAB_EXIT_OK;
    }
    list_scenarios();
    return LAB_EXIT_OK;
}
