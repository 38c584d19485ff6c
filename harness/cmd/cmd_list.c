/*
 * cmd_list.c - `locklab list`: every lock implementation with its backend,
 * capabilities and one-line summary, and under it the design's own
 * settings (its lock_ops.options rows: key, default, help), then the
 * shipped scenarios. Given scenario files, it lists the adapters each one
 * declares (name, backend, command: docs/adapters.md) after the designs.
 * --failpoints lists the failpoints; --options every key a scenario file
 * takes, printed from the loader's option rows (the reference the docs'
 * test checks docs/scenarios.md and the man page against).
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lock.h"
#include "cli.h"
#include "datadir.h"
#include "failpoint_env.h"
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

static void list_scenarios(void)
{
    const char *dir = cli_scenario_dir();
    struct dirent **ents;
    int n = scandir(dir, &ents, yaml_file, by_name);
    printf("\nscenarios (%s):\n", dir);
    if (n < 0) {
        printf("  (cannot read %s)\n", dir);
        return;
    }
    struct scenario *s = malloc(sizeof *s);
    for (int i = 0; i < n; i++) {
        char path[2048], err[1024];
        snprintf(path, sizeof path, "%s/%s", dir, ents[i]->d_name);
        if (s && scenario_load(path, s, err, sizeof err) == 0)
            printf("  %-28s %s\n", path, s->description);
        else
            printf("  %-28s (invalid: %s)\n", path, s ? err : "out of memory");
        free(ents[i]);
    }
    free(ents);
    free(s);
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
               "and the scenarios shipped in %s.\n"
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
    printf("%-22s %-9s %-24s %s\n", "implementation", "backend", "capabilities", "summary");
    for (int i = 0; i < lock_registry_count; i++) {
        const struct lock_ops *o = lock_registry[i];
        char caps[96];
        caps_string(o->caps, caps, sizeof caps);
        printf("%-22s %-9s %-24s %s\n", o->name, o->backend, caps, o->summary);
        if (o->no_fencing)
            printf("%-22s %-9s %-24s no fencing: %s\n", "", "", "", o->no_fencing);
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
