/*
 * scenario_expect.c - expect: the verdict each implementation should get.
 *
 * An entry names an implementation of impls (or "*" for every other one)
 * and gives one verdict, or {unfenced: V, fenced: V} for the steps with
 * workload.fencing off and on. A run compares each result's verdict with
 * scenario_expected(), and CI gates on the difference.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "opt_engine.h"
#include "scenario_sections.h"
#include "lab.h"

static const char *verdict_list(char *buf, size_t n)
{
    const char *words[VERDICT_ANY - VERDICT_SAFE + 2];
    int k = 0;

    for (int v = VERDICT_SAFE; v <= VERDICT_ANY; v++)
        words[k++] = verdict_name((enum verdict)v);
    words[k] = NULL;
    return join_words(buf, n, words);
}

/* One verdict (a real one, or any) at path into *out. */
static int expect_verdict(struct opt_loader *L, const yaml_node_t *val, const char *path,
                          const char *list, enum verdict *out)
{
    char shown[SHOW_MAX], expected[192];

    snprintf(expected, sizeof expected, "a verdict (one of: %s)", list);
    if (want_scalar(L, val, path, expected) != 0)
        return -1;
    *out = verdict_parse(scalar_text(val));
    if (*out == VERDICT_NONE)
        return fail_at(L, val, "unknown verdict '%s' for %s (expected one of: %s)",
                       show(shown, sizeof shown, scalar_text(val), val->data.scalar.length),
                       path, list);
    return 0;
}

/* An expectation: one verdict for every step, or {unfenced: V, fenced: V}
 * for the steps with workload.fencing off and on (both keys required). */
static int expect_verdicts(struct opt_loader *L, const yaml_node_t *val, const char *entry,
                           const char *list, enum verdict v[2])
{
    static const char *const modes[] = { "unfenced", "fenced", NULL }; /* find_word's list */
    char path[160], shown[SHOW_MAX];
    const yaml_node_t *given_at[2] = { NULL, NULL };

    if (val->type != YAML_MAPPING_NODE) {
        if (expect_verdict(L, val, entry, list, &v[0]) != 0)
            return -1;
        v[1] = v[0];
        return 0;
    }
    const yaml_node_pair_t *pairs = val->data.mapping.pairs.start;
    size_t n = (size_t)(val->data.mapping.pairs.top - pairs);
    for (size_t p = 0; p < n; p++) {
        const yaml_node_t *key = node_at(L, pairs[p].key);
        int m = key->type == YAML_SCALAR_NODE ? find_word(modes, scalar_text(key)) : -1;
        if (m < 0)
            return fail_at(L, key, "unknown key '%s' in %s (expected unfenced and fenced)",
                           key->type == YAML_SCALAR_NODE
                               ? show(shown, sizeof shown, scalar_text(key),
                                      key->data.scalar.length)
                               : "?",
                           entry);
        if (given_at[m])
            return fail_at(L, key, "duplicate key '%s' in %s", modes[m], entry);
        given_at[m] = key;
        snprintf(path, sizeof path, "%s.%s", entry, modes[m]);
        if (expect_verdict(L, node_at(L, pairs[p].value), path, list, &v[m]) != 0)
            return -1;
    }
    for (int m = 0; m < 2; m++)
        if (!given_at[m])
            return fail_at(L, val, "%s needs both unfenced and fenced (missing: %s)", entry,
                           modes[m]);
    return 0;
}

/* expect runs after impls has been read, since its keys must name them. */
int load_expect(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    struct scenario *s = L->s;
    const yaml_node_t *first[SCN_MAX_IMPLS + 1];
    char shown[SHOW_MAX], list[128], entry[128];

    verdict_list(list, sizeof list);
    if (value->type != YAML_MAPPING_NODE)
        return wrong_type(L, value, keypath,
                          "a mapping from implementation name (or \"*\") to verdict");

    const yaml_node_pair_t *pairs = value->data.mapping.pairs.start;
    size_t n = (size_t)(value->data.mapping.pairs.top - pairs);
    for (size_t p = 0; p < n; p++) {
        const yaml_node_t *key = node_at(L, pairs[p].key);
        const yaml_node_t *val = node_at(L, pairs[p].value);

        if (key->type != YAML_SCALAR_NODE || node_is_null(key))
            return fail_at(L, key, "keys of %s must be implementation names or \"*\"", keypath);
        const char *name = scalar_text(key);
        size_t len = key->data.scalar.length;
        bool known = strcmp(name, "*") == 0;
        for (int j = 0; j < s->n_impls && !known; j++)
            known = strcmp(s->impls[j], name) == 0;
        if (!known || strlen(name) != len)
            return fail_at(L, key, "%s names '%s', which is not in impls", keypath,
                           show(shown, sizeof shown, name, len));
        for (int j = 0; j < s->n_expect; j++)
            if (strcmp(s->expect[j].impl, name) == 0)
                return fail_at(L, key, "duplicate key '%s' in %s (first at %zu:%zu)", name,
                               keypath, first[j]->start_mark.line + 1,
                               first[j]->start_mark.column + 1);
        if (s->n_expect == SCN_MAX_IMPLS + 1)
            return fail_at(L, key, "too many entries in %s", keypath);

        snprintf(entry, sizeof entry, "%s.%s", keypath, name);
        enum verdict v[2]; /* unfenced, fenced */
        if (expect_verdicts(L, val, entry, list, v) != 0)
            return -1;
        memcpy(s->expect[s->n_expect].impl, name, len + 1);
        s->expect[s->n_expect].verdict = v[0];
        s->expect[s->n_expect].verdict_fenced = v[1];
        first[s->n_expect++] = key;
    }
    return 0;
}

enum verdict scenario_expected(const struct scenario *s, const char *impl)
{
    enum verdict star = VERDICT_NONE;

    for (int i = 0; i < s->n_expect; i++) {
        enum verdict v = s->fencing ? s->expect[i].verdict_fenced : s->expect[i].verdict;
        if (strcmp(s->expect[i].impl, impl) == 0)
            return v;
        if (strcmp(s->expect[i].impl, "*") == 0)
            star = v;
    }
    return star;
}
