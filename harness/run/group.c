/*
 * group.c - one forked process running a group of logical clients on one
 * event loop (run: clients_per_process; see group.h).
 *
 * Each logical client is what client.c's process is, as a state machine:
 * acquire (the design's asynchronous hooks, lock_ops.async), mark entry,
 * the workload's unit (workload_async.c: business time is a timer), mark
 * exit, release, think (a timer), again. Every mark, histogram and counter
 * goes to the client's own slot of the shared region through the same
 * bookkeeping the blocking client uses (client_cs.c), so the oracle, the
 * parent's close_interval and the verdicts cannot tell the two apart. Only
 * the process is shared: a fault that stops or kills it hits every client
 * of the group, and its CPU time is counted once, in the first client's
 * slot.
 *
 * Opening is asynchronous too (thousands of connections come up at once);
 * a client that cannot open is marked failed and the others run, as one
 * process per client would. A stop (the flag in the region, SIGUSR1 to
 * wake the loop) makes every timer due, as lab_sleep_ns's stop flag cuts a
 * sleep short: waiting acquires end, business and think times end, and
 * each client finishes the operation it is in.
 */
#include "group.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "arrival.h"
#include "client_cs.h"
#include "cpu.h"
#include "evloop.h"
#include "failpoint.h"
#include "faults.h"
#include "net.h"
#include "workload_async.h"

#define GROUP_OPEN_NS (25LL * 1000000000) /* the parent waits 30 s for ready */
#define GROUP_TICK_NS (50LL * 1000000)    /* look at the stop flag at least this often */

struct group;

struct gclient {
    struct group *g;
    int idx;                  /* the client's index in the run */
    struct client_cs cs;      /* its slot, key and oracle */
    struct lock_env le;       /* what its design sees (stats: its slot's) */
    struct lock_client *lc;
    struct workload_async *wl;
    char key[160];
    int64_t op;               /* operations done (as client.c's loop counts them) */
    int64_t deadline;         /* max_duration from the start barrier */
    int64_t t_wait;           /* when the acquire under way started */
    enum workload_step ws;    /* the unit's outcome, until the release is done */
    struct ev_timer timer;    /* think time, the pause after an error, or the next arrival */
    struct arrival arr;       /* open loop: when the next acquire is meant to start */
    int64_t intended;         /* ... the one the timer waits for (due) */
    bool due;
    bool lock_opening, wl_opening, failed, finished;
};

struct group {
    const struct scenario *s;
    const struct lock_ops *ops;
    struct region *rg;
    struct shared_head *h;
    struct evloop *L;
    struct gclient *c;
    int n;                    /* clients in the group */
    int opening;              /* clients still opening */
    int running;              /* clients whose loop is not over */
    const struct failpoint *fp_grant, *fp_release;
};

static volatile int *group_stop; /* the region's stop flag */
static int group_failpoint_idx;  /* the client at a failpoint, for the fault record */
static struct group *the_group;

static void group_on_signal(int sig)
{
    (void)sig;
    if (group_stop)
        *group_stop = 1;
}

static void on_failpoint(const struct failpoint *fp, void *ctx)
{
    (void)ctx;
    faults_at_failpoint(the_group->rg, the_group->s, group_failpoint_idx, fp);
}

static void failpoint_at(struct gclient *c, const struct failpoint *fp)
{
    group_failpoint_idx = c->idx;
    failpoint_hit(fp, &c->g->h->stop); /* a pause or a kill here hits the whole group */
}

/* ------------------------------------------------------------ the loop */

static void next_op(struct gclient *c);

static void finish(struct gclient *c)
{
    c->finished = true;
    c->cs.sl->end_ns = lab_now_ns();
    c->g->running--;
}

static void on_timer(struct ev_timer *t)
{
    next_op((struct gclient *)((char *)t - offsetof(struct gclient, timer)));
}

static void pause_then_next(struct gclient *c, int64_t ns)
{
    if (ns <= 0 || c->g->h->stop)
        next_op(c);
    else
        evloop_timer_at(c->g->L, &c->timer, lab_now_ns() + ns);
}

static void on_released(void *arg, enum release_status rs, const struct lab_err *err)
{
    struct gclient *c = arg;
    c->op += client_cs_released(&c->cs, c->ws, rs, err) + 1;
    if (c->ws == WORKLOAD_SOLD_OUT)
        finish(c);
    else
        pause_then_next(c, c->g->s->think_ns); /* outside the lock: others get their turn */
}

