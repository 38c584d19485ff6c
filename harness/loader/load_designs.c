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
int designs_finish(struct opt_loader *L)
{
    struct lock_opts_ctx ctx = {
        .ttl_ns = L->s->ttl_ns, .ttl_given = opt_given(L, &L->s->ttl_ns), .given = ctx_given,
        .loader = L };

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


int load_impls(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    struct scenario *s = L->s;
    const yaml_node_t *first[SCN_MAX_IMPLS];
    char itempath[96], shown[SHOW_MAX];

    if (value->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, value, keypath,
                          "a sequence of implementation names, such as [redis-lua]");
    const yaml_node_item_t *items = value->data.sequence.items.start;
    size_t n = (size_t)(value->data.sequence.items.top - items);
    if (n == 0)
        return fail_at(L, value, "%s is empty; list at least one implementation", keypath);

    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *item = node_at(L, items[i]);
        snprintf(itempath, sizeof itempath, "%s[%zu]", keypath, i);
        if (want_scalar(L, item, itempath, "an implementation name") != 0)
            return -1;
        const char *name = scalar_text(item);
        size_t len = item->data.scalar.length;
        if (s->n_impls == SCN_MAX_IMPLS)
            return fail_at(L, item, "too many implementations in %s (at most %d)", keypath,
                           SCN_MAX_IMPLS);
        if (len >= SCN_NAME_MAX || !scenario_impl(s, name))
            return fail_at(L, item,
                           "unknown implementation '%s' (run `locklab list` to see them); "
                           "a program driving a library is declared under adapters",
                           show(shown, sizeof shown, name, len));
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
    }
    return 0;
}
