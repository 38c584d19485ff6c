/*
 * load_adapters.c - adapters: the programs a scenario declares to drive
 * real lock libraries (docs/adapters.md).
 *
 * adapters is read before every other key, since impls and expect name
 * the adapters; each entry is read through the engine's rows (command,
 * backend, ready_timeout, grace) into its adapter_spec, and becomes a
 * design table of its own (adapter.c's hooks under the entry's name).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "opt_engine.h"
#include "load_sections.h"
#include "adapter.h"
#include "backend.h"
#include "lex.h"
#include "lock.h"

/* ------------------------------------------------------------------------
 * adapters: programs driving real lock libraries (impls/adapter/adapter.h)
 * ------------------------------------------------------------------------ */

#define ADAPTER_FIELD(f) OPT_FIELD(struct adapter_spec, f)

static int load_adapter_command(struct opt_loader *L, const yaml_node_t *value,
                                const char *keypath);
static int load_adapter_backend(struct opt_loader *L, const yaml_node_t *value,
                                const char *keypath);

const struct opt adapter_opts[] = {
    { .name = "command", .type = OPT_NODE, .fn = load_adapter_command, .flags = OPT_REQUIRED,
      .help = "the program and its arguments, run without a shell in the scenario's directory" },
    { .name = "backend", .type = OPT_NODE, .fn = load_adapter_backend, .flags = OPT_REQUIRED,
      .help = "the servers the harness starts for it and names in LOCKLAB_* variables: a "
              "word of a store's (docs/adapters.md)" },
    { .name = "ready_timeout", .type = OPT_DUR, ADAPTER_FIELD(ready_timeout_ns), .min = 1,
      .def = "30s", .help = "how long the program may take to print ready" },
    { .name = "grace", .type = OPT_DUR, ADAPTER_FIELD(grace_ns), .min = 1, .def = "5s",
      .help = "how long past WAIT_MS a reply may take before the program counts as hung" },
    { .name = NULL }
};

/* The adapter being read: the next free entry. */
static struct adapter_spec *adapter_current(struct opt_loader *L)
{
    return &L->s->adapters[L->s->n_adapters].spec;
}

static int load_adapter_command(struct opt_loader *L, const yaml_node_t *value,
                                const char *keypath)
{
    struct adapter_spec *a = adapter_current(L);
    char itempath[128];

    if (value->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, value, keypath,
                          "a sequence: the program and its arguments, such as "
                          "[/usr/bin/python3, lock.py]");
    const yaml_node_item_t *items = value->data.sequence.items.start;
    size_t n = (size_t)(value->data.sequence.items.top - items), used = 0;
    if (n == 0)
        return fail_at(L, value, "%s is empty; give the program to run", keypath);
    if (n > ADAPTER_MAX_ARGS)
        return fail_at(L, value, "%s has %zu words (at most %d)", keypath, n, ADAPTER_MAX_ARGS);
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *item = node_at(L, items[i]);
        snprintf(itempath, sizeof itempath, "%s[%zu]", keypath, i);
        if (want_scalar(L, item, itempath, "a word of the command") != 0)
            return -1;
        size_t len = item->data.scalar.length;
        if (len == 0)
            return fail_at(L, item, "%s is empty", itempath);
        if (used + len + 1 > sizeof a->argv)
            return fail_at(L, item, "%s is too long (all words together at most %zu bytes)",
                           keypath, sizeof a->argv - 1);
        memcpy(a->argv + used, scalar_text(item), len + 1);
        used += len + 1;
    }
    a->argc = (int)n;
    return 0;
}

/* backend: a word one of the stores lists (backend_ops.adapter_kinds); the
 * store and its caps go with it. */
static int load_adapter_backend(struct opt_loader *L, const yaml_node_t *value,
                                const char *keypath)
{
    struct adapter_spec *a = adapter_current(L);
    char shown[SHOW_MAX];
    if (want_scalar(L, value, keypath, "a backend word") != 0)
        return -1;
    const char *word = scalar_text(value);
    const struct backend_adapter_kind *kind;
    const struct backend_ops *be = backend_adapter_find(word, &kind);
    if (!be)
        return fail_at(L, value, "unknown value '%s' for %s (expected one of: %s)",
                       show(shown, sizeof shown, word, value->data.scalar.length), keypath,
                       backend_adapter_list());
    snprintf(a->backend, sizeof a->backend, "%s", kind->word);
    snprintf(a->store, sizeof a->store, "%s", be->name);
    a->caps = kind->caps;
    return 0;
}

/* The directory of the scenario file, absolute: adapters run there. */
static int scenario_dir(struct opt_loader *L, const yaml_node_t *at, char *out, size_t n)
{
    char *real = realpath(L->s->path, NULL);
    if (!real)
        return fail_at(L, at, "cannot resolve the scenario's directory: %s", strerror(errno));
    char *slash = strrchr(real, '/');
    if (slash)
        *(slash == real ? slash + 1 : slash) = '\0';
    int w = snprintf(out, n, "%s", real);
    free(real);
    if (w < 0 || (size_t)w >= n)
        return fail_at(L, at, "the scenario's directory is too long for an adapter (at most %zu "
                              "bytes)", n - 1);
    return 0;
}