static void on_worked(void *arg, enum workload_step ws, const struct lab_err *err)
{
    struct gclient *c = arg;
    c->ws = ws;
    client_cs_exit(&c->cs, ws, err);
    failpoint_at(c, c->g->fp_release);
    c->g->ops->async->release(c->lc, c->key, on_released, c);
}

static void on_acquired(void *arg, enum lock_status st, const struct lab_err *err)
{
    struct gclient *c = arg;
    struct group *g = c->g;
    int64_t t_enter = lab_now_ns();
    struct client_slot *sl = c->cs.sl;
    if (st == LOCK_TIMEOUT) {
        if (!g->h->stop)
            sl->timeouts++;
        c->op++;
        next_op(c);
        return;
    }
    if (st == LOCK_ERROR) {
        client_lock_error(g->h, sl, &sl->errors, err);
        c->op++;
        pause_then_next(c, g->s->retry_interval_ns); /* do not spin on a dead backend */
        return;
    }
    client_cs_enter(&c->cs, c->t_wait, t_enter);
    failpoint_at(c, g->fp_grant);
    workload_async_step(c->wl, sl->stats.fence_token, on_worked, c);
}

static void next_op(struct gclient *c)
{
    struct group *g = c->g;
    const struct scenario *s = g->s;
    if ((s->ops_per_client && c->op >= s->ops_per_client) || g->h->stop ||
        lab_now_ns() >= c->deadline) {
        finish(c);
        return;
    }
    int64_t now = lab_now_ns();
    c->t_wait = now;
    if (c->arr.open) { /* open loop: wait for the intended start, count from it */
        if (!c->due) {
            c->intended = arrival_next(&c->arr);
            if (c->intended >= c->deadline) {
                finish(c);
                return;
            }
            c->due = true;
            if (c->intended > now) {
                evloop_timer_at(g->L, &c->timer, c->intended);
                return;
            }
        }
        c->due = false;
        c->cs.sl->arrivals++;
        c->cs.sl->late_starts += arrival_took(&c->arr, c->intended, now);
        c->t_wait = c->intended;
    }
    g->ops->async->acquire(c->lc, c->key, s->wait_ns, on_acquired, c);
}

/* ------------------------------------------------------------ opening */

static void opened_one(struct gclient *c, bool *pending, int rc, const struct lab_err *err)
{
    if (!*pending)
        return;
    *pending = false;
    if (rc != 0 && !c->failed) {
        c->failed = true;
        client_slot_error(c->cs.sl, err);
    }
    if (!c->lock_opening && !c->wl_opening) {
        c->g->opening--;
        atomic_store(&c->cs.sl->state, c->failed ? SLOT_FAILED : SLOT_READY);
        atomic_fetch_add(&c->g->h->ready, 1);
    }
}

static void on_lock_opened(void *arg, int rc, const struct lab_err *err)
{
    struct gclient *c = arg;
    opened_one(c, &c->lock_opening, rc, err);
}

static void on_wl_opened(void *arg, int rc, const struct lab_err *err)
{
    struct gclient *c = arg;
    opened_one(c, &c->wl_opening, rc, err);
}

static void open_client(struct group *g, const struct run_env *env, struct gclient *c)
{
    const struct scenario *s = g->s;
    struct client_slot *sl = c->cs.sl;
    hist_init_zeroed(&sl->acquire); /* the region is fresh: touch no bucket */
    hist_init_zeroed(&sl->hold);
    hist_init_zeroed(&sl->release);
    bool fenced = workload_fenced(s, g->ops->caps);
    c->le = (struct lock_env){
        .servers = &env->servers,
        .ttl_ns = s->ttl_ns,
        .options = scenario_options(s, g->ops),
        .retry_interval_ns = s->retry_interval_ns,
        .retry_backoff = s->retry == RETRY_BACKOFF,
        .client_id = c->idx,
        .clients = s->clients,
        .stop = &g->h->stop,
        .stats = &sl->stats,
        .fencing = fenced,
        .log_dir = env->log_dir[0] ? env->log_dir : NULL,
    };
    evloop_timer_init(&c->timer, on_timer);
    c->lock_opening = c->wl_opening = true;
    g->opening++;
    struct lab_err err = {0};
    if (g->ops->async->open(&c->lc, &c->le, g->L, on_lock_opened, c, &err) != 0)
        on_lock_opened(c, -1, &err);
    volatile int64_t *counter = &g->rg->keys[s->per_client_keys ? c->idx : 0].counter;
    if (workload_async_open(&c->wl, s, fenced, &env->stock, counter, g->L, on_wl_opened, c,
                            &err) != 0)
        on_wl_opened(c, -1, &err);
}

