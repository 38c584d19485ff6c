/*
 * scenario_load.c - load and validate a scenario file.
 *
 * A scenario file is one YAML document describing what to run: which lock
 * implementations, how many clients, how long, with which lock parameters and
 * workload, and which verdict each implementation is expected to get. A typo
 * in such a file must never turn into a silently different experiment, so the
 * loader is strict: an unknown key, a duplicate key, a value of the wrong type,
 * a malformed duration, an out-of-range number or an unknown implementation is
 * reported as one line "file:line:column: what is wrong" and nothing runs.
 *
 * The file is parsed with libyaml's document API (yaml_parser_load), so every
 * node keeps its start mark and each message can point at the key or value at
 * fault. What each key means is described once, in the option tables below,
 * read by the option engine (opt_engine.c). The keys that need more than a
 * scalar check have their handlers in files of their own: impls and the
 * designs' settings (load_designs.c), the stores' settings under backends
 * (load_stores.c), the sweeps (load_sweep.c), faults (the faults room's
 * fault_load.c), expect (load_expect.c) and adapters (load_adapters.c).
 * This file holds the tables, reads the document and checks what spans
 * sections once everything is read.
 *
 * Durations are resolved into nanoseconds (common/lex.h), so the runner
 * only ever sees plain numbers.
 */
#include "scenario_load.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <yaml.h>

#include "backend.h"
#include "fault_load.h"
#include "lock.h"
#include "opt_engine.h"
#include "load_sections.h"

#define FIELD(f) OPT_FIELD(struct scenario, f)

/* Word lists for OPT_CHOICE are in enum order; the asserts keep them so. */
static const char *const workload_words[] = { "counter", "stock", "reentrant", NULL };
static const char *const retry_words[] = { "fixed", "backoff", NULL };

_Static_assert(WORKLOAD_COUNTER == 0 && WORKLOAD_STOCK == 1 && WORKLOAD_REENTRANT == 2,
               "workload_words order");
_Static_assert(RETRY_FIXED == 0 && RETRY_BACKOFF == 1, "retry_words order");
_Static_assert(sizeof(enum workload_kind) == sizeof(int) && sizeof(enum retry_kind) == sizeof(int),
               "OPT_CHOICE stores an int");

static const struct opt run_opts[] = {
    { .name = "ops_per_client", .type = OPT_INT, FIELD(ops_per_client), .min = 0,
      .max = INT64_MAX, .def = "0", .help = "lock/unlock rounds per client, 0 for no limit" },
    { .name = "max_duration", .type = OPT_DUR, FIELD(max_duration_ns), .min = 1, .def = "60s",
      .help = "longest a run may take" },
    { .name = "clients_per_process", .type = OPT_INT, FIELD(clients_per_process), .min = 1,
      .max = SCN_MAX_CLIENTS, .def = "1",
      .help = "logical clients one process runs on an event loop (designs with async hooks)" },
    { .name = NULL }
};

static const struct opt lock_opts[] = {
    { .name = "key", .type = OPT_STR, FIELD(lock_key), .def = "locklab", .flags = OPT_NONEMPTY,
      .help = "name of the lock in the store" },
    { .name = "ttl", .type = OPT_DUR, FIELD(ttl_ns), .min = 1, .def = "10s",
      .help = "lock lifetime for designs with a TTL; when given, redisson's leaseTime" },
    { .name = "wait", .type = OPT_DUR, FIELD(wait_ns), .min = 0, .def = "30s",
      .help = "how long an acquire may wait, 0 to try once" },
    { .name = "retry_interval", .type = OPT_DUR, FIELD(retry_interval_ns), .min = 1,
      .def = "100ms", .help = "pause between polls of a taken lock" },
    { .name = "retry", .type = OPT_CHOICE, FIELD(retry), .choices = retry_words, .def = "fixed",
      .help = "polling policy" },
    { .name = "(each design's own keys)", .type = OPT_DESIGNS,
      .help = "the keys of the designs' own settings (lock_ops.options)" },
    { .name = "keys", .type = OPT_NODE, .fn = load_keys,
      .help = "hot (one key for all), per-client, or a list of both" },
    { .name = NULL }
};

