/*
 * runner.c - fork the clients, release them together, stop them, reap
 * them, and turn their slots into a result (see runner.h).
 *
 * Everything a client measures lives in its slot of one MAP_SHARED region
 * and is written in place as it goes, so nothing measured is lost when a
 * client crashes or is killed: the parent reads the slot anyway and reports
 * the crash next to the numbers. The start barrier is a futex word in the
 * same region, so all clients leave it within one wake-up, after they have
 * connected; the cost of connecting is never part of the measurement.
 *
 * Stopping: the parent sets `stop` in the region at the duration bound or
 * when locklab gets SIGINT/SIGTERM, and sends SIGUSR1 to wake clients out
 * of sleeps. Clients finish the operation they are in and exit; one that is
 * still alive after a grace period is killed and counted as killed. What
 * runs inside a client is in client.c; the region both share, in region.h.
 */
#include "runner.h"
#include "cpu.h"
#include "fault.h"
#include "workload.h"
#include "at_stake.h"
#include "cross_check.h"
#include "verdict.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adapter.h"
#include "backend.h"
#include "client.h"
#include "group.h"
#include "faults.h"
#include "handoff_split.h"

#define READY_TIMEOUT_NS (30LL * 1000000000)
#define STOP_GRACE_NS (2LL * 1000000000)      /* after the duration bound */
#define SIGNAL_GRACE_NS (700LL * 1000000)     /* after SIGINT/SIGTERM: exit within 2 s */
#define IV_CAP_TOTAL (16LL * 1024 * 1024)     /* interval log entries, all clients */
#define IV_CAP_MIN 65536LL

/* The children of the run in progress, for runner's signal path. */
static volatile pid_t *live_pids;
static int live_n;

/* ---------------------------------------------------------------- parent */

static int region_map(struct region *rg, const struct scenario *s, const struct lock_ops *ops,
                      struct lab_err *err)
{
    int n = s->clients;
    /* an optimistic design's conflicts are retried beyond ops_per_client */
    int64_t ops_bound = ops->caps & LOCK_CAP_OPTIMISTIC ? 0 : s->ops_per_client;
    int64_t cap = ops_bound > 0 ? ops_bound : IV_CAP_TOTAL / n;
    if (cap < IV_CAP_MIN && ops_bound == 0)
        cap = IV_CAP_MIN;
    if (cap > IV_CAP_TOTAL / n && cap > IV_CAP_MIN)
        cap = IV_CAP_TOTAL / n > IV_CAP_MIN ? IV_CAP_TOTAL / n : IV_CAP_MIN;
    rg->n_keys = s->per_client_keys ? n : 1;
    size_t head = (sizeof(struct shared_head) + 63) & ~(size_t)63;
    size_t keys = ((size_t)rg->n_keys * sizeof(struct key_slot) + 63) & ~(size_t)63;
    size_t slots = ((size_t)n * sizeof(struct client_slot) + 63) & ~(size_t)63;
    size_t ivs = (size_t)n * (size_t)cap * sizeof(struct oracle_interval);
    rg->size = head + keys + slots + ivs;
    rg->base = mmap(NULL, rg->size, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (rg->base == MAP_FAILED) {
        lab_err_set(err, errno, "cannot map %zu bytes of shared memory: %s", rg->size,
                    strerror(errno));
        return -1;
    }
    rg->head = rg->base;
    rg->keys = (struct key_slot *)((char *)rg->base + head);
    rg->slots = (struct client_slot *)((char *)rg->base + head + keys);
    rg->iv = (struct oracle_interval *)((char *)rg->base + head + keys + slots);
    rg->iv_cap = cap;
    return 0;
}

/* sig to every client still running; SIGKILL to its whole process group
 * (a client and its adapter child, if it has one). */
static void signal_children(pid_t *pids, int n, int sig)
{
    for (int i = 0; i < n; i++)
        if (pids[i] > 0)
            kill(sig == SIGKILL ? -pids[i] : pids[i], sig);
}

/* Record how client i ended. */
static void note_exit(struct run_result *res, struct client_slot *sl, int i, int status,
                      bool killed_by_us)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2 && atomic_load(&sl->state) == SLOT_FAILED) {
        res->clients_failed_start++;
        if (!res->first_error[0])
            snprintf(res->first_error, sizeof res->first_error, "client %d: %s", i, sl->err);
        return;
    }
    if (atomic_load(&sl->fault_killed)) {
        res->clients_killed_by_fault++;
        return;
    }
    if (killed_by_us) {
        res->clients_killed++;
        return;
    }
    res->clients_crashed++;
    if (!res->first_error[0]) {
        if (WIFSIGNALED(status))
            snprintf(res->first_error, sizeof res->first_error, "client %d killed by signal %d (%s)",
                     i, WTERMSIG(status), strsignal(WTERMSIG(status)));
        else
            snprintf(res->first_error, sizeof res->first_error, "client %d exited with status %d",
                     i, WEXITSTATUS(status));
    }
}