/* ------------------------------------------------------------ the process */

static void group_close(struct group *g)
{
    for (int i = 0; i < g->n; i++) {
        struct gclient *c = &g->c[i];
        workload_async_close(c->wl);
        if (c->lc)
            g->ops->async->close(c->lc);
        if (!c->failed)
            atomic_store(&c->cs.sl->state, SLOT_DONE);
    }
}

_Noreturn void group_main(const struct scenario *s, const struct lock_ops *ops,
                          const struct run_env *env, struct region *rg, int first, int n,
                          pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(3);
    setpgid(0, 0); /* a group of its own, as a client process has */
    struct shared_head *h = rg->head;
    group_stop = &h->stop;
    struct sigaction sa = {.sa_handler = group_on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a store that went away: an error reply, not a death */

    struct lab_err err = {0};
    struct group g = {.s = s, .ops = ops, .rg = rg, .h = h, .n = n,
                      .fp_grant = failpoint_find(ops->name, "after-grant"),
                      .fp_release = failpoint_find(ops->name, "before-release")};
    the_group = &g;
    failpoint_set_hook(on_failpoint, NULL);
    g.L = evloop_new(&err);
    g.c = calloc((size_t)n, sizeof *g.c);
    if (!g.L || !g.c) {
        for (int i = 0; i < n; i++) {
            client_slot_error(&rg->slots[first + i], &err);
            atomic_store(&rg->slots[first + i].state, SLOT_FAILED);
            atomic_fetch_add(&h->ready, 1);
        }
        _exit(2);
    }
    for (int i = 0; i < n; i++) {
        struct gclient *c = &g.c[i];
        c->g = &g;
        c->idx = first + i;
        client_cs_init(&c->cs, rg, ops, c->idx, scenario_key_of(s, c->idx, c->key, sizeof c->key));
        open_client(&g, env, c);
    }
    int64_t open_deadline = lab_now_ns() + GROUP_OPEN_NS;
    while (g.opening > 0 && !h->stop && lab_now_ns() < open_deadline)
        evloop_run_once(g.L, GROUP_TICK_NS);
    for (int i = 0; i < n && g.opening > 0; i++) { /* never answered: failed */
        struct gclient *c = &g.c[i];
        struct lab_err late = {0};
        lab_err_set(&late, ETIMEDOUT, "did not connect within %lld s",
                    (long long)(GROUP_OPEN_NS / 1000000000));
        opened_one(c, &c->lock_opening, -1, &late);
        opened_one(c, &c->wl_opening, -1, &late);
    }

    while (atomic_load(&h->go) == 0 && !h->stop)
        region_futex_wait(&h->go, 0, 100 * 1000000);
    bool ran = atomic_load(&h->go) > 0;
    struct client_slot *first_sl = &rg->slots[first];
    if (ran) {
        cpu_window_mark(&first_sl->cpu, 0, false); /* the process's CPU: counted once */
        int64_t deadline = lab_now_ns() + s->max_duration_ns;
        for (int i = 0; i < n; i++) {
            struct gclient *c = &g.c[i];
            if (c->failed)
                continue;
            atomic_store(&c->cs.sl->state, SLOT_RUNNING);
            c->deadline = deadline;
            arrival_init(&c->arr, s, c->idx, lab_now_ns());
            g.running++;
        }
        for (int i = 0; i < n; i++)
            if (!g.c[i].failed)
                next_op(&g.c[i]);
        while (g.running > 0) {
            if (h->stop)
                evloop_timers_due_now(g.L); /* sleeps end, as lab_sleep_ns's do */
            if (evloop_run_once(g.L, GROUP_TICK_NS) < 0)
                break;
        }
    }
    for (int i = 0; i < n; i++)
        if (!g.c[i].failed && !g.c[i].finished)
            g.c[i].cs.sl->end_ns = lab_now_ns();
    if (ran)
        cpu_window_mark(&first_sl->cpu, 0, true);
    group_close(&g);
    _exit(0);
}
