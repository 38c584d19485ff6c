/*
 * load_expect.c - expect: the verdict each implementation should get.
 *
 * An entry names an implementation of impls (or "*" for every other one)
 * and gives one verdict, a list of the verdicts it allows ([blocked,
 * safe]: where the outcome truly varies, the file names each), or
 * {unfenced: V, fenced: V} for the steps with workload.fencing off and on
 * (each V a verdict or a list). A run compares each result's verdict with
 * scenario_expected(), and CI gates on the difference.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "opt_engine.h"
#include "load_sections.h"
#include "lab.h"

/* The verdict words, NULL-terminated, into words (VERDICT_ANY -
 * VERDICT_SAFE + 2 entries). */
static void verdict_words(const char **words)
{
    int k = 0;

    for (int v = VERDICT_SAFE; v <= VERDICT_ANY; v++)
        words[k++] = verdict_name((enum verdict)v);
    words[k] = NULL;
}

static const char *verdict_list(char *buf, size_t n)
{
    const char *words[VERDICT_ANY - VERDICT_SAFE + 2];

    verdict_words(words);
    return join_words(buf, n, words);
}

/* One verdict (a real one, or any) at path into *out. */
static int expect_word(struct opt_loader *L, const yaml_node_t *val, const char *path,
                       const char *list, enum verdict *out)
{
    char shown[SHOW_MAX], expected[192];

    snprintf(expected, sizeof expected, "a verdict or a list of verdicts (one of: %s)", list);
    if (want_scalar(L, val, path, expected) != 0)
        return -1;
    *out = verdict_parse(scalar_text(val));
    if (*out == VERDICT_NONE) {
        const char *words[VERDICT_ANY - VERDICT_SAFE + 2];
        char near[96];
        verdict_words(words);
        return fail_at(L, val, "unknown verdict '%s' for %s (expected one of: %s)%s",
                       show(shown, sizeof shown, scalar_text(val), val->data.scalar.length),
                       path, list,
                       did_you_mean(near, sizeof near, scalar_text(val), val->data.scalar.length,
                                    words));
    }
    return 0;
}

/* A verdict, or a list of two or more real ones (no any, none twice), at
 * path into *out. */
static int expect_verdict(struct opt_loader *L, const yaml_node_t *val, const char *path,
                          const char *list, verdict_set *out)
{
    enum verdict v;

    if (val->type != YAML_SEQUENCE_NODE) {
        if (expect_word(L, val, path, list, &v) != 0)
            return -1;
        *out = VERDICT_SET(v);
        return 0;
    }
    const yaml_node_item_t *it = val->data.sequence.items.start;
    size_t n = (size_t)(val->data.sequence.items.top - it);
    if (n < 2)
        return fail_at(L, val, "%s: a list of verdicts names two or more (one: give it alone)",
                       path);
    *out = 0;
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *w = node_at(L, it[i]);
        if (expect_word(L, w, path, list, &v) != 0)
            return -1;
        if (v == VERDICT_ANY)
            return fail_at(L, w, "%s: any in a list of verdicts (any allows them all: give it "
                           "alone)", path);
        if (*out & VERDICT_SET(v))
            return fail_at(L, w, "%s: %s named twice", path, verdict_name(v));
        *out |= VERDICT_SET(v);
    }
    return 0;
}

/* An expectation: one verdict for every step, or {unfenced: V, fenced: V}
 * for the steps with workload.fencing off and on (both keys required). */
static int expect_verdicts(struct opt_loader *L, const yaml_node_t *val, const char *entry,
                           const char *list, verdict_set v[2])
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
/* One entry of expect (key: an implementation of impls or "*"); 0 or -1. */
static int load_expect_entry(struct opt_loader *L, const yaml_node_t *key,
                             const yaml_node_t *val, const char *keypath, const char *list,
                             const yaml_node_t **first)
{
    struct scenario *s = L->s;
    const char *names[SCN_MAX_IMPLS + 2];
    char shown[SHOW_MAX], entry[128], near[96];

    if (key->type != YAML_SCALAR_NODE || node_is_null(key))
        return fail_at(L, key, "keys of %s must be implementation names or \"*\"", keypath);
    const char *name = scalar_text(key);
    size_t len = key->data.scalar.length;
    bool known = strcmp(name, "*") == 0;
    for (int j = 0; j < s->n_impls && !known; j++)
        known = strcmp(s->impls[j], name) == 0;
    if (!known || strlen(name) != len) {
        if (L->impls_failed)
            return -1; /* impls is in error, reported: it may be the name that failed there */
        for (int j = 0; j < s->n_impls; j++)
            names[j] = s->impls[j];
        names[s->n_impls] = NULL;
        return fail_at(L, key, "%s names '%s', which is not in impls%s", keypath,
                       show(shown, sizeof shown, name, len),
                       did_you_mean(near, sizeof near, name, len, names));
    }
    for (int j = 0; j < s->n_expect; j++)
        if (strcmp(s->expect[j].impl, name) == 0)
            return fail_at(L, key, "duplicate key '%s' in %s (first at %zu:%zu)", name,
                           keypath, first[j]->start_mark.line + 1,
                           first[j]->start_mark.column + 1);
    if (s->n_expect == SCN_MAX_IMPLS + 1)
        return fail_at(L, key, "too many entries in %s", keypath);

    snprintf(entry, sizeof entry, "%s.%s", keypath, name);
    verdict_set v[2]; /* unfenced, fenced */
    if (expect_verdicts(L, val, entry, list, v) != 0)
        return -1;
    memcpy(s->expect[s->n_expect].impl, name, len + 1);
    s->expect[s->n_expect].verdict = v[0];
    s->expect[s->n_expect].verdict_fenced = v[1];
    first[s->n_expect++] = key;
    return 0;
}

int load_expect(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    const yaml_node_t *first[SCN_MAX_IMPLS + 1];
    char list[128];
    int rc = 0;

    verdict_list(list, sizeof list);
    if (value->type != YAML_MAPPING_NODE)
        return wrong_type(L, value, keypath,
                          "a mapping from implementation name (or \"*\") to verdict");
    for (const yaml_node_pair_t *p = value->data.mapping.pairs.start;
         p < value->data.mapping.pairs.top; p++)
        if (load_expect_entry(L, node_at(L, p->key), node_at(L, p->value), keypath, list,
                              first) != 0)
            rc = -1; /* the other entries are still checked */
    return rc;
}