/* One entry of adapters: its name (key) and {command, backend, ...}. */
static int load_adapter(struct opt_loader *L, const yaml_node_t *key, const yaml_node_t *val,
                        const char *keypath)
{
    struct scenario *s = L->s;
    char shown[SHOW_MAX], path[128];

    if (want_scalar(L, key, keypath, "an adapter name") != 0)
        return -1;
    const char *name = scalar_text(key);
    size_t len = key->data.scalar.length;
    if (len == 0 || len >= sizeof s->adapters[0].spec.name)
        return fail_at(L, key, "adapter name '%s' must have 1 to %zu characters",
                       show(shown, sizeof shown, name, len),
                       sizeof s->adapters[0].spec.name - 1);
    if (!lex_is_ident(name, len))
        return fail_at(L, key,
                       "adapter name '%s' may only contain letters, digits, '_', '.' and '-'",
                       show(shown, sizeof shown, name, len));
    if (lock_find(name))
        return fail_at(L, key, "adapter name '%s' is a built-in implementation's; "
                               "choose another", name);
    for (int j = 0; j < s->n_adapters; j++)
        if (strcmp(s->adapters[j].spec.name, name) == 0)
            return fail_at(L, key, "adapter '%s' is declared twice in %s", name, keypath);
    if (s->n_adapters == SCN_MAX_ADAPTERS)
        return fail_at(L, key, "too many adapters in %s (at most %d)", keypath,
                       SCN_MAX_ADAPTERS);
    if (val->type != YAML_MAPPING_NODE)
        return wrong_type(L, val, name,
                          "a mapping such as {command: [prog, arg], backend: redis}");
    struct adapter_spec *a = adapter_current(L);
    memset(a, 0, sizeof *a);
    memcpy(a->name, name, len + 1);
    snprintf(path, sizeof path, "%s.%s", keypath, name);
    if (apply_defaults(L, adapter_opts, path, (char *)a, -1) != 0 ||
        load_section(L, adapter_opts, val, path, (char *)a, -1) != 0 ||
        scenario_dir(L, key, a->dir, sizeof a->dir) != 0)
        return -1;
    if (adapter_ops_init(&s->adapters[s->n_adapters].ops, a) != 0)
        return fail_at(L, key, "too many different adapters in one invocation");
    L->adapter_key[s->n_adapters++] = key;
    return 0;
}

/* Read adapters: a mapping name -> {command, backend, ...}. It is read
 * before every other key, since impls and expect name the adapters. */
static int load_adapters(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    int rc = 0;

    if (value->type != YAML_MAPPING_NODE)
        rc = wrong_type(L, value, keypath,
                        "a mapping from adapter name to {command: [...], backend: ...}");
    else
        for (const yaml_node_pair_t *p = value->data.mapping.pairs.start;
             p < value->data.mapping.pairs.top; p++)
            if (load_adapter(L, node_at(L, p->key), node_at(L, p->value), keypath) != 0)
                rc = -1; /* the other entries are still checked */
    if (rc != 0)
        L->adapters_failed = true;
    return rc;
}

/* The row of rows named name, or NULL. */
static const struct opt *row_named(const struct opt *rows, const char *name)
{
    for (; rows && rows->name; rows++)
        if (strcmp(rows->name, name) == 0)
            return rows;
    return NULL;
}

/* The renewal settings an adapter is told (docs/adapters.md, Environment):
 * how the built-in designs of its store renew in this scenario, as they
 * resolved their keys, read through their own rows by name: redisson's
 * watchdog lease when it runs its watchdog (its derived leaseTime is 0),
 * etcd-lease's etcd_keepalive. */
void adapters_renewals(struct scenario *s)
{
    for (int a = 0; a < s->n_adapters; a++) {
        struct adapter_spec *sp = &s->adapters[a].spec;
        sp->watchdog_lease_ns = 0;
        sp->etcd_keepalive = -1;
        for (int i = 0; i < lock_registry_count; i++) {
            const struct lock_ops *ops = lock_registry[i];
            if (!ops->options || strcmp(ops->backend, sp->store) != 0)
                continue;
            const char *blob = s->options + options_offset(i);
            const struct opt *lease = row_named(ops->options, "watchdog_lease"),
                             *lease_time = row_named(ops->options, "leaseTime"),
                             *keepalive = row_named(ops->options, "etcd_keepalive");
            int64_t ns = -1, wd = 0;
            int on = 0;
            if (lease && lease_time) {
                memcpy(&ns, blob + lease_time->off, sizeof ns);
                memcpy(&wd, blob + lease->off, sizeof wd);
                if (ns == 0)
                    sp->watchdog_lease_ns = wd;
            }
            if (keepalive) {
                memcpy(&on, blob + keepalive->off, sizeof on);
                sp->etcd_keepalive = on != 0;
            }
        }
    }
}

/* adapters, met again in its place among the keys: read already. */
int load_adapters_done(struct opt_loader *L, const yaml_node_t *value,
                       const char *keypath)
{
    (void)L;
    (void)value;
    (void)keypath;
    return 0;
}

/* Read the root's adapters key first, if it has one. */
int load_adapters_first(struct opt_loader *L, const yaml_node_t *root)
{
    const yaml_node_pair_t *pairs = root->data.mapping.pairs.start;
    size_t n = (size_t)(root->data.mapping.pairs.top - pairs);
    for (size_t p = 0; p < n; p++) {
        const yaml_node_t *key = node_at(L, pairs[p].key);
        if (key->type == YAML_SCALAR_NODE && strcmp(scalar_text(key), "adapters") == 0)
            return load_adapters(L, node_at(L, pairs[p].value), "adapters");
    }
    return 0;
}
