/*
 * provenance.c - what summary.json says about the invocation itself, so
 * that a kept report.html tells the truth about where its figures came
 * from: the command line as run, locklab's version and commit, the exit
 * code and how long it all took, the machine (cores, load, whether any
 * result was client-bound), and the version of every store's server as
 * found through PATH (each store's own version hook, backend_ops.version).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "locklab_commit.h"
#include "report_parts.h"

#ifndef LOCKLAB_VERSION
#define LOCKLAB_VERSION "0.1.0"
#endif

/* One argument as a POSIX shell reads it back: bare when it holds only
 * safe characters, else in single quotes. */
static void shell_word(char *out, size_t n, size_t *used, const char *a)
{
    bool bare = *a != '\0';
    for (const char *p = a; *p; p++)
        bare &= strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                       "-_./=:,+@%", *p) != NULL;
    size_t u = *used;
    if (u && u + 1 < n)
        out[u++] = ' ';
    if (!bare && u + 1 < n)
        out[u++] = '\'';
    for (const char *p = a; *p && u + 5 < n; p++) {
        if (*p == '\'' && !bare) {
            memcpy(out + u, "'\\''", 4);
            u += 4;
        } else
            out[u++] = *p;
    }
    if (!bare && u + 1 < n)
        out[u++] = '\'';
    out[u < n ? u : n - 1] = '\0';
    *used = u < n ? u : n - 1;
}

static json_t *command_json(const struct report *r)
{
    if (!r->argv)
        return json_null();
    char line[4096] = "";
    size_t used = 0;
    json_t *args = json_array();
    shell_word(line, sizeof line, &used, "locklab");
    json_array_append_new(args, json_string("locklab"));
    for (int i = 0; i < r->argc; i++) {
        json_array_append_new(args, json_string(r->argv[i]));
        shell_word(line, sizeof line, &used, r->argv[i]);
    }
    return json_pack("{s:s, s:o}", "text", line, "argv", args);
}

/* Cores, the load averages now, and whether any result was client-bound. */
static json_t *machine_json(const struct report *r)
{
    double load[3] = {0, 0, 0};
    int got = getloadavg(load, 3);
    bool bound = false;
    int cores = 0;
    for (int i = 0; i < r->n_results; i++) {
        bound |= r->results[i]->cpu.client_bound;
        cores = r->results[i]->cpu.cores;
    }
    json_t *m = json_pack("{s:i, s:b}", "cores", cores, "client_bound", bound);
    json_object_set_new(m, "load", got == 3 ? json_pack("[f, f, f]", load[0], load[1], load[2])
                                            : json_null());
    return m;
}

/* Every store of the registry: its server's version (null: not found),
 * and whether a result of this run used it. */
static json_t *stores_json(const struct report *r)
{
    json_t *a = json_array();
    for (int k = 0; k < backend_count; k++) {
        const struct backend_ops *be = backend_registry[k];
        bool used = false;
        for (int i = 0; i < r->n_results; i++)
            used |= backend_of(r->results[i]->ops) == be;
        char out[256];
        bool found = be->version && be->version(out, sizeof out) == 0;
        json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:b}", "store", be->name, "title",
                                           be->title, "version",
                                           found ? json_string(out) : json_null(), "used", used));
    }
    return a;
}

void report_provenance_json(const struct report *r, json_t *root)
{
    json_object_set_new(root, "locklab",
                        json_pack("{s:s, s:s}", "version", LOCKLAB_VERSION, "commit",
                                  LOCKLAB_COMMIT));
    json_object_set_new(root, "command_line", command_json(r));
    bool done = r->exit_code >= 0;
    json_object_set_new(root, "exit_code", done ? json_integer(r->exit_code) : json_null());
    json_object_set_new(root, "duration_s", done ? json_real(r->duration_s) : json_null());
    json_object_set_new(root, "machine", machine_json(r));
    /* the probes fork: once, when the run is over */
    json_object_set_new(root, "store_versions", done ? stores_json(r) : json_null());
}