static const struct opt workload_opts[] = {
    { .name = "kind", .type = OPT_CHOICE, FIELD(workload), .choices = workload_words,
      .def = "counter", .help = "what clients do while holding the lock" },
    { .name = "stock", .type = OPT_INT, FIELD(stock), .min = 1, .max = 1000000000, .def = "100",
      .help = "units of stock for kind stock" },
    { .name = "business", .type = OPT_DUR, FIELD(business_ns), .min = 0, .def = "0",
      .help = "time spent inside the critical section" },
    { .name = "depth", .type = OPT_INT, FIELD(depth), .min = 1, .max = 16, .def = "3",
      .help = "nested acquires of the same lock for kind reentrant" },
    { .name = "think", .type = OPT_DUR, FIELD(think_ns), .min = 0, .def = "0",
      .help = "pause outside the lock after each release" },
    { .name = "fencing", .type = OPT_NODE, .fn = load_fencing,
      .help = "stock: the store checks fencing tokens; true, false or [false, true]" },
    { .name = NULL }
};

static const char *const arrival_words[] = { "poisson", "constant", NULL };
_Static_assert(ARRIVAL_POISSON == 0 && ARRIVAL_CONSTANT == 1, "arrival_words order");

/* Read after the rest (OPT_LATE): rate checks workload.think. */
static const struct opt arrival_opts[] = {
    { .name = "rate", .type = OPT_NODE, .fn = load_arrival_rate, .flags = OPT_REQUIRED,
      .help = "acquires per second across all clients, as 2000/s" },
    { .name = "distribution", .type = OPT_CHOICE, FIELD(arrival_dist), .choices = arrival_words,
      .def = "poisson", .help = "gaps between a client's starts: poisson or constant" },
    { .name = "late", .type = OPT_DUR, FIELD(arrival_late_ns), .min = 1, .def = "1ms",
      .help = "a start this long after its intended instant counts as late" },
    { .name = NULL }
};

/* An explore file (docs/explore.md) is read by `locklab explore`, which
 * comments its explore: block out before this loader sees the rest: here
 * the section means the file was given to the wrong command. */
static int load_explore_refused(struct opt_loader *L, const yaml_node_t *v, const char *kp)
{
    (void)kp;
    return fail_at(L, v, "an explore file: run it with `locklab explore` (docs/explore.md)");
}

/* The top level. Its backends row gets its sections, one per store with
 * settings, from the registry (load_stores.c) before the table is read:
 * top_rows(). */
static struct opt top_opts[] = {
    { .name = "name", .type = OPT_STR, FIELD(name), .flags = OPT_REQUIRED | OPT_IDENT,
      .help = "the scenario's name" },
    { .name = "description", .type = OPT_STR, FIELD(description), .def = "",
      .help = "what the scenario shows" },
    { .name = "adapters", .type = OPT_NODE, .fn = load_adapters_done,
      .help = "programs driving real lock libraries, usable in impls (docs/adapters.md)" },
    { .name = "impls", .type = OPT_NODE, .fn = load_impls, .flags = OPT_REQUIRED,
      .help = "the implementations to run" },
    { .name = "backends", .type = OPT_SECTION, .sub = NULL,
      .help = "how the lock servers are laid out" },
    { .name = "clients", .type = OPT_NODE, .fn = load_clients,
      .help = "number of clients (1..10000), or a list of them to sweep" },
    { .name = "run", .type = OPT_SECTION, .sub = run_opts, .help = "when a run ends" },
    { .name = "lock", .type = OPT_SECTION, .sub = lock_opts,
      .help = "how clients take the lock" },
    { .name = "workload", .type = OPT_SECTION, .sub = workload_opts,
      .help = "what clients do with the lock" },
    { .name = "arrival", .type = OPT_SECTION, .sub = arrival_opts, .flags = OPT_LATE,
      .help = "open loop: when clients start their acquires (docs/scenarios.md)" },
    { .name = "hosts", .type = OPT_NODE, .fn = load_hosts, .flags = OPT_LATE,
      .help = "named hosts (network namespaces) and the clients and servers on each" },
    { .name = "faults", .type = OPT_NODE, .fn = load_faults, .help = "faults to inject" },
    { .name = "expect", .type = OPT_NODE, .fn = load_expect, .flags = OPT_LATE,
      .help = "the verdicts expected of each implementation" },
    { .name = "explore", .type = OPT_NODE, .fn = load_explore_refused,
      .help = "locklab explore: the fault actions its schedules draw from (docs/explore.md)" },
    { .name = NULL }
};

