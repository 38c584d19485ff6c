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
 * parent's close_interval and the verdicts cannot tell the two apart. Its
 * CPU time is counted once, in the first client's slot.
 *
 * A fault aimed at one client hits that client alone when its design's
 * group driver shares nothing between clients (lock_async_ops.client_faults):
 * each client is an owner on the loop (evloop.h), the parent writes what it
 * asks in the client's slot (ctl: pause, run, kill) and wakes the group with
 * SIGUSR2, and the group applies it between two dispatches: a paused client
 * is held (its timers wait, its sockets leave epoll and the kernel keeps
 * what arrives, its writes wait), a continued one released, a killed one
 * held and then closed, its connections closed as a dying process's are.
 * It acknowledges in ctl_ack, which the parent waits for. Otherwise, and at
 * a failpoint, a fault hits the group's process: every client of it.
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
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

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
    struct ev_owner owner;    /* what of the loop is this client's (a fault holds it) */
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
    struct ev_io wake;        /* the read end of the pipe SIGUSR2 writes to */
};

static volatile int *group_stop; /* the region's stop flag */
static int group_wake_fd = -1;   /* the write end of the group's wake pipe */
static int group_failpoint_idx;  /* the client at a failpoint, for the fault record */
static struct group *the_group;

static void group_on_signal(int sig)
{
    (void)sig;
    if (group_stop)
        *group_stop = 1;
}

/* Wake the loop to look at its clients' ctl (safe in a signal handler). */
static void group_wake(void)
{
    int saved = errno;
    if (group_wake_fd >= 0 && write(group_wake_fd, "", 1) < 0) {
        /* the pipe is full: a wake-up is pending already */
    }
    errno = saved;
}

/* SIGUSR2: a client's ctl changed; the loop wakes to read it. */
static void group_on_ctl(int sig)
{
    (void)sig;
    group_wake();
}

/* A fault at a failpoint: for a design whose clients share nothing it
 * hits this client alone: held at once (what it goes on to send waits
 * with it), killed from the loop (not inside its own call stack); else the
 * group's process. */
