/*
 * at_stake.c - whether each fault put the lock at stake, from the
 * intervals the clients logged (see at_stake.h for the rules). One pass
 * over the intervals, sorted by key and entry, per fault: in each key the
 * holder the fault caught that stays inside longest so far, the first
 * grant to another client while it is inside, and the holders inside at
 * a server fault's action that were still inside when the store served
 * again, with the clients asking in that window.
 */
#include "at_stake.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *fault_stake_name(enum fault_stake s)
{
    return s == STAKE_YES ? "yes" : s == STAKE_NO ? "no" : "n/a";
}

/* What one fault is asked: the holders it caught are the sections (of
 * client, or of any client when -1) inside at some point of [from, to];
 * back > 0 (a server fault): the store served again then, and a holder
 * inside at from and still inside at back is at stake when another
 * client asked in between. */
struct span {
    int64_t from, to;
    int64_t until; /* the fault was on until then (a grant by then ended the lock under it) */
    int client;
    int64_t back;
    const char *back_words; /* "the store served again" */
};

/* What a judgement reads besides the intervals: the asks never granted,
 * and a word per client to count each once (stamp, mark). */
struct ctx {
    const struct stake_ask *asks;
    size_t n_asks;
    int *stamp;
    int mark;
};

/* Count client c once in this count. */
static int once(struct ctx *cx, uint32_t c)
{
    if (cx->stamp[c] == cx->mark)
        return 0;
    cx->stamp[c] = cx->mark;
    return 1;
}

/* The distinct clients other than holder on the key of [g0, g1) asking
 * at some point of [ws, we]: from wait_ns to their grant, or in an ask
 * never granted. */
static int waiters(const struct oracle_interval *iv, size_t g0, size_t g1, uint32_t holder,
                   int64_t ws, int64_t we, struct ctx *cx)
{
    int n = 0;
    cx->mark++;
    for (size_t k = g0; k < g1; k++) {
        const struct oracle_interval *x = &iv[k];
        if (x->client != holder && x->wait_ns <= we && x->enter_ns >= ws)
            n += once(cx, x->client);
    }
    for (size_t k = 0; k < cx->n_asks; k++) {
        const struct stake_ask *a = &cx->asks[k];
        if (a->key == iv[g0].key && a->client != holder && a->from_ns <= we && a->to_ns >= ws)
            n += once(cx, a->client);
    }
    return n;
}

/* What the pass found: the longest window of each kind and its parties. */
struct finding {
    const struct oracle_interval *taken_holder, *taken_by; /* granted while it was inside */
    const struct oracle_interval *held;      /* inside from the action to back and after */
    int held_waiters;
    const struct oracle_interval *caught;    /* a holder the fault caught (longest inside) */
    const struct oracle_interval *next;      /* the first grant to another after it left */
    size_t g0, g1;                           /* the key of taken_holder (or held) */
};

static bool caught(const struct oracle_interval *x, const struct span *sp)
{
    return (sp->client < 0 || (int)x->client == sp->client) && x->enter_ns <= sp->to &&
           x->exit_ns > sp->from;
}

/* One key's intervals [g0, g1). */
static void scan_key(const struct oracle_interval *iv, size_t g0, size_t g1,
                     const struct span *sp, struct finding *fd, struct ctx *cx)
{
    const struct oracle_interval *c = NULL; /* the caught holder inside longest so far */
    const struct oracle_interval *held = NULL;
    for (size_t k = g0; k < g1; k++) {
        const struct oracle_interval *j = &iv[k];
        if (c && j->client != c->client && j->enter_ns >= sp->from && j->enter_ns < c->exit_ns &&
            (!fd->taken_holder ||
             c->exit_ns - j->enter_ns > fd->taken_holder->exit_ns - fd->taken_by->enter_ns)) {
            fd->taken_holder = c;
            fd->taken_by = j;
        }
        if (caught(j, sp)) {
            if (!c || j->exit_ns > c->exit_ns)
                c = j;
            if (!fd->caught || j->exit_ns > fd->caught->exit_ns) {
                fd->caught = j;
                fd->g0 = g0;
                fd->g1 = g1;
            }
        }
        if (sp->back > 0 && caught(j, sp) && j->enter_ns <= sp->from && j->exit_ns >= sp->back &&
            (!held || j->exit_ns > held->exit_ns))
            held = j;
    }
    if (held) {
        int w = waiters(iv, g0, g1, held->client, sp->back, held->exit_ns, cx);
        bool better = !fd->held || (w > 0 && fd->held_waiters == 0) ||
                      ((w > 0) == (fd->held_waiters > 0) && held->exit_ns > fd->held->exit_ns);
        if (better) {
            fd->held = held;
            fd->held_waiters = w;
        }
    }
}