static const struct opt *top_rows(void)
{
    for (struct opt *o = top_opts; o->name; o++)
        if (o->type == OPT_SECTION && !o->sub)
            o->sub = stores_section_rows();
    return top_opts;
}

/* ------------------------------------------------------------------------
 * Reading the file
 * ------------------------------------------------------------------------ */

/* The reader reports a byte offset, not a line: find the line and column
 * (in characters, as libyaml counts them) by reading the file again. */
static bool offset_mark(FILE *f, size_t offset, yaml_mark_t *m)
{
    int c, prev = 0;

    if (fseek(f, 0, SEEK_SET) != 0)
        return false;
    *m = (yaml_mark_t){ .index = offset };
    for (size_t i = 0; i < offset; i++, prev = c) {
        if ((c = getc(f)) == EOF)
            return false;
        if (c == '\n' && prev == '\r')
            continue; /* CR LF is one break */
        if (c == '\n' || c == '\r') {
            m->line++;
            m->column = 0;
        } else if ((c & 0xC0) != 0x80) {
            m->column++;
        }
    }
    return true;
}

static int syntax_error(struct opt_loader *L, const yaml_parser_t *p, FILE *f)
{
    const char *problem = p->problem ? p->problem : "unknown problem";
    const yaml_mark_t *cm = &p->context_mark;
    yaml_mark_t m;

    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return fail_mark(L, NULL, "out of memory while reading YAML");
    case YAML_READER_ERROR:
        if (offset_mark(f, p->problem_offset, &m))
            return fail_mark(L, &m, "YAML syntax error: %s", problem);
        return fail_mark(L, NULL, "YAML syntax error: %s at byte offset %zu", problem,
                         p->problem_offset);
    default:
        if (!p->context)
            return fail_mark(L, &p->problem_mark, "YAML syntax error: %s", problem);
        return fail_mark(L, &p->problem_mark, "YAML syntax error: %s %s that starts at %zu:%zu",
                         problem, p->context, cm->line + 1, cm->column + 1);
    }
}

/* Load the one document of the stream into doc; anything after it is an
 * error. On failure nothing is left to free. */
static int read_document(struct opt_loader *L, yaml_parser_t *p, FILE *f, yaml_document_t *doc)
{
    yaml_document_t next;
    static const yaml_mark_t file_start = { 0, 0, 0 };

    if (!yaml_parser_load(p, doc))
        return syntax_error(L, p, f);
    if (!yaml_document_get_root_node(doc)) {
        yaml_document_delete(doc);
        return fail_mark(L, &file_start, "the file is empty; expected a scenario mapping");
    }
    if (!yaml_parser_load(p, &next)) {
        yaml_document_delete(doc);
        return syntax_error(L, p, f);
    }
    bool more = yaml_document_get_root_node(&next) != NULL;
    yaml_mark_t at = next.start_mark;
    yaml_document_delete(&next);
    if (more) {
        yaml_document_delete(doc);
        return fail_mark(L, &at, "a second YAML document starts here; "
                                 "a scenario file holds exactly one");
    }
    return 0;
}

/* The value of key in mapping map (NULL: none, or map is not a mapping). */
static const yaml_node_t *value_of(struct opt_loader *L, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (const yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = node_at(L, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp(scalar_text(k), key) == 0)
            return node_at(L, p->value);
    }
    return NULL;
}

/* The host client i runs on (its index in s->hosts), -1 the lab's. */
static int client_host(const struct scenario *s, int i)
{
    char member[32];
    snprintf(member, sizeof member, "client:%d", i);
    for (int h = 0; h < s->n_hosts; h++)
        for (int m = 0; m < s->hosts[h].n_members; m++)
            if (strcmp(s->hosts[h].members[m], member) == 0)
                return h;
    return -1;
}

/* run.clients_per_process above 1 runs client groups (harness/run/group.c):
 * every design listed must have asynchronous hooks (lock_ops.async), and
 * what a group cannot do (the reentrant workload's nested acquires, hosts
 * that put one group's clients in different namespaces) is refused here. */
