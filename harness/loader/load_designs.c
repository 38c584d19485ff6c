/*
 * load_designs.c - the implementations a scenario runs (impls) and the
 * lock designs' own settings.
 *
 * A design's settings are rows in the design's file (lock_ops.options),
 * read by the option engine where the lock section has its OPT_DESIGNS
 * row; their values go to the design's own struct, one per design in
 * scenario.options (scenario_options), which the client hands to the
 * design as lock_env.options. A design's keys are accepted whether or not
 * it is in impls, since `run --impl` may run it anyway; its finish_options
 * hook, called once the file is read, derives values and checks what the
 * file must give for a design it lists.
 */
#include <string.h>

#include <yaml.h>

#include "opt_engine.h"
#include "load_sections.h"
#include "lock.h"

static bool ctx_given(const struct lock_opts_ctx *ctx, const void *field)
{
    return opt_given(ctx->loader, field);
}

/* The designs' own settings fit in scenario.options (internal error if not). */
int designs_fit(struct opt_loader *L)
{
    if (lock_registry_count > LOADER_MAX_DESIGNS ||
        options_offset(lock_registry_count) > sizeof L->s->options)
        return fail_at(L, NULL, "internal error: the designs' settings take %zu bytes of %zu "
                                "(SCN_OPTIONS_MAX), %d designs of %d",
                       options_offset(lock_registry_count), sizeof L->s->options,
                       lock_registry_count, LOADER_MAX_DESIGNS);
    return 0;
}

/* Once the file is read: each design derives and checks its settings. A
 * failure is placed at the design's first key in the file, else at its item
 * in impls. */
/* A row several designs share (the same struct opt) was read into the
 * first of them: the others get its value. */
static void shared_rows_copy(struct opt_loader *L)
{
    for (int i = 0; i < lock_registry_count; i++)
        for (const struct opt *d = lock_registry[i]->options; d && d->name; d++)
            for (int j = 0; j < i; j++) {
                const struct opt *o = lock_registry[j]->options;
                while (o && o->name && o != d)
                    o++;
                if (o && o == d) {
                    memcpy(L->s->options + options_offset(i) + d->off,
                           L->s->options + options_offset(j) + d->off, d->size);
                    break;
                }
            }
}

int designs_finish(struct opt_loader *L)
{
    shared_rows_copy(L);
    struct lock_opts_ctx ctx = {
        .ttl_ns = L->s->ttl_ns, .ttl_given = opt_given(L, &L->s->ttl_ns), .given = ctx_given,
        .clients_per_process = L->s->clients_per_process, .loader = L };

    for (int i = 0; i < lock_registry_count; i++) {
        const struct lock_ops *ops = lock_registry[i];
        struct lab_err err = { 0 };
        if (!ops->options || !ops->finish_options)
            continue;
        ctx.listed = L->design_impl[i] != NULL;
        if (ops->finish_options(L->s->options + options_offset(i), &ctx, &err) != 0)
            return fail_at(L, L->design_node[i] ? L->design_node[i] : L->design_impl[i], "%s",
                           err.msg[0] ? err.msg : "bad settings");
    }
    return 0;
}


/* Every implementation name a scenario may list: the registry's designs
 * and its adapters, NULL-terminated in out (max entries at most). */
static void impl_names(const struct scenario *s, const char **out, int max)
{
    int n = 0;

    for (int i = 0; i < lock_registry_count && n < max - 1; i++)
        out[n++] = lock_registry[i]->name;
    for (int a = 0; a < s->n_adapters && n < max - 1; a++)
        out[n++] = s->adapters[a].spec.name;
    out[n] = NULL;
}

/* One item of impls, at itempath: known, listed once; 0 or -1. */
static int load_impl(struct opt_loader *L, const yaml_node_t *item, const char *keypath,
                     const char *itempath, const yaml_node_t **first)
{
    struct scenario *s = L->s;
    const char *names[LOADER_MAX_DESIGNS + SCN_MAX_ADAPTERS + 1];
    char shown[SHOW_MAX], near[96];

    if (want_scalar(L, item, itempath, "an implementation name") != 0)
        return -1;
    const char *name = scalar_text(item);
    size_t len = item->data.scalar.length;
    if (s->n_impls == SCN_MAX_IMPLS)
        return fail_at(L, item, "too many implementations in %s (at most %d)", keypath,
                       SCN_MAX_IMPLS);
    if (len >= SCN_NAME_MAX || !scenario_impl(s, name)) {
        if (L->adapters_failed)
            return -1; /* maybe a broken adapter's name: its error is reported */
        impl_names(s, names, (int)(sizeof names / sizeof names[0]));
        return fail_at(L, item,
                       "unknown implementation '%s' (run `locklab list` to see them); "
                       "a program driving a library is declared under adapters%s",
                       show(shown, sizeof shown, name, len),
                       did_you_mean(near, sizeof near, name, len, names));
    }
    for (int j = 0; j < s->n_impls; j++)
        if (strcmp(s->impls[j], name) == 0)
            return fail_at(L, item,
                           "implementation '%s' is listed twice in %s (first at %zu:%zu)",
                           name, keypath, first[j]->start_mark.line + 1,
                           first[j]->start_mark.column + 1);
    if (lock_find(name))
        L->design_impl[design_index(lock_find(name))] = item;
    memcpy(s->impls[s->n_impls], name, len + 1);
    first[s->n_impls++] = item;
    return 0;
}

int load_impls(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    const yaml_node_t *first[SCN_MAX_IMPLS];
    char itempath[96];
    int rc = 0;

    if (value->type != YAML_SEQUENCE_NODE)
        rc = wrong_type(L, value, keypath,
                        "a sequence of implementation names, such as [redis-lua]");
    else if (value->data.sequence.items.top == value->data.sequence.items.start)
        rc = fail_at(L, value, "%s is empty; list at least one implementation", keypath);
    else
        for (const yaml_node_item_t *it = value->data.sequence.items.start;
             it < value->data.sequence.items.top; it++) {
            snprintf(itempath, sizeof itempath, "%s[%td]", keypath,
                     it - value->data.sequence.items.start);
            if (load_impl(L, node_at(L, *it), keypath, itempath, first) != 0)
                rc = -1; /* the next items are still checked */
        }
    if (rc != 0)
        L->impls_failed = true;
    return rc;
}