static void on_failpoint(const struct failpoint *fp, void *ctx)
{
    (void)ctx;
    struct group *g = the_group;
    /* the client whose callback runs (a design's own failpoint is hit deep
     * in its driver, where no index is at hand) */
    struct ev_owner *o = evloop_owner_current(g->L);
    struct gclient *c = o ? (struct gclient *)((char *)o - offsetof(struct gclient, owner))
                          : &g->c[group_failpoint_idx - g->c[0].idx];
    faults_at_failpoint(g->rg, g->s, c->idx, fp, g->ops->async->client_faults);
    int want = atomic_load(&c->cs.sl->ctl);
    if (want == atomic_load(&c->cs.sl->ctl_ack))
        return;
    evloop_owner_hold(g->L, &c->owner);
    if (want == CLIENT_PAUSE)
        atomic_store(&c->cs.sl->ctl_ack, want);
    else
        group_wake(); /* the kill from the loop, outside this client's call stack */
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

/* ------------------------------------------------------------ one client's faults */

/* Killed by a fault: its lock and workload closed as a dying process's
 * connections are (the engine closed its critical section already). */
static void kill_one(struct gclient *c)
{
    struct group *g = c->g;
    evloop_owner_hold(g->L, &c->owner);
    evloop_timer_cancel(g->L, &c->timer);
    workload_async_close(c->wl);
    c->wl = NULL;
    if (c->lc)
        (g->ops->async->crash ? g->ops->async->crash : g->ops->async->close)(c->lc);
    c->lc = NULL;
    if (!c->finished && !c->failed && atomic_load(&c->cs.sl->state) == SLOT_RUNNING)
        finish(c);
    c->failed = true; /* nothing more of it runs, nor closes again */
}

/* Apply what the parent asked of each client whose ctl changed. */
static void apply_ctl(struct group *g)
{
    for (int i = 0; i < g->n; i++) {
        struct gclient *c = &g->c[i];
        struct client_slot *sl = c->cs.sl;
        int want = atomic_load(&sl->ctl);
        if (want == atomic_load(&sl->ctl_ack))
            continue;
        if (want == CLIENT_PAUSE)
            evloop_owner_hold(g->L, &c->owner);
        else if (want == CLIENT_RUN)
            evloop_owner_release(g->L, &c->owner);
        else if (want == CLIENT_KILL)
            kill_one(c);
        atomic_store(&sl->ctl_ack, want);
    }
}

static void on_wake(struct ev_io *io, unsigned events)
{
    (void)events;
    char buf[64];
    while (read(io->fd, buf, sizeof buf) > 0) {
    }
    apply_ctl((struct group *)((char *)io - offsetof(struct group, wake)));
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
    client_cs_exit(&c->cs, ws, workload_async_traced(c->wl), err);
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
        client_lock_timeout(g->h, sl, c->t_wait);
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
    if (c->cs.optimistic) /* (lock.h: the unit is sold by the release) */
        workload_async_business(c->wl, sl->stats.read_stock, on_worked, c);
    else
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
    if (getppid() != parent || net_enter_client(first) != 0)
        _exit(3); /* (the loader put all its clients on one host: in its namespace) */
    setpgid(0, 0); /* a group of its own, as a client process has */
    struct shared_head *h = rg->head;
    group_stop = &h->stop;
    struct sigaction sa = {.sa_handler = group_on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a store that went away: an error reply, not a death */
    int wake[2] = {-1, -1};

    struct lab_err err = {0};
    struct group g = {.s = s, .ops = ops, .rg = rg, .h = h, .n = n,
                      .fp_grant = failpoint_find(ops->name, "after-grant"),
                      .fp_release = failpoint_find(ops->name, "before-release")};
    the_group = &g;
    failpoint_set_hook(on_failpoint, NULL);
    g.L = evloop_new(&err);
    g.c = calloc((size_t)n, sizeof *g.c);
    if (g.L && pipe2(wake, O_NONBLOCK | O_CLOEXEC) == 0) {
        g.wake = (struct ev_io){.fd = wake[0], .ready = on_wake};
        group_wake_fd = wake[1];
        struct sigaction sc = {.sa_handler = group_on_ctl, .sa_flags = SA_RESTART};
        sigemptyset(&sc.sa_mask);
        sigaction(SIGUSR2, &sc, NULL);
        if (evloop_io(g.L, &g.wake, EV_READ) != 0)
            lab_err_set(&err, errno, "event loop: %s", strerror(errno));
    } else if (g.L) {
        lab_err_set(&err, errno, "wake pipe: %s", strerror(errno));
    }
    if (!g.L || !g.c || group_wake_fd < 0) {
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
        struct ev_owner *prev = evloop_owner_enter(g.L, &c->owner);
        open_client(&g, env, c);
        evloop_owner_enter(g.L, prev);
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
        for (int i = 0; i < n; i++) {
            if (g.c[i].failed)
                continue;
            struct ev_owner *prev = evloop_owner_enter(g.L, &g.c[i].owner);
            next_op(&g.c[i]);
            evloop_owner_enter(g.L, prev);
        }
        while (g.running > 0) {
            if (h->stop)
                evloop_timers_due_now(g.L); /* sleeps end, as lab_sleep_ns's do */
            if (evloop_run_once(g.L, GROUP_TICK_NS) < 0)
                break;
        }
    }
    for (int i = 0; i < n; i++) /* held at the end: let them finish as SIGCONT would */
        if (g.c[i].owner.held && atomic_load(&g.c[i].cs.sl->ctl) != CLIENT_KILL)
            evloop_owner_release(g.L, &g.c[i].owner);
    for (int i = 0; i < n; i++)
        if (!g.c[i].failed && !g.c[i].finished)
            g.c[i].cs.sl->end_ns = lab_now_ns();
    if (ran)
        cpu_window_mark(&first_sl->cpu, 0, true);
    group_close(&g);
    _exit(0);
}