static int groups_finish(struct opt_loader *L, const yaml_node_t *root)
{
    const struct scenario *s = L->s;
    if (s->clients_per_process <= 1)
        return 0;
    const yaml_node_t *at = value_of(L, value_of(L, root, "run"), "clients_per_process");
    if (s->workload == WORKLOAD_REENTRANT)
        return fail_at(L, at, "run.clients_per_process above 1 cannot run the reentrant "
                              "workload (its nested acquires block); use 1");
    for (int i = 0, per = s->clients_per_process; i < scenario_most_clients(s); i++) {
        int h = client_host(s, i), first = client_host(s, i / per * per);
        if (h != first)
            return fail_at(L, at, "run.clients_per_process %d puts client:%d (on %s) in one "
                           "process with client:%d (on %s), but a process is in one host's "
                           "namespace: put each group's clients on one host, or use 1",
                           per, i, h < 0 ? "the lab" : s->hosts[h].name, i / per * per,
                           first < 0 ? "the lab" : s->hosts[first].name);
    }
    /* every design that cannot, named in one message at the first's item */
    const yaml_node_t *impls = value_of(L, root, "impls"), *item = NULL;
    char names[256] = "";
    int misfits = 0;
    for (int j = 0; j < s->n_impls; j++) {
        const struct lock_ops *ops = scenario_impl(s, s->impls[j]);
        if (!ops || ops->async)
            continue;
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", misfits ? ", " : "", ops->name);
        if (misfits++ == 0 && impls && impls->type == YAML_SEQUENCE_NODE)
            for (const yaml_node_item_t *it = impls->data.sequence.items.start;
                 it < impls->data.sequence.items.top && !item; it++) {
                const yaml_node_t *n = node_at(L, *it);
                if (n && n->type == YAML_SCALAR_NODE && strcmp(scalar_text(n), ops->name) == 0)
                    item = n;
            }
    }
    if (misfits)
        return fail_at(L, item ? item : at,
                       "%s cannot run in client groups (run.clients_per_process %d): %s no "
                       "asynchronous hooks (docs/designs.md lists those that do); use "
                       "clients_per_process 1 for %s", names, s->clients_per_process,
                       misfits > 1 ? "they have" : "it has", misfits > 1 ? "them" : "it");
    return 0;
}

static int load_root(struct opt_loader *L)
{
    const yaml_node_t *root = yaml_document_get_root_node(L->doc);

    if (node_is_null(root))
        return fail_at(L, root, "the document is empty; expected a scenario mapping");
    if (root->type != YAML_MAPPING_NODE)
        return wrong_type(L, root, "the top level",
                          "a mapping of scenario keys (name, impls, ...)");
    /* every key is read, whatever failed before it; what spans sections is
     * checked only when each section read well */
    load_adapters_first(L, root);
    load_section(L, top_rows(), root, "", (char *)L->s, -1);
    if (L->n_errors > 0 || stores_finish(L) != 0)
        return -1;
    struct scenario *s = L->s;
    if (s->n_client_steps == 0) { /* no clients key: one client */
        s->clients = s->client_steps[0] = 1;
        s->n_client_steps = 1;
    }
    if (s->n_key_modes == 0) {
        s->key_modes[0] = s->per_client_keys = KEYS_HOT;
        s->n_key_modes = 1;
    }
    if (s->n_fence_modes == 0) {
        s->fence_modes[0] = s->fencing = 0;
        s->n_fence_modes = 1;
    }
    for (int i = 0; i < s->n_fence_modes; i++)
        if (s->fence_modes[i] && s->workload != WORKLOAD_STOCK)
            return fail_at(L, L->fencing_node,
                           "workload.fencing needs kind stock (the stock store is the "
                           "resource that checks the tokens)");
    for (int i = 0; i < s->n_key_modes; i++)
        if (s->key_modes[i] == KEYS_PER_CLIENT && s->workload == WORKLOAD_STOCK)
            return fail_at(L, L->keys_node,
                           "lock.keys per-client needs the counter or reentrant workload "
                           "(the stock is one resource, guarded by one key)");
    for (int j = 0; j < s->n_impls; j++) { /* lock.h: LOCK_CAP_OPTIMISTIC */
        const struct lock_ops *ops = scenario_impl(s, s->impls[j]);
        if (ops && (ops->caps & LOCK_CAP_OPTIMISTIC) && s->workload != WORKLOAD_STOCK)
            return fail_at(L, L->design_impl[design_index(ops)],
                           "%s keeps its own stock and its version: it needs workload kind "
                           "stock", ops->name);
    }
    if (groups_finish(L, root) != 0 || fault_load_finish(L) != 0 || designs_finish(L) != 0)
        return -1;
    adapters_renewals(s);
    return 0;
}

