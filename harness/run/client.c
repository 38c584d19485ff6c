/*
 * client.c - what runs inside one forked client process (see region.h).
 *
 * The client opens its own connections through the design's open hook,
 * reports ready, sleeps at the start barrier, and then loops: acquire, mark
 * entry for the oracle, do the workload (and the nested acquires of the
 * reentrant workload), mark exit, release, log the interval. Everything it
 * measures is written in place into its slot of the shared region as it
 * goes, so a crash loses nothing already measured. The interval in
 * progress carries a phase, so that the parent can close it exactly if the
 * client dies in the middle (runner.c, close_interval).
 *
 * SIGINT, SIGTERM and SIGUSR1 only set the stop flag: the client finishes
 * the operation it is in and exits; the parent kills it after a grace
 * period if it does not.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "adapter.h"
#include "arrival.h"
#include "backend.h"
#include "failpoint.h"
#include "client.h"
#include "client_cs.h"
#include "cpu.h"
#include "faults.h"
#include "net.h"

static volatile int *client_stop; /* the region's stop flag */
static volatile int client_lost;  /* lock_env.lost: the design says its lock may be lost */

static void client_on_signal(int sig)
{
    (void)sig;
    if (client_stop)
        *client_stop = 1;
}

/* Reentrant workload: take the lock again, s->depth times, inside the
 * critical section. Returns how many nested holds were granted; a nested
 * acquire that times out is the "blocked" of a non-reentrant design. */
static int nested_acquire(struct shared_head *h, const struct scenario *s,
                          const struct lock_ops *ops, struct lock_client *lc, const char *key, struct client_slot *sl,
                          struct lab_err *err)
{
    int held = 0;
    for (int d = 0; d < s->depth; d++) {
        enum lock_status st = ops->acquire(lc, key, s->wait_ns, err);
        if (st == LOCK_GRANTED) {
            sl->nested_acquired++;
            held++;
            continue;
        }
        if (st == LOCK_TIMEOUT)
            sl->nested_timeouts++;
        else
            client_lock_error(h, sl, &sl->errors, err);
        break;
    }
    return held;
}

/* Give back the nested holds, innermost first. */
static void nested_release(struct shared_head *h, const struct lock_ops *ops,
                           struct lock_client *lc, const char *key, struct client_slot *sl,
                           int held, struct lab_err *err)
{
    for (; held > 0; held--) {
        enum release_status rs = ops->release(lc, key, err);
        if (rs == RELEASE_OK || rs == RELEASE_UNCHECKED) {
            sl->released++;
            sl->released_unchecked += rs == RELEASE_UNCHECKED;
        } else if (rs == RELEASE_NOT_OWNER)
            sl->release_not_owner++;
        else if (rs == RELEASE_ERROR && !client_stop_cut(h, err))
            client_lock_error(h, sl, &sl->release_errors, err);
    }
}

static void client_loop(const struct scenario *s, const struct lock_ops *ops,
                        struct lock_client *lc, struct workload_client *wl, struct region *rg,
                        int idx)
{
    struct shared_head *h = rg->head;
    struct client_slot *sl = &rg->slots[idx];
    struct lab_err err = {0};
    char key[160];
    struct client_cs cs;
    client_cs_init(&cs, rg, ops, idx, scenario_key_of(s, idx, key, sizeof key));
    int64_t deadline = lab_now_ns() + s->max_duration_ns;
    const struct failpoint *fp_grant = failpoint_find(ops->name, "after-grant");
    const struct failpoint *fp_release = failpoint_find(ops->name, "before-release");
    /* open loop: the acquire's latency counts from its intended start */
    struct arrival arr;
    arrival_init(&arr, s, idx, lab_now_ns());

    for (int64_t op = 0; s->ops_per_client == 0 || op < s->ops_per_client; op++) {
        if (h->stop || lab_now_ns() >= deadline)
            break;
        int64_t t_wait = arrival_wait(&arr, deadline, &h->stop, &sl->arrivals, &sl->late_starts);
        if (t_wait == 0)
            break;
        __atomic_store_n(&client_lost, 0, __ATOMIC_SEQ_CST); /* raised for this grant only */
        enum lock_status st = ops->acquire(lc, key, s->wait_ns, &err);
        int64_t t_enter = lab_now_ns();
        if (st == LOCK_TIMEOUT) {
            client_lock_timeout(h, sl, t_wait);
            continue;
        }
        if (st == LOCK_ERROR) {
            client_lock_error(h, sl, &sl->errors, &err);
            lab_sleep_ns(s->retry_interval_ns, &h->stop); /* do not spin on a dead backend */
            continue;
        }
        client_cs_enter(&cs, t_wait, t_enter);
        failpoint_hit(fp_grant, &h->stop);
        int nested =
            s->workload == WORKLOAD_REENTRANT ? nested_acquire(h, s, ops, lc, key, sl, &err) : 0;
        /* an optimistic design (lock.h): the unit is sold by its release
         * (the conditional write), the business decides on the stock its
         * acquire read, and a conflict is retried without counting as an
         * operation */
        enum workload_step ws = cs.optimistic ? workload_business(wl, sl->stats.read_stock)
                                              : workload_step(wl, sl->stats.fence_token, &err);
        nested_release(h, ops, lc, key, sl, nested, &err);
        /* the outer frame works on after its nested calls returned, as
         * recursive code does: a design whose inner release gave the lock
         * away shows it here, for a business time, not for a few
         * microseconds between two releases */
        if (nested > 0)
            lab_sleep_ns(s->business_ns, &h->stop);
        client_cs_exit(&cs, ws, workload_traced(wl), &err);
        failpoint_hit(fp_release, &h->stop);
        enum release_status rs = ops->release(lc, key, &err);
        op += client_cs_released(&cs, ws, rs, &err);
        if (ws == WORKLOAD_SOLD_OUT)
            break;
        lab_sleep_ns(s->think_ns, &h->stop); /* outside the lock: others get their turn */
    }
}