/* The first grant to another client on the caught holder's key after it left. */
static const struct oracle_interval *next_grant(const struct oracle_interval *iv,
                                                const struct finding *fd)
{
    for (size_t k = fd->g0; k < fd->g1; k++)
        if (iv[k].client != fd->caught->client && iv[k].enter_ns >= fd->caught->exit_ns)
            return &iv[k];
    return NULL;
}

/* The key's bounds [*g0, *g1) of the interval x in iv. */
static void key_bounds(const struct oracle_interval *iv, size_t n,
                       const struct oracle_interval *x, size_t *g0, size_t *g1)
{
    size_t k = (size_t)(x - iv), a = k, b = k + 1;
    while (a > 0 && iv[a - 1].key == x->key)
        a--;
    while (b < n && iv[b].key == x->key)
        b++;
    *g0 = a;
    *g1 = b;
}

/* A duration in words: "1.32 s", or "0.4 ms" under 10 ms. */
struct dur {
    char s[24];
};

static struct dur dur(int64_t ns)
{
    struct dur d;
    if (ns < 10000000)
        snprintf(d.s, sizeof d.s, "%.1f ms", (double)ns / 1e6);
    else
        snprintf(d.s, sizeof d.s, "%.2f s", (double)ns / 1e9);
    return d;
}

static void judge(struct fault_record *r, const struct span *sp, const struct oracle_interval *iv,
                  size_t n, struct ctx *cx)
{
    struct finding fd = {0};
    for (size_t g0 = 0; g0 < n;) {
        size_t g1 = g0 + 1;
        while (g1 < n && iv[g1].key == iv[g0].key)
            g1++;
        scan_key(iv, g0, g1, sp, &fd, cx);
        g0 = g1;
    }
    size_t k0, k1;
    if (fd.taken_holder) {
        const struct oracle_interval *h = fd.taken_holder;
        key_bounds(iv, n, h, &k0, &k1);
        r->at_stake = STAKE_YES;
        r->stake_from_ns = fd.taken_by->enter_ns;
        r->stake_to_ns = h->exit_ns;
        r->stake_waiters = waiters(iv, k0, k1, h->client, r->stake_from_ns, r->stake_to_ns, cx);
        snprintf(r->stake_why, sizeof r->stake_why,
                 "client %u still inside %s after client %u was granted", h->client,
                 dur(h->exit_ns - fd.taken_by->enter_ns).s, fd.taken_by->client);
        return;
    }
    if (fd.held && fd.held_waiters > 0) {
        r->at_stake = STAKE_YES;
        r->stake_from_ns = sp->back;
        r->stake_to_ns = fd.held->exit_ns;
        r->stake_waiters = fd.held_waiters;
        snprintf(r->stake_why, sizeof r->stake_why,
                 "client %u still inside %s after %s, %d other%s asking", fd.held->client,
                 dur(fd.held->exit_ns - sp->back).s, sp->back_words, fd.held_waiters,
                 fd.held_waiters == 1 ? "" : "s");
        return;
    }
    r->at_stake = STAKE_NO;
    if (fd.held) {
        snprintf(r->stake_why, sizeof r->stake_why,
                 "client %u still inside %s after %s, but no other client asked then",
                 fd.held->client, dur(fd.held->exit_ns - sp->back).s, sp->back_words);
        return;
    }
    if (!fd.caught) {
        if (sp->client >= 0)
            snprintf(r->stake_why, sizeof r->stake_why,
                     "client %d had no critical section open when it landed", sp->client);
        else
            snprintf(r->stake_why, sizeof r->stake_why, "no client was inside %s",
                     sp->back ? "at its action" : "while it lasted");
        return;
    }
    const struct oracle_interval *c = fd.caught;
    if (sp->back > 0 && c->enter_ns <= sp->from) { /* inside at the action, gone before back */
        snprintf(r->stake_why, sizeof r->stake_why, "client %u left %s before %s",
                 c->client, dur(sp->back - c->exit_ns).s, sp->back_words);
        return;
    }
    const struct oracle_interval *next = next_grant(iv, &fd);
    if (next && (c->flags & ORACLE_NOTICED) && next->enter_ns <= sp->until) {
        /* it left on its design's word, and the lock did end while the
         * fault lasted: the danger came, the defence met it */
        key_bounds(iv, n, next, &k0, &k1);
        r->at_stake = STAKE_YES;
        r->stake_from_ns = r->stake_to_ns = next->enter_ns;
        r->stake_waiters = waiters(iv, k0, k1, c->client, next->enter_ns, next->enter_ns, cx);
        snprintf(r->stake_why, sizeof r->stake_why,
                 "client %u noticed its loss and left %s before client %u was granted, "
                 "the fault still on", c->client, dur(next->enter_ns - c->exit_ns).s,
                 next->client);
        return;
    }
    if (next)
        snprintf(r->stake_why, sizeof r->stake_why,
                 "client %u left %s before another client (%u) was granted", c->client,
                 dur(next->enter_ns - c->exit_ns).s, next->client);
    else
        snprintf(r->stake_why, sizeof r->stake_why,
                 "no other client was granted while client %u was inside, nor after", c->client);
}

