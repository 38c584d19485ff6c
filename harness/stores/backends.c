/*
 * backends.c - plan, start and stop the servers an invocation needs (see
 * backends.h), by asking each store's table (the stock store too: the
 * table that has start_stock).
 */
#include "backends.h"

#include <errno.h>
#include <string.h>

void backends_init(struct backends *b)
{
    memset(b, 0, sizeof *b);
}

void backends_plan_one(struct backends *b, const struct scenario *s, const struct lock_ops *ops)
{
    b->need_stock |= s->workload == WORKLOAD_STOCK;
    const struct backend_ops *be = backend_of(ops);
    if (!be)
        return;
    b->used[backend_index(be)] = true;
    be->plan(s, ops);
}

void backends_plan(struct backends *b, const struct scenario *s)
{
    for (int j = 0; j < s->n_impls; j++)
        backends_plan_one(b, s, scenario_impl(s, s->impls[j]));
}

int backends_start(struct backends *b, const volatile int *stop, struct lab_err *err)
{
    for (int i = 0; i < backend_count; i++)
        if (b->used[i] && backend_registry[i]->start(b->external[i], stop, err) != 0) {
            backends_stop(b);
            return -1;
        }
    if (b->need_stock) {
        const struct backend_ops *be = backend_stock();
        if (!be) {
            lab_err_set(err, ENOTSUP, "no store in the registry serves the stock workload");
            backends_stop(b);
            return -1;
        }
        if (be->start_stock(&b->stock_srv, err) != 0) {
            backends_stop(b);
            return -1;
        }
        b->have_stock = true;
    }
    return 0;
}

void backends_stop(struct backends *b)
{
    for (int i = backend_count - 1; i >= 0; i--)
        if (b->used[i])
            backend_registry[i]->stop();
    servers_stop(&b->stock_srv);
    b->have_stock = false;
}
