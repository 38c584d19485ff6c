/*
 * plan.c - expand a scenario's sweeps into run steps (plan.h).
 *
 * Kept apart from the loader, which only reads what the file says, and
 * from the command that runs the steps, which only walks the list: the
 * order of the steps and what a step changes are decided here, once.
 */
#include "plan.h"

int plan_steps(const struct scenario *s, struct plan_step out[PLAN_MAX_STEPS])
{
    int n = 0;

    for (int k = 0; k < s->n_key_modes; k++)
        for (int c = 0; c < s->n_client_steps; c++)
            for (int f = 0; f < s->n_fence_modes; f++)
                out[n++] = (struct plan_step){ .clients = s->client_steps[c],
                                               .per_client_keys = s->key_modes[k],
                                               .fencing = s->fence_modes[f] };
    if (n == 0) /* a scenario built in code, with no lists: its own values */
        out[n++] = (struct plan_step){ .clients = s->clients,
                                       .per_client_keys = s->per_client_keys,
                                       .fencing = s->fencing };
    return n;
}

int plan_runs(const struct scenario *s)
{
    struct plan_step st[PLAN_MAX_STEPS];
    return s->n_impls * plan_steps(s, st);
}

bool plan_is_sweep(const struct scenario *s)
{
    return s->n_client_steps > 1 || s->n_key_modes > 1;
}

void plan_apply(const struct scenario *s, const struct plan_step *st, struct scenario *out)
{
    *out = *s;
    out->clients = st->clients;
    out->per_client_keys = st->per_client_keys;
    out->fencing = st->fencing;
}