/* A failover's named instant, 0 when not reached. */
static int64_t phase_at(const struct fault_record *r, const char *name)
{
    for (int i = 0; i < r->n_phases && i < FAULT_PHASES_MAX; i++)
        if (strcmp(r->phase[i].name, name) == 0)
            return r->phase[i].at_ns;
    return 0;
}

/* n/a, with why. */
static int not_judged(struct fault_record *r, const char *why)
{
    r->at_stake = STAKE_NA;
    snprintf(r->stake_why, sizeof r->stake_why, "%s", why);
    return 0;
}

int at_stake_judge(struct fault_record *r, bool failpoint, const struct oracle_interval *iv,
                   size_t n, const struct stake_ask *asks, size_t n_asks)
{
    r->at_stake = STAKE_NA;
    r->stake_from_ns = r->stake_to_ns = 0;
    r->stake_waiters = 0;
    r->stake_why[0] = '\0';
    if (r->not_used || r->outcome != FAULT_DONE)
        return not_judged(r, "never landed");
    if (failpoint)
        return not_judged(r, "a failpoint");
    struct span sp = {.from = r->start_ns, .to = r->start_ns, .client = -1, .back = 0,
                      .until = r->end_ns > r->start_ns ? r->end_ns : r->start_ns,
                      .back_words = "the store served again"};
    switch (r->action) {
    case FAULT_PAUSE:
        if (r->client >= 0 && !r->holder)
            return not_judged(r, "a client that held nothing");
        if (r->client >= 0) {
            sp.client = r->client;
            break;
        }
        sp.back = r->back_ns ? r->back_ns : -1; /* a server paused: a server fault */
        break;
    case FAULT_KILL:
        if (r->client >= 0)
            return not_judged(r, r->holder ? "a holder killed: judged by recovery"
                                           : "a client that held nothing");
        sp.back = r->back_ns ? r->back_ns : -1;
        break;
    case FAULT_RESTART:
    case FAULT_STOP:
        sp.back = r->back_ns ? r->back_ns : -1;
        break;
    case FAULT_PARTITION:
        /* every section entered before the heal: the cut-off holder's
         * side may grant it again (a split brain), or any client's */
        if (r->holder && r->client >= 0)
            sp.client = r->client;
        sp.to = r->end_ns > r->start_ns ? r->end_ns : r->start_ns;
        break;
    case FAULT_DELAY:
        sp.to = r->end_ns > r->start_ns ? r->end_ns : r->start_ns;
        break;
    case FAULT_CLOCK_JUMP:
        break;
    case FAULT_FAILOVER: {
        int64_t killed = phase_at(r, "killed"), writable = phase_at(r, "writable");
        if (!killed)
            return not_judged(r, "the master was never killed");
        if (!r->holder) {
            /* done without a lost grant: the design gave back the grants
             * no replica had acknowledged (fault_failover.c), refusing
             * the very grant the promotion would have lost */
            r->at_stake = STAKE_YES;
            r->stake_from_ns = r->stake_to_ns = killed;
            snprintf(r->stake_why, sizeof r->stake_why,
                     "the design gave back the grants no replica had acknowledged: "
                     "none left for the promotion to lose");
            return 0;
        }
        sp.from = sp.to = killed;
        sp.client = r->client; /* the lost grant's holder */
        sp.back = writable ? writable : r->back_ns ? r->back_ns : -1;
        sp.back_words = "the new master took writes";
        break;
    }
    default:
        return not_judged(r, "not a fault that can cost a holder its lock");
    }
    if (sp.back > 0 && r->leader_ns > 0 && r->leader_ns < sp.back &&
        r->action != FAULT_FAILOVER) { /* an ensemble served once it elected a leader */
        sp.back = r->leader_ns;
        sp.back_words = "a new leader served";
    }
    if (sp.back < 0) { /* a server fault after which the store never served again */
        r->at_stake = STAKE_NO;
        snprintf(r->stake_why, sizeof r->stake_why, "the store did not serve again");
        sp.back = 0;
        /* a grant to another while a holder was inside still counts (a
         * multi-master lock whose majority kept serving) */
    }
    uint32_t top = 0;
    for (size_t k = 0; k < n; k++)
        if (iv[k].client > top)
            top = iv[k].client;
    for (size_t k = 0; k < n_asks; k++)
        if (asks[k].client > top)
            top = asks[k].client;
    struct ctx cx = {.asks = asks, .n_asks = asks ? n_asks : 0,
                     .stamp = calloc((size_t)top + 1, sizeof(int))};
    if (!cx.stamp)
        return -ENOMEM;
    bool never_back = r->at_stake == STAKE_NO;
    judge(r, &sp, iv, n, &cx);
    if (never_back && r->at_stake == STAKE_NO)
        snprintf(r->stake_why, sizeof r->stake_why, "the store did not serve again");
    free(cx.stamp);
    return 0;
}