/* A client was reaped: close the interval it left open, now. A holder
 * that died inside its critical section leaves the key's live count and
 * its interval ends here, so it neither hides the overlap it caused nor
 * stays a holder for every later entry; one that died while releasing has
 * its interval logged as it was. */
static void close_interval(struct region *rg, int i, struct run_result *res)
{
    struct client_slot *sl = &rg->slots[i];
    int phase = atomic_load(&sl->iv_phase);
    if (phase == IV_NONE)
        return;
    struct oracle_interval iv = sl->cur;
    struct oracle_interval *log = rg->iv + (int64_t)i * rg->iv_cap;
    int64_t n = atomic_load_explicit(&sl->n_iv, memory_order_acquire);
    if (phase == IV_RELEASING && n > 0 && log[n - 1].key == iv.key &&
        log[n - 1].enter_seq == iv.enter_seq && log[n - 1].enter_ns == iv.enter_ns)
        return; /* died after logging it */
    int64_t now = lab_now_ns();
    iv.flags |= ORACLE_DIED;
    switch (phase) {
    case IV_ENTERING: /* granted, but did the live count see it? */
        iv.flags |= ORACLE_SEQ_UNKNOWN;
        iv.exit_ns = now;
        res->oracle_marks_unknown++;
        break;
    case IV_INSIDE: /* the exit time after the exit mark, as a client takes it before */
        iv.exit_seq = oracle_exit(&rg->keys[iv.key].oracle);
        iv.exit_ns = now = lab_now_ns();
        break;
    case IV_EXITING: /* exit_ns is known, the exit's sequence is not */
        iv.flags |= ORACLE_SEQ_UNKNOWN;
        res->oracle_marks_unknown++;
        break;
    default: /* IV_RELEASING: complete but for the release */
        break;
    }
    iv.release_ns = now;
    res->intervals_closed++;
    if (n < rg->iv_cap) {
        log[n] = iv;
        atomic_store_explicit(&sl->n_iv, n + 1, memory_order_release);
    } else {
        sl->iv_dropped++;
    }
    atomic_store(&sl->iv_phase, IV_NONE);
}

/* Reap whatever has exited; returns how many clients are still alive. A
 * client group (group.c) is one process: reaped once, through its first
 * client, its CPU counted once, every client of it closed and noted. */
static int reap(pid_t *pids, int n, struct region *rg, struct run_result *res, bool killed)
{
    int alive = 0;
    for (int i = 0; i < n; i++) {
        if (pids[i] <= 0)
            continue;
        struct client_slot *sl = &rg->slots[i];
        if (sl->group_n > 1 && sl->group_first != i) {
            alive++; /* its group's first client reaps it */
            continue;
        }
        int status;
        struct rusage ru;
        pid_t r = wait4(pids[i], &status, WNOHANG, &ru);
        if (r != pids[i]) {
            alive++;
            continue;
        }
        int64_t ns = cpu_window_ns(&sl->cpu, &ru);
        res->cpu.clients_ns += ns;
        if (ns > res->cpu.max_client_ns)
            res->cpu.max_client_ns = ns;
        res->cpu.clients_rss_kib += ru.ru_maxrss; /* KiB on Linux: the process's peak */
        res->cpu.client_procs++;
        int last = sl->group_n > 1 ? i + sl->group_n : i + 1;
        for (int j = i; j < last && j < n; j++) {
            int st = status;
            /* a client of a group that could not open: as its own process exits */
            if (j != i || sl->group_n > 1)
                st = atomic_load(&rg->slots[j].state) == SLOT_FAILED ? 2 << 8 : status;
            /* one client of a group killed alone (group.c): dead as its process would be */
            if (sl->group_n > 1 && atomic_load(&rg->slots[j].fault_killed))
                st = SIGKILL;
            close_interval(rg, j, res);
            note_exit(res, &rg->slots[j], j, st, killed);
            pids[j] = -pids[j];
        }
    }
    return alive;
}

