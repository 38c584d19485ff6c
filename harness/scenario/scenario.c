/*
 * scenario.c - what the rest of the program asks of a loaded scenario
 * (scenario.h): a design by name, a design's own settings, the verdict
 * expected of an implementation, the name of a client's lock key.
 *
 * These read the struct only; reading a file is the loader's
 * (harness/loader/), which sits above everything a scenario names.
 */
#include "scenario.h"

#include <stdio.h>
#include <string.h>

#include "adapter.h"
#include "lock.h"

size_t scenario_blob_offset(size_t (*size_of)(int), int i)
{
    size_t off = 0;

    for (int j = 0; j < i; j++)
        off += (size_of(j) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) *
               _Alignof(max_align_t);
    return off;
}

static size_t design_size(int i)
{
    return lock_registry[i]->options_size;
}

size_t options_offset(int i)
{
    return scenario_blob_offset(design_size, i);
}

int design_index(const struct lock_ops *ops)
{
    for (int i = 0; i < lock_registry_count; i++)
        if (lock_registry[i] == ops)
            return i;
    return -1;
}

const void *scenario_options(const struct scenario *s, const struct lock_ops *ops)
{
    int i = design_index(ops);

    if (i < 0 && adapter_is(ops))
        for (int a = 0; a < s->n_adapters; a++)
            if (strcmp(s->adapters[a].spec.name, ops->name) == 0)
                return &s->adapters[a].spec;

    if (i < 0 || !ops->options || options_offset(i + 1) > sizeof s->options)
        return NULL;
    return s->options + options_offset(i);
}

const struct lock_ops *scenario_impl(const struct scenario *s, const char *name)
{
    const struct lock_ops *ops = lock_find(name);

    for (int i = 0; !ops && i < s->n_adapters; i++)
        if (strcmp(s->adapters[i].spec.name, name) == 0)
            ops = &s->adapters[i].ops;
    return ops;
}

verdict_set scenario_expected(const struct scenario *s, const char *impl)
{
    verdict_set star = 0;

    for (int i = 0; i < s->n_expect; i++) {
        verdict_set v = s->fencing ? s->expect[i].verdict_fenced : s->expect[i].verdict;
        if (strcmp(s->expect[i].impl, impl) == 0)
            return v;
        if (strcmp(s->expect[i].impl, "*") == 0)
            star = v;
    }
    return star;
}

int scenario_key_of(const struct scenario *s, int idx, char *name, size_t n)
{
    if (!s->per_client_keys) {
        snprintf(name, n, "%s", s->lock_key);
        return 0;
    }
    snprintf(name, n, "%s-%d", s->lock_key, idx);
    return idx;
}

bool scenario_has_fault(const struct scenario *s, enum fault_action a)
{
    for (int i = 0; i < s->n_faults; i++)
        if (s->faults[i].action == a)
            return true;
    return false;
}
