/*
 * load_sweep.c - the keys that take one value or a list to sweep over:
 * clients, lock.keys and workload.fencing.
 *
 * A list becomes the steps of the scenario (client_steps, key_modes,
 * fence_modes): each value is checked by the same row a single value is,
 * and a value listed twice is an error. The run's own value (clients,
 * per_client_keys, fencing) is the first step; the plan (plan.h) makes
 * one run step of each combination.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <yaml.h>

#include "opt_engine.h"
#include "load_sections.h"

/* A key that takes one value or a list of distinct values to sweep over
 * (clients, lock.keys). opt reads one value into the field of the run's
 * value (an int); the list goes to an int array and its count. */
struct sweep_key {
    const struct opt *opt;   /* reads one value */
    size_t steps_off;        /* offsetof(struct scenario, the int array of steps) */
    size_t n_off;            /* offsetof(struct scenario, the int count of them) */
    size_t max_steps;        /* the array's length */
    const char *one_or_list; /* what the value may be, for messages */
    const char *wrong_type;  /* ... when it is neither a scalar nor a list */
    const char *one;         /* what one item of the list may be */
    const char *steps;       /* what the list holds ("client counts") */
    const char *count;       /* how many it may hold ("1 to 16") */
};

static int load_sweep(struct opt_loader *L, const struct sweep_key *k, const yaml_node_t *value,
                      const char *keypath)
{
    char *base = (char *)L->s;
    int *cur = (int *)(base + k->opt->off);
    int *steps = (int *)(base + k->steps_off);
    int *n_steps = (int *)(base + k->n_off);
    char itempath[96];

    if (value->type == YAML_SCALAR_NODE) {
        if (want_scalar(L, value, keypath, k->one_or_list) != 0 ||
            set_value(L, k->opt, base, keypath, scalar_text(value), value->data.scalar.length,
                      value) != 0)
            return -1;
        steps[0] = *cur;
        *n_steps = 1;
        return 0;
    }
    if (value->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, value, keypath, k->wrong_type);
    const yaml_node_item_t *items = value->data.sequence.items.start;
    size_t n = (size_t)(value->data.sequence.items.top - items);
    if (n == 0 || n > k->max_steps)
        return fail_at(L, value, "%s lists %zu %s (expected %s)", keypath, n, k->steps,
                       k->count);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *item = node_at(L, items[i]);
        snprintf(itempath, sizeof itempath, "%s[%zu]", keypath, i);
        if (want_scalar(L, item, itempath, k->one) != 0 ||
            set_value(L, k->opt, base, itempath, scalar_text(item), item->data.scalar.length,
                      item) != 0) {
            rc = -1; /* the next items are still checked */
            continue;
        }
        bool twice = false;
        for (int j = 0; j < *n_steps && !twice; j++)
            twice = steps[j] == *cur;
        if (twice) {
            rc = k->opt->choices
                     ? fail_at(L, item, "%s lists %s twice", keypath, k->opt->choices[*cur])
                     : fail_at(L, item, "%s lists %d twice", keypath, *cur);
            continue;
        }
        steps[(*n_steps)++] = *cur;
    }
    if (*n_steps > 0)
        *cur = steps[0];
    return rc;
}

#define STR_(x) #x
#define STR(x) STR_(x)

#define FIELD(f) OPT_FIELD(struct scenario, f)

/* clients: one count, or a sequence of counts to sweep. */
static const struct opt clients_opt = {
    .name = "clients", .type = OPT_INT, FIELD(clients), .min = 1, .max = SCN_MAX_CLIENTS,
    .help = "number of client processes" };
static const struct sweep_key clients_sweep = {
    .opt = &clients_opt, .steps_off = offsetof(struct scenario, client_steps),
    .n_off = offsetof(struct scenario, n_client_steps), .max_steps = SCN_MAX_STEPS,
    .one_or_list = "an integer or a list of integers",
    .wrong_type = "an integer or a list of integers such as [1, 2, 4]", .one = "an integer",
    .steps = "client counts", .count = "1 to " STR(SCN_MAX_STEPS) };

int load_clients(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    return load_sweep(L, &clients_sweep, value, keypath);
}

/* workload.fencing: false | true, or a sequence of both. */
static const struct opt fencing_opt = {
    .name = "fencing", .type = OPT_CHOICE, FIELD(fencing), .choices = bool_words,
    .help = "fencing" };
static const struct sweep_key fencing_sweep = {
    .opt = &fencing_opt, .steps_off = offsetof(struct scenario, fence_modes),
    .n_off = offsetof(struct scenario, n_fence_modes), .max_steps = 2,
    .one_or_list = "true, false, or a list of them",
    .wrong_type = "true, false, or a list of them such as [false, true]",
    .one = "true or false", .steps = "fencing settings", .count = "1 or 2" };

_Static_assert(sizeof(((struct scenario *)0)->fencing) == sizeof(int) &&
               sizeof(((struct scenario *)0)->fence_modes) == 2 * sizeof(int),
               "a sweep key's value and steps are ints");

int load_fencing(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    L->fencing_node = value;
    return load_sweep(L, &fencing_sweep, value, keypath);
}

/* lock.keys: hot | per-client, or a sequence of them. */
static const char *const key_words[] = { "hot", "per-client", NULL };
static const struct opt keys_opt = {
    .name = "keys", .type = OPT_CHOICE, FIELD(per_client_keys), .choices = key_words,
    .help = "key layout" };
static const struct sweep_key keys_sweep = {
    .opt = &keys_opt, .steps_off = offsetof(struct scenario, key_modes),
    .n_off = offsetof(struct scenario, n_key_modes), .max_steps = 2,
    .one_or_list = "hot, per-client, or a list of them",
    .wrong_type = "hot, per-client, or a list of them", .one = "hot or per-client",
    .steps = "key layouts", .count = "1 or 2" };

_Static_assert(sizeof(((struct scenario *)0)->clients) == sizeof(int) &&
               sizeof(((struct scenario *)0)->per_client_keys) == sizeof(int) &&
               sizeof(((struct scenario *)0)->key_modes) == 2 * sizeof(int) &&
               sizeof(((struct scenario *)0)->client_steps) == SCN_MAX_STEPS * sizeof(int),
               "a sweep key's value and steps are ints");

int load_keys(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    L->keys_node = value;
    return load_sweep(L, &keys_sweep, value, keypath);
}