/* Drive the run from the start barrier until every client is reaped. */
static void supervise(const struct scenario *s, const struct lock_ops *ops,
                      const struct run_env *env, struct region *rg, pid_t *pids,
                      volatile int *stop, struct run_result *res, int64_t start)
{
    int n = s->clients;
    struct faults *F = faults_begin(s, ops, rg, pids, start);
    int64_t next_fault = rg->head->stop ? INT64_MAX : start;
    int64_t deadline = start + s->max_duration_ns, stop_at = 0, next_progress = start + 1000000000;
    bool killed = false;
    /* Sleep on SIGCHLD rather than polling, so the parent takes no CPU from
     * the clients it measures; wake at least every 100 ms to check bounds. */
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    while (reap(pids, n, rg, res, killed || *stop) > 0) { /* a stop kills: not a crash */
        int64_t now = lab_now_ns();
        if (!stop_at && !*stop && (now >= next_fault || faults_news(F)))
            next_fault = faults_tick(F, now);
        if (!stop_at && (*stop || rg->head->stop || now >= deadline)) {
            rg->head->stop = 1;
            res->stop_ns = now;
            next_fault = INT64_MAX;
            faults_release(F); /* a stopped client cannot hear the stop */
            signal_children(pids, n, SIGUSR1);
            stop_at = now + (*stop ? SIGNAL_GRACE_NS : STOP_GRACE_NS);
        }
        if (stop_at && *stop && stop_at - now > SIGNAL_GRACE_NS)
            stop_at = now + SIGNAL_GRACE_NS; /* a signal came during the duration grace */
        if (stop_at)
            faults_release(F); /* one stopped itself at a failpoint since */
        if (stop_at && now >= stop_at && !killed) {
            signal_children(pids, n, SIGKILL);
            killed = true;
        }
        if (env->progress) { /* the faults as they fire; the line once a second */
            progress_tick(env->progress, rg, n, start, now >= next_progress);
            if (now >= next_progress)
                next_progress = now + 1000000000;
        }
        int64_t nap = 100 * 1000000, now2 = lab_now_ns();
        if (!stop_at && deadline - now2 < nap)
            nap = deadline - now2;
        if (stop_at && stop_at - now2 < nap)
            nap = stop_at - now2;
        if (next_fault != INT64_MAX && next_fault - now2 < nap)
            nap = next_fault - now2;
        if (nap < 1000000)
            nap = 1000000;
        struct timespec ts = {nap / 1000000000, nap % 1000000000};
        sigtimedwait(&chld, NULL, &ts); /* returns early on SIGCHLD or a signal */
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    faults_finish(F, *stop != 0);
    if (env->progress) { /* the faults the finish closed, then the row's place */
        progress_tick(env->progress, rg, n, start, false);
        progress_clear(env->progress);
    }
    res->complete = !*stop;
}

/* Keep an even sample of at most RUN_TIMELINE_MAX intervals, in time order,
 * for the latency-over-time plot. */
static int by_enter(const void *a, const void *b)
{
    const struct oracle_interval *x = a, *y = b;
    return (x->enter_ns > y->enter_ns) - (x->enter_ns < y->enter_ns);
}

static void sample_timeline(struct run_result *res, struct oracle_interval *iv, int64_t n,
                            int64_t start)
{
    qsort(iv, (size_t)n, sizeof *iv, by_enter); /* analyses are done: order is free */
    int64_t step = n > RUN_TIMELINE_MAX ? (n + RUN_TIMELINE_MAX - 1) / RUN_TIMELINE_MAX : 1;
    res->n_timeline = 0;
    for (int64_t i = 0; i < n && res->n_timeline < RUN_TIMELINE_MAX; i += step) {
        struct timeline_point *p = &res->timeline[res->n_timeline++];
        p->t_s = (float)((double)(iv[i].enter_ns - start) / 1e9);
        p->acquire_us = (float)((double)(iv[i].enter_ns - iv[i].wait_ns) / 1e3);
        p->hold_us = (float)((double)(iv[i].exit_ns - iv[i].enter_ns) / 1e3);
        p->client = (int)iv[i].client;
    }
}

/* Keep every critical section (the first RUN_HOLDS_MAX by entry; iv is
 * sorted by entry, sample_timeline) for the hold timeline. Out of memory
 * keeps none: the timeline is a picture, never a verdict. */
static void keep_holds(struct run_result *res, const struct oracle_interval *iv, int64_t n,
                       int64_t start)
{
    int64_t keep = n < RUN_HOLDS_MAX ? n : RUN_HOLDS_MAX;
    res->holds_total = n;
    res->holds = malloc((size_t)(keep ? keep : 1) * sizeof *res->holds);
    if (!res->holds)
        return;
    for (int64_t i = 0; i < keep; i++)
        res->holds[i] = (struct hold){.enter_s = (double)(iv[i].enter_ns - start) / 1e9,
                                      .exit_s = (double)(iv[i].exit_ns - start) / 1e9,
                                      .token = iv[i].token, .client = (int)iv[i].client,
                                      .key = (int)iv[i].key, .flags = iv[i].flags};
    res->n_holds = keep;
}

/* The first grant at or after t (INT64_MAX: none). */
/* The first grant at t or after to a client other than `but` (-1: any). */
static int64_t first_grant_from_but(const struct oracle_interval *all, int64_t n_iv, int64_t t,
                                    int but)
{
    int64_t next = INT64_MAX;
    for (int64_t k = 0; k < n_iv; k++)
        if (all[k].enter_ns >= t && all[k].enter_ns < next && (int)all[k].client != but)
            next = all[k].enter_ns;
    return next;
}

static int64_t first_grant_from(const struct oracle_interval *all, int64_t n_iv, int64_t t)
{
    return first_grant_from_but(all, n_iv, t, -1);
}

/* Server faults (fault records of servers, not clients or clocks): the
 * first grant after each one's store served again (recovery_ns), the lock
 * errors after it, and whether the service came back at all: the last one
 * is `unavailable` when no grant came once its store served again although
 * some client went on asking for at least its grace and the lock's life
 * (lock_life_ns) after that and after the last holder left (the grace
 * alone after a store that never served again although the lock went on
 * granting: another master of several), or when the
 * store never served again while the clients asked, after the last holder
 * left. The lock's life: a holder cut off by the fault may not have given
 * its lock back, and the store keeps it for its TTL or its session, whose
 * clock a store may start again on its return (ZooKeeper's and etcd's new
 * leader renews every session and lease); a run that ends sooner cannot
 * tell a wedged design from one waiting out a lock it must keep.
 * last_asking: when the clients were told to stop, or the last one
 * finished its operations. */
static void server_recovery(struct run_result *res, const struct oracle_interval *all,
                            int64_t n_iv, int64_t last_asking)
{
    int64_t errors_end = res->errors + res->fault_errors + res->release_errors;
    int last = -1;
    for (int i = 0; i < res->n_faults; i++) {
        struct fault_record *r = &res->faults[i];
        if (!fault_took_service(r))
            continue;
        r->errors_after = errors_end - r->errors_before;
        int64_t next = r->back_ns ? first_grant_from(all, n_iv, r->back_ns) : INT64_MAX;
        r->recovery_ns = next != INT64_MAX ? next - r->back_ns : -1;
        if (last < 0 || r->start_ns >= res->faults[last].start_ns)
            last = i;
    }
    if (last < 0)
        return;
    const struct fault_record *L = &res->faults[last];
    bool back = L->back_ns && L->back_ns <= last_asking;
    bool granted_since = false; /* a grant entered after the fault hit */
    int64_t from = back ? L->back_ns : L->start_ns;
    for (int64_t k = 0; k < n_iv; k++) {
        if (all[k].enter_ns >= last_asking)
            continue; /* granted as the clients stopped */
        if (back && all[k].enter_ns >= L->back_ns)
            return; /* granted once the store served again: it came back */
        granted_since |= all[k].enter_ns > L->start_ns;
        if (all[k].exit_ns > from)
            from = all[k].exit_ns; /* held through it: nothing to grant until then */
    }
    /* a store that never served again while the clients asked: unavailable
     * when they asked after it at all, unless it granted after the fault
     * hit (a multi-master lock whose majority kept serving while one
     * master stayed paused); then, as for one that did serve again, when
     * they asked for the grace after the last holder left (time for a
     * design to find its way back) without a grant */
    if (back            ? last_asking >= from + L->grace_ns + res->lock_life_ns
        : granted_since ? last_asking >= from + L->grace_ns
                        : last_asking > from) {
        res->unavailable = true;
        res->unavailable_fault = last;
        res->unavailable_back = back;
    }
}

/* How many distinct clients the published records of log say a fault
 * killed. */
static int clients_killed(struct fault_log *log, int n)
{
    int killed = 0;
    for (int i = 0; i < n && i < FAULT_RECORDS_MAX; i++) {
        const struct fault_record *r = &log->rec[i];
        if (!atomic_load(&log->published[i]) || r->action != FAULT_KILL || r->client < 0 ||
            r->outcome != FAULT_DONE)
            continue;
        bool again = false;
        for (int j = 0; j < i && !again; j++)
            again = atomic_load(&log->published[j]) && log->rec[j].action == FAULT_KILL &&
                    log->rec[j].outcome == FAULT_DONE && log->rec[j].client == r->client;
        killed += !again;
    }
    return killed;
}

/* Copy the run's fault records and work out, for each client a fault
 * killed inside its critical section, how long until the next grant, and
 * for each server fault how long after its store came back. */
static void collect_faults(const struct scenario *s, struct region *rg, struct run_result *res,
                           const struct oracle_interval *all, int64_t n_iv)
{
    struct fault_log *log = &rg->head->faults;
    int n = atomic_load(&log->n);
    /* a killed holder's lock not granted again is a design's fault only
     * when some client was left alive to ask for it */
    bool survivors = clients_killed(log, n) < s->clients;
    res->recovery_ns = -1;
    for (int i = 0; i < n && i < FAULT_RECORDS_MAX; i++) {
        if (!atomic_load(&log->published[i]))
            continue;
        struct fault_record *r = &res->faults[res->n_faults++];
        *r = log->rec[i];
        if (r->outcome == FAULT_ACTIVE) { /* cannot stay open past faults_finish */
            r->outcome = FAULT_FAILED;
            snprintf(r->note, sizeof r->note, "never ended");
        }
        res->faults_landed += r->outcome == FAULT_DONE;
        if (r->action == FAULT_PARTITION && r->holder && r->client >= 0) {
            /* a holder cut off: how long until another client was granted */
            int64_t next = first_grant_from_but(all, n_iv, r->start_ns, r->client);
            r->taken_ns = next != INT64_MAX ? next - r->start_ns : -1;
            for (int64_t k = 0; k < n_iv; k++) /* and when it left the section it held */
                if ((int)all[k].client == r->client && all[k].enter_ns <= r->start_ns &&
                    all[k].exit_ns >= r->start_ns)
                    r->left_ns = all[k].exit_ns - r->start_ns;
            continue;
        }
        if (r->action != FAULT_KILL || r->client < 0 || r->outcome != FAULT_DONE)
            continue;
        int64_t next = first_grant_from(all, n_iv, r->start_ns + 1); /* after the kill */
        if (next != INT64_MAX) {
            r->recovery_ns = next - r->start_ns;
            if (r->holder && r->recovery_ns > res->recovery_ns)
                res->recovery_ns = r->recovery_ns;
        } else if (r->holder && s->clients > 1 && survivors) {
            res->unrecovered_kills++;
        }
    }
    /* the clients asked until they were told to stop (what they were
     * granted while they stopped shows nothing of the service in the run),
     * or until the last one finished its operations */
    int64_t last_asking = res->stop_ns;
    for (int i = 0; !res->stop_ns && i < s->clients; i++)
        if (rg->slots[i].end_ns > last_asking)
            last_asking = rg->slots[i].end_ns;
    server_recovery(res, all, n_iv, last_asking);
    /* an entry that applied to this design and never landed (a failpoint
     * of this design that was never reached has no record at all) */
    for (int f = 0; f < s->n_faults; f++) {
        bool any = false, applied = false, landed = false;
        for (int i = 0; i < res->n_faults; i++)
            if (res->faults[i].spec == f) {
                any = true;
                applied |= !res->faults[i].not_used;
                landed |= res->faults[i].outcome == FAULT_DONE;
            }
        if (!any || (applied && !landed)) {
            if (!res->faults_missed++ && !res->first_error[0])
                snprintf(res->first_error, sizeof res->first_error,
                         "fault %d (%s %s) never landed: the run does not show what it "
                         "claims to test", f, fault_action_name(s->faults[f].action),
                         s->faults[f].target_text);
        }
    }
}

/* Whether each fault put the lock at stake (at_stake.h), and how many
 * could and did. Sorts all by key and entry. 0 or -ENOMEM. */
static int judge_stakes(const struct scenario *s, const struct region *rg,
                        struct run_result *res, struct oracle_interval *all, int64_t n_iv)
{
    if (res->n_faults == 0)
        return 0;
    oracle_sort(all, (size_t)n_iv);
    /* a closed loop asks again after each release (and its think time):
     * a client whose last ask was never granted asked from then until its
     * loop ended, which its intervals do not show */
    struct stake_ask *asks = calloc((size_t)s->clients + 1, sizeof *asks);
    int64_t *last = calloc((size_t)s->clients + 1, sizeof *last);
    if (!asks || !last) {
        free(asks);
        free(last);
        return -ENOMEM;
    }
    for (int64_t k = 0; k < n_iv; k++)
        if ((int)all[k].client < s->clients && all[k].release_ns > last[all[k].client])
            last[all[k].client] = all[k].release_ns;
    size_t n_asks = 0;
    for (int i = 0; i < s->clients && s->arrival_rate <= 0; i++) {
        int64_t end = rg->slots[i].end_ns;
        int64_t from = last[i] ? last[i] + s->think_ns : res->start_ns;
        if (end > from)
            asks[n_asks++] = (struct stake_ask){.client = (uint32_t)i,
                                                .key = s->per_client_keys ? (uint32_t)i : 0,
                                                .from_ns = from, .to_ns = end};
    }
    int rc = 0;
    for (int i = 0; i < res->n_faults && rc == 0; i++) {
        struct fault_record *r = &res->faults[i];
        bool failpoint = r->spec >= 0 && r->spec < s->n_faults &&
                         s->faults[r->spec].target == TARGET_FAILPOINT;
        rc = at_stake_judge(r, failpoint, all, (size_t)n_iv, asks, n_asks);
        res->stake_judged += r->at_stake != STAKE_NA;
        res->stake_yes += r->at_stake == STAKE_YES;
    }
    free(asks);
    free(last);
    return rc;
}

static int collect(const struct scenario *s, struct region *rg, struct run_result *res,
                   int64_t start, int64_t *units_out, struct lab_err *err)
{
    int n = s->clients;
    int64_t end = start, total_iv = 0, units = 0;
    hist_init(&res->acquire);
    hist_init(&res->hold);
    hist_init(&res->release);
    hist_init(&res->handoff);
    res->arrival_rate = s->arrival_rate;
    res->arrival_dist = s->arrival_dist;
    res->arrival_late_ns = s->arrival_late_ns;
    for (int i = 0; i < n; i++) {
        struct client_slot *sl = &rg->slots[i];
        int st = atomic_load(&sl->state);
        if (st == SLOT_INIT || st == SLOT_FAILED)
            continue; /* never initialised its histograms */
        res->acquired += sl->acquired;
        res->timeouts += sl->timeouts;
        res->errors += sl->errors;
        res->released += sl->released;
        res->released_unchecked += sl->released_unchecked;
        res->release_not_owner += sl->release_not_owner;
        res->release_errors += sl->release_errors;
        res->nested_acquired += sl->nested_acquired;
        res->nested_timeouts += sl->nested_timeouts;
        res->arrivals += sl->arrivals;
        res->late_starts += sl->late_starts;
        res->stats.round_trips += sl->stats.round_trips;
        res->stats.polls += sl->stats.polls;
        res->stats.notifications += sl->stats.notifications;
        res->stats.renewals += sl->stats.renewals;
        res->stats.renewal_failures += sl->stats.renewal_failures;
        res->stats.unreplicated += sl->stats.unreplicated;
        handoff_split_add(&res->stats, &sl->stats);
        res->intervals_dropped += sl->iv_dropped;
        units += sl->units;
        res->stale_refused_by_clients += sl->stale_refused;
        res->aborted += sl->aborted;
        total_iv += atomic_load_explicit(&sl->n_iv, memory_order_acquire);
        hist_merge(&res->acquire, &sl->acquire);
        hist_merge(&res->hold, &sl->hold);
        hist_merge(&res->release, &sl->release);
        int64_t e = sl->end_ns ? sl->end_ns : lab_now_ns();
        if (e > end)
            end = e;
        if (!res->first_error[0] && sl->err[0])
            snprintf(res->first_error, sizeof res->first_error, "client %d: %s", i, sl->err);
        if (!res->fault_errors && sl->fault_errors)
            snprintf(res->fault_error, sizeof res->fault_error, "client %d: %s", i, sl->fault_err);
        res->fault_errors += sl->fault_errors;
        res->fault_timeouts += sl->fault_timeouts;
    }
    *units_out = units;
    res->elapsed_s = (double)(end - start) / 1e9;
    res->throughput_per_s = res->elapsed_s > 0 ? (double)res->acquired / res->elapsed_s : 0;

    /* gather the interval logs into one array for the exact analysis */
    struct oracle_interval *all = malloc((size_t)(total_iv ? total_iv : 1) * sizeof *all);
    if (!all) {
        lab_err_set(err, ENOMEM, "out of memory for %lld intervals", (long long)total_iv);
        return -1;
    }
    int64_t k = 0;
    for (int i = 0; i < n; i++) {
        struct client_slot *sl = &rg->slots[i];
        int64_t n_i = atomic_load_explicit(&sl->n_iv, memory_order_acquire);
        memcpy(all + k, rg->iv + (int64_t)i * rg->iv_cap, (size_t)n_i * sizeof *all);
        k += n_i;
    }
    for (int k = 0; k < rg->n_keys; k++) {
        res->live_overlaps += atomic_load(&rg->keys[k].oracle.live_overlaps);
        int m = atomic_load(&rg->keys[k].oracle.max_holders);
        if (m > res->max_holders_live)
            res->max_holders_live = m;
    }
    int rc = oracle_analyze(all, (size_t)total_iv, &res->oracle, &res->handoff);
    if (rc == 0) {
        res->release_deleted_other = oracle_misdeletes(all, (size_t)total_iv);
        if (res->release_deleted_other < 0)
            rc = (int)res->release_deleted_other;
        res->rightful_refused = oracle_rightful_refusals(all, (size_t)total_iv);
    }
    if (rc == 0)
        rc = oracle_stale_holders(all, (size_t)total_iv, &res->stale);
    if (rc == 0)
        rc = cross_check(res, all, total_iv);
    if (rc == 0) {
        collect_faults(s, rg, res, all, total_iv);
        sample_timeline(res, all, total_iv, start);
        keep_holds(res, all, total_iv, start);
        rc = judge_stakes(s, rg, res, all, total_iv); /* last: it sorts the intervals anew */
    }
    free(all);
    if (rc != 0) {
        lab_err_set(err, -rc, "the interval logs are inconsistent (%s)", strerror(-rc));
        return -1;
    }
    int64_t releases = res->released + res->release_not_owner;
    res->wakeups_per_release =
        releases ? (double)(res->stats.polls + res->stats.notifications) / (double)releases : 0;
    return 0;
}

/* An optimistic design keeps the stock in its own store (lock.h): before
 * a run (left NULL) set it to the scenario's stock; after it, read what is
 * left into *left. Such a design runs the stock workload on one key (the
 * scenario loader says so before anything starts; checked again here for
 * scenarios built in code). 0, or -1 with err filled. */
static int optimistic_stock(const struct scenario *s, const struct lock_ops *ops,
                            const struct lock_servers *sv, int64_t *left, struct lab_err *err)
{
    if (!(ops->caps & LOCK_CAP_OPTIMISTIC))
        return 0;
    if (s->workload != WORKLOAD_STOCK || s->per_client_keys || !ops->stock_reset ||
        !ops->stock_left) {
        lab_err_set(err, EINVAL, "%s keeps its own stock: it runs the stock workload on one "
                    "key only", ops->name);
        return -1;
    }
    char key[160];
    scenario_key_of(s, 0, key, sizeof key);
    return left ? ops->stock_left(sv, key, left, err) : ops->stock_reset(sv, key, s->stock, err);
}

/* A group process holds connections per client to the lock store (one
 * per master of a multi-master design: per_client), for the stock workload
 * one to the stock store, and some designs a few more while they wait
 * (etcd's keep-alive and watch: up to two), besides its own: raise the
 * open-file limit its children inherit to allow all of that (root may
 * raise the hard limit too), or, short of it, to the hard limit as long as
 * that holds the connections every client needs; else say why not. 0 or
 * -1 with err filled. */
static int files_for_groups(int per, int per_client, bool stock, struct lab_err *err)
{
    rlim_t must = (rlim_t)per * (rlim_t)(per_client + (stock ? 1 : 0)) + 64;
    rlim_t want = must + (rlim_t)per * 2;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return 0;
    struct rlimit all = {want, rl.rlim_max > want ? rl.rlim_max : want};
    if (setrlimit(RLIMIT_NOFILE, &all) == 0)
        return 0;
    struct rlimit hard = {rl.rlim_max, rl.rlim_max};
    if (rl.rlim_max >= must && setrlimit(RLIMIT_NOFILE, &hard) == 0)
        return 0;
    lab_err_set(err, EMFILE, "clients_per_process %d needs %llu open files per process; the "
                "limit is %llu (ulimit -Hn)", per, (unsigned long long)must,
                (unsigned long long)rl.rlim_max);
    return -1;
}

int runner_run(const struct scenario *s, const struct lock_ops *ops, const struct run_env *env,
               volatile int *stop, struct run_result *res, struct lab_err *err)
{
    const struct backend_ops *be = backend_of(ops); /* NULL: no store (none, local-mutex) */
    struct run_env own = *env;
    memset(&own.servers, 0, sizeof own.servers);
    if (be)
        be->servers(ops, s, &own.servers);
    env = &own;
    memset(res, 0, sizeof *res);
    res->ops = ops;
    snprintf(res->scenario, sizeof res->scenario, "%s", s->name);
    res->clients = s->clients;
    res->per_client_keys = s->per_client_keys;
    res->fencing = !s->fencing                         ? FENCING_OFF
                   : workload_fenced(s, ops->caps) ? FENCING_ON
                                                       : FENCING_UNSUPPORTED;
    res->expect = scenario_expected(s, ops->name);
    res->lock_life_ns = (ops->caps & LOCK_CAP_TTL) ? s->ttl_ns : 0;
    if (own.servers.session_timeout_ns > res->lock_life_ns)
        res->lock_life_ns = own.servers.session_timeout_ns;
    json_t *desc = be ? be->describe(ops, s) : json_object();
    char *text = desc ? json_dumps(desc, JSON_COMPACT) : NULL;
    snprintf(res->servers, sizeof res->servers, "%s", text ? text : "{}");
    free(text);
    json_decref(desc);
    if (be && adapter_is(ops)) { /* where they are, for the adapter's program */
        const struct adapter_spec *spec = scenario_options(s, ops);
        if (!spec || !be->adapter_env) {
            lab_err_set(err, ENOTSUP, "%s: the %s store names no servers for adapters",
                        ops->name, be->name);
            return -1;
        }
        if (be->adapter_env(spec->backend, &own.servers, err) != 0)
            return -1;
    }

    struct region rg;
    if (region_map(&rg, s, ops, err) != 0)
        return -1;
    int64_t calls_before = 0;
    if (optimistic_stock(s, ops, &env->servers, NULL, err) != 0 ||
        workload_reset(s, &env->stock, &rg.keys[0].counter, err) != 0 ||
        (be && be->prepare_run && be->prepare_run(ops, s, err) != 0) ||
        (be && be->clear(&env->servers, s, err) != 0)) {
        munmap(rg.base, rg.size);
        return -1;
    }

    /* server operations are a figure, not a precondition: an external
     * ZooKeeper may not allow mntr; then the figure is left out (0) */
    struct lab_err ops_err = {0};
    bool ops_known = be && be->server_ops(&env->servers, &calls_before, &ops_err) == 0;
    int64_t wakeups_before = 0;
    bool wakeups_known = be && be->server_wakeups &&
                         be->server_wakeups(&env->servers, &wakeups_before, &ops_err) == 0;
    pid_t *pids = calloc((size_t)s->clients, sizeof *pids);
    if (!pids) {
        munmap(rg.base, rg.size);
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    int fp_mark = faults_arm_failpoints(s, ops); /* the clients inherit them */
    fflush(NULL);
    pid_t parent = getpid();
    int forked = 0;
    /* one process per client, or per group of clients_per_process */
    int per = s->clients_per_process > 1 && ops->async ? s->clients_per_process : 1;
    for (int i = 0; i < s->clients; i++) {
        rg.slots[i].group_first = i - i % per;
        rg.slots[i].group_n = per > 1 ? (s->clients - rg.slots[i].group_first < per
                                             ? s->clients - rg.slots[i].group_first : per)
                                      : 1;
    }
    int conns = ops->caps & LOCK_CAP_MULTI_MASTER ? env->servers.n : 1;
    if (per > 1 && files_for_groups(per, conns, s->workload == WORKLOAD_STOCK, err) != 0) {
        free(pids);
        munmap(rg.base, rg.size);
        return -1;
    }
    while (forked < s->clients) {
        int n = rg.slots[forked].group_n;
        pid_t pid = fork();
        if (pid < 0) {
            lab_err_set(err, errno, "fork: %s", strerror(errno));
            break;
        }
        if (pid == 0 && per > 1)
            group_main(s, ops, env, &rg, forked, n, parent);
        if (pid == 0)
            client_main(s, ops, env, &rg, forked, parent);
        setpgid(pid, pid); /* as the client does itself: whichever runs first */
        for (int j = 0; j < n; j++)
            pids[forked + j] = pid;
        forked += n;
    }
    live_pids = pids;
    live_n = forked;

    /* wait until every client has connected (or failed to), then open the barrier;
     * an adapter's own wait for `ready` runs out first */
    int64_t ready_ns = READY_TIMEOUT_NS;
    if (adapter_is(ops)) {
        const struct adapter_spec *spec = scenario_options(s, ops);
        if (spec && spec->ready_timeout_ns + 5000000000LL > ready_ns)
            ready_ns = spec->ready_timeout_ns + 5000000000LL;
    }
    int64_t ready_deadline = lab_now_ns() + ready_ns;
    while (atomic_load(&rg.head->ready) < forked && !*stop && lab_now_ns() < ready_deadline &&
           reap(pids, forked, &rg, res, false) > 0)
        lab_sleep_ns(1000000, NULL);
    bool setup_failed = forked < s->clients;
    if (setup_failed || atomic_load(&rg.head->ready) < forked) {
        if (!setup_failed && !*stop) {
            lab_err_set(err, ETIMEDOUT, "clients did not become ready within %lld s",
                        (long long)(ready_ns / 1000000000));
            setup_failed = true;
        }
        rg.head->stop = 1; /* nobody starts: tear down what was forked */
    }
    faults_disarm(fp_mark);
    if (adapter_is(ops) && s->fencing) {
        /* an adapter fences when every client's said so at `ready` */
        unsigned caps = ~0u;
        for (int i = 0; i < forked; i++)
            if (atomic_load(&rg.slots[i].state) == SLOT_READY)
                caps &= rg.slots[i].adapter_caps;
        res->fencing = workload_fenced(s, caps) ? FENCING_ON : FENCING_UNSUPPORTED;
    }
    /* CPU is counted from the barrier on: start-up is not the run's (cpu.h) */
    struct cpu_sample cpu_before, cpu_after;
    cpu_sample(ops, s, &cpu_before);
    int64_t self_before = cpu_self_ns();
    int64_t start = lab_now_ns();
    rg.head->start_ns = start;
    res->start_ns = start;
    if (!rg.head->stop)
        atomic_store(&rg.head->go, 1);
    region_futex_wake_all(&rg.head->go);
    supervise(s, ops, env, &rg, pids, stop, res, start);
    res->cpu.harness_ns = cpu_self_ns() - self_before;
    res->cpu.harness_rss_kib = cpu_self_rss_kib();
    cpu_sample(ops, s, &cpu_after);
    live_pids = NULL;
    live_n = 0;
    free(pids);

    int rc = 0;
    int64_t units = 0;
    volatile int64_t counter_sum = 0; /* the counter workload: all keys' counters */
    for (int k = 0; k < rg.n_keys; k++)
        counter_sum += rg.keys[k].counter;
    int64_t left = 0;
    if (setup_failed || collect(s, &rg, res, start, &units, err) != 0)
        rc = -1;
    else if (!(ops->caps & LOCK_CAP_OPTIMISTIC))
        rc = workload_outcome(s, &env->stock, &counter_sum, units, &res->work, err);
    else if ((rc = optimistic_stock(s, ops, &env->servers, &left, err)) == 0)
        workload_outcome_kept(s, left, units, &res->work);
    cpu_finish(&res->cpu, &cpu_before, &cpu_after, res->elapsed_s);
    res->server_wakeups_per_release = NAN;
    /* a server started again counts from zero: no figure across that */
    for (int i = 0; i < res->n_faults; i++)
        if (res->faults[i].client < 0 && res->faults[i].pid > 0 &&
            res->faults[i].action != FAULT_PAUSE)
            ops_known = false;
    int64_t releases = res->released + res->release_not_owner, wakeups_after = 0;
    if (rc == 0 && wakeups_known && !ops_known)
        wakeups_known = false; /* a server restarted: its figures start again from zero */
    if (rc == 0 && wakeups_known && releases > 0 &&
        be->server_wakeups(&env->servers, &wakeups_after, &ops_err) == 0)
        res->server_wakeups_per_release =
            (double)(wakeups_after - wakeups_before) / (double)releases;
    /* a library's own wakeups are not on the protocol: the servers' count */
    if (rc == 0 && adapter_is(ops))
        res->wakeups_per_release = res->server_wakeups_per_release;
    if (rc == 0 && ops_known) {
        int64_t calls_after = 0;
        if (be->server_ops(&env->servers, &calls_after, &ops_err) == 0 &&
            res->acquired > 0)
            res->server_ops_per_acquire = (double)(calls_after - calls_before) / (double)res->acquired;
    }
    munmap(rg.base, rg.size);
    if (rc == 0) {
        res->verdict = verdict_of(res);
        res->pass = verdict_set_allows(res->expect, res->verdict);
    }
    return rc;
}

void runner_kill_all_now(void)
{
    volatile pid_t *p = live_pids;
    for (int i = 0; p && i < live_n; i++)
        if (p[i] > 0)
            kill(-p[i], SIGKILL); /* the client's group: an adapter's child too */
}