int scenario_load(const char *path, struct scenario *out, char *err, size_t errlen)
{
    struct scenario s;
    struct opt_loader L = { .path = path ? path : "(null)", .err = err, .errlen = errlen, .s = &s };
    yaml_parser_t parser;
    yaml_document_t doc;
    struct stat st;
    int rc;

    if (err && errlen)
        err[0] = '\0';
    if (!path || !out)
        return fail_mark(&L, NULL, "no scenario file or no place to load it into");
    memset(&s, 0, sizeof s);
    if (strlen(path) >= sizeof s.path)
        return fail_mark(&L, NULL, "the path is too long (at most %zu bytes)", sizeof s.path - 1);
    memcpy(s.path, path, strlen(path) + 1);
    if (designs_fit(&L) != 0 || stores_fit(&L) != 0 ||
        apply_defaults(&L, top_rows(), "", (char *)&s, -1) != 0)
        return -1;

    FILE *f = fopen(path, "rb");
    if (!f)
        return fail_mark(&L, NULL, "cannot open: %s", strerror(errno));
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        return fail_mark(&L, NULL, "cannot open: %s", strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        fclose(f);
        return fail_mark(&L, NULL, "is a directory");
    }
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return fail_mark(&L, NULL, "out of memory while reading YAML");
    }
    yaml_parser_set_input_file(&parser, f);
    rc = read_document(&L, &parser, f, &doc);
    yaml_parser_delete(&parser);
    fclose(f);
    if (rc != 0)
        return -1;

    L.doc = &doc;
    rc = load_root(&L);
    loader_errors_done(&L);
    yaml_document_delete(&doc);
    if (rc == 0)
        *out = s;
    return rc;
}

int scenario_defaults(struct scenario *out)
{
    struct opt_loader L = { .path = "(defaults)", .s = out };

    memset(out, 0, sizeof *out);
    if (designs_fit(&L) != 0 || stores_fit(&L) != 0 ||
        apply_defaults(&L, top_rows(), "", (char *)out, -1) != 0)
        return -1;
    return designs_finish(&L);
}

/* ------------------------------------------------------------------------
 * The key reference: every key a file takes, printed from the rows above
 * (and each design's), for `locklab list --options` and the docs' test
 * ------------------------------------------------------------------------ */

static void print_rows(FILE *f, const struct opt *rows, const char *path, const char *owner)
{
    char key[128];

    for (const struct opt *o = rows; o && o->name; o++) {
        if (o->flags & OPT_DERIVED)
            continue; /* not a key of the file */
        if (o->type == OPT_DESIGNS) {
            for (int i = 0; i < lock_registry_count; i++)
                print_rows(f, lock_registry[i]->options, path, lock_registry[i]->name);
            continue;
        }
        snprintf(key, sizeof key, "%s%s%s", path, *path ? "." : "", o->name);
        if (o->type == OPT_SECTION) {
            print_rows(f, o->sub, key, owner);
            continue;
        }
        bool named = owner && strncmp(o->help, owner, strlen(owner)) == 0;
        fprintf(f, "%-36s %-9s %s%s%s%s\n", key, !o->def ? "-" : *o->def ? o->def : "\"\"",
                owner && !named ? owner : "", owner && !named ? ": " : "", o->help,
                (o->flags & OPT_REQUIRED) ? " (required)" : "");
        if (o->fn == load_adapters_done)
            print_rows(f, adapter_opts, "adapters.NAME", NULL);
        if (o->fn == load_faults)
            for (const struct opt *e = fault_entry_opts; e->name; e++) {
                snprintf(key, sizeof key, "faults[].%s", e->name);
                fprintf(f, "%-36s %-9s %s\n", key, "-", e->help);
            }
    }
}

void scenario_print_keys(FILE *f)
{
    print_rows(f, top_rows(), "", NULL);
}