/* This client's side of the fault engine: a failpoint armed from the
 * scenario's timeline fires through here. */
static struct {
    struct region *rg;
    const struct scenario *s;
    int idx;
} fault_ctx;

static void on_failpoint(const struct failpoint *fp, void *ctx)
{
    (void)ctx;
    faults_at_failpoint(fault_ctx.rg, fault_ctx.s, fault_ctx.idx, fp, false);
}

_Noreturn void client_main(const struct scenario *s, const struct lock_ops *ops, const struct run_env *env,
                 struct region *rg, int idx, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent || net_enter_client(idx) != 0)
        _exit(3); /* (a client on a host runs in its namespace: harness/net/) */
    setpgid(0, 0); /* a group of its own: faults hit an adapter's child with it */
    struct shared_head *h = rg->head;
    struct client_slot *sl = &rg->slots[idx];
    client_stop = &h->stop;
    struct sigaction sa = {.sa_handler = client_on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    fault_ctx.rg = rg;
    fault_ctx.s = s;
    fault_ctx.idx = idx;
    failpoint_set_hook(on_failpoint, NULL);

    hist_init(&sl->acquire);
    hist_init(&sl->hold);
    hist_init(&sl->release);

    bool fenced = workload_fenced(s, ops->caps);
    struct lock_env le = {
        .servers = &env->servers,
        .ttl_ns = s->ttl_ns,
        .options = scenario_options(s, ops),
        .retry_interval_ns = s->retry_interval_ns,
        .retry_backoff = s->retry == RETRY_BACKOFF,
        .client_id = idx,
        .clients = s->clients,
        .stop = &h->stop,
        .stats = &sl->stats,
        .fencing = fenced,
        .lost = &client_lost,
        .log_dir = env->log_dir[0] ? env->log_dir : NULL,
    };
    struct lab_err err = {0};
    struct lock_client *lc = NULL;
    struct workload_client *wl = NULL;
    int opened = ops->open(&lc, &le, &err);
    if (opened == 0 && adapter_is(ops)) {
        /* an adapter's capabilities are known only now, from its `ready` */
        sl->child_pid = adapter_pid(lc);
        sl->adapter_caps = adapter_caps(lc);
        fenced = workload_fenced(s, ops->caps | sl->adapter_caps);
    }
    if (opened != 0 ||
        workload_open(&wl, s, fenced, &env->stock, &rg->keys[s->per_client_keys ? idx : 0].counter,
                      &h->stop, &client_lost, &err) != 0) {
        client_slot_error(sl, &err);
        if (lc)
            ops->close(lc);
        atomic_store(&sl->state, SLOT_FAILED);
        atomic_fetch_add(&h->ready, 1);
        _exit(2);
    }
    atomic_store(&sl->state, SLOT_READY);
    atomic_fetch_add(&h->ready, 1);
    while (atomic_load(&h->go) == 0 && !h->stop)
        region_futex_wait(&h->go, 0, 100 * 1000000);
    atomic_store(&sl->state, SLOT_RUNNING);
    bool ran = atomic_load(&h->go) > 0;
    /* the run's CPU is what was used from here (cpu.h): the start-up
     * above, an adapter's interpreter loading, is not the lock's */
    if (ran) {
        cpu_window_mark(&sl->cpu, sl->child_pid, false);
        client_loop(s, ops, lc, wl, rg, idx);
    }
    sl->end_ns = lab_now_ns();
    if (ran) /* an adapter child that died and was reaped is 0 here (and in RUSAGE_CHILDREN) */
        cpu_window_mark(&sl->cpu, adapter_is(ops) ? adapter_pid(lc) : 0, true);
    workload_close(wl);
    ops->close(lc);
    atomic_store(&sl->state, SLOT_DONE);
    _exit(0);
}
