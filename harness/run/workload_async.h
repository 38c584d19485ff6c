/*
 * workload_async.h - the workloads of workload.h for a client group: the
 * same unit of work (the counter's read, business time, write; the stock
 * store's GET, business, SET, INCR, or the fenced scripts), with the
 * business time a timer and the stock store reached without blocking, on
 * the group's event loop. The reentrant workload runs one process per
 * client only (the loader says so).
 */
#ifndef LOCKLAB_WORKLOAD_ASYNC_H
#define LOCKLAB_WORKLOAD_ASYNC_H

#include "evloop.h"
#include "lock.h"
#include "workload.h"

struct workload_async;

typedef void (*workload_done_fn)(void *arg, enum workload_step ws, const struct lab_err *err);

/* Open the resource on loop: 0 and opened(arg, rc, err) later, or -1 with
 * err filled now. */
int workload_async_open(struct workload_async **out, const struct scenario *s, bool fenced,
                        const struct workload_target *t, volatile int64_t *counter,
                        struct evloop *loop, lock_opened_fn opened, void *arg,
                        struct lab_err *err);

/* One unit of work with the grant's token (workload_step); done(arg, ...)
 * from the loop when it is over. */
void workload_async_step(struct workload_async *w, int64_t token, workload_done_fn done,
                         void *arg);

/* An optimistic design's unit (LOCK_CAP_OPTIMISTIC, as workload_business):
 * the business time on the stock its acquire read, then done(arg, DONE),
 * or SOLD_OUT at once (from the loop) when there was none. */
void workload_async_business(struct workload_async *w, int64_t stock, workload_done_fn done,
                             void *arg);

/* What the last unit did to the resource (workload.h's workload_trace).
 * No design raises lock_env.lost in a client group (lock.on_disconnect:
 * abort runs one process per client), so notice_ns stays 0 here. */
const struct workload_trace *workload_async_traced(const struct workload_async *w);

void workload_async_close(struct workload_async *w);

#endif
