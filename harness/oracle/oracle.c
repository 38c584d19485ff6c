/*
 * oracle.c - ground truth for mutual exclusion, independent of any lock.
 *
 * A lock service can only be judged by something that does not trust it.
 * The oracle has two halves. While a run is going, oracle_enter() and
 * oracle_exit() keep an atomic holder count per key in shared memory, so the
 * moment a second client is let into a critical section it is seen (and the
 * highest count ever reached is kept). After the run, oracle_analyze() takes
 * every client's log of [enter, exit) intervals and counts exactly what went
 * wrong: how many pairs of intervals on the same key overlap, for how long
 * two or more clients held a key at once, and how many held it at the worst
 * moment. It also measures the handoff gap, the time from one holder's exit
 * to the entry of a client that was already waiting, which is how long a
 * lock leaves the resource idle while someone wants it.
 *
 * The analysis is a single sweep per key over intervals sorted by entry
 * time, with a min-heap of the exit times of the intervals still active, so
 * a run of a few million critical sections is analysed in O(n log n). Two
 * intervals overlap only when one enters strictly before the other exits: a
 * client that enters at the very nanosecond the previous one left is a clean
 * handoff, not a violation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

/* ------------------------------------------------------------------------
 * Live marking
 * --------------------------------------------------------------------- */

/* Clients mark across processes: the word must be a plain atomic, never a
 * library lock that only works within one process. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the oracle needs lock-free 64-bit atomics");

#define HOLDER_MASK ((1ULL << ORACLE_HOLDER_BITS) - 1)
#define ENTER_STEP ((1ULL << ORACLE_HOLDER_BITS) + 1) /* next event, one more holder */
#define EXIT_STEP ((1ULL << ORACLE_HOLDER_BITS) - 1)  /* next event, one holder less */

int oracle_enter(struct oracle_key *k, uint64_t *seq)
{
    uint64_t old = atomic_fetch_add(&k->word, ENTER_STEP);
    int others = (int)(old & HOLDER_MASK);
    int now = others + 1;
    int seen = atomic_load(&k->max_holders);

    *seq = old >> ORACLE_HOLDER_BITS;
    while (now > seen && !atomic_compare_exchange_weak(&k->max_holders, &seen, now))
        ;
    if (others > 0)
        atomic_fetch_add(&k->live_overlaps, 1);
    return others;
}

uint64_t oracle_exit(struct oracle_key *k)
{
    return atomic_fetch_add(&k->word, EXIT_STEP) >> ORACLE_HOLDER_BITS;
}

/* See oracle.h. The victims are marked in a byte per interval, so a lock
 * taken from B that both kinds of evidence show is counted once. */
int64_t oracle_misdeletes(const struct oracle_interval *iv, size_t n)
{
    unsigned char *victim = calloc(n ? n : 1, 1);
    int64_t count = 0;

    if (!victim)
        return -ENOMEM;
    for (size_t a = 0; a < n; a++) {
        if (iv[a].flags & ORACLE_LOST_EARLY)
            victim[a] = 1;
        if (!(iv[a].flags & ORACLE_RELEASED_KEY))
            continue;
        /* the lock A's release removed was the latest grantee's before the
         * release returned; it counts here when that grantee entered before
         * A's exit mark and stayed past the release (one who entered during
         * the release shows by its own evidence, if at all) */
        size_t last = n;
        for (size_t b = a + 1;
             b < n && iv[b].key == iv[a].key && iv[b].enter_ns < iv[a].release_ns; b++)
            if (iv[b].enter_ns > iv[a].enter_ns)
                last = b;
        if (last < n && iv[last].enter_ns < iv[a].exit_ns && iv[last].exit_ns > iv[a].release_ns)
            victim[last] = 1;
    }
    for (size_t i = 0; i < n; i++)
        count += victim[i];
    free(victim);
    return count;
}

/* See oracle.h: a later grant overlapping a is one entered after a, before
 * a's exit mark; sorted by entry, those follow a directly. */
int64_t oracle_rightful_refusals(const struct oracle_interval *iv, size_t n)
{
    int64_t count = 0;
    for (size_t a = 0; a < n; a++) {
        if (!(iv[a].flags & ORACLE_REFUSED))
            continue;
        bool later = false;
        for (size_t b = a + 1; b < n && !later && iv[b].key == iv[a].key &&
                               iv[b].enter_ns < iv[a].exit_ns; b++)
            later = iv[b].enter_ns > iv[a].enter_ns;
        count += !later;
    }
    return count;
}

/* ------------------------------------------------------------------------
 * What the stale holder of each overlap did
 * --------------------------------------------------------------------- */

enum stale_kind { STALE_THROUGH, STALE_ORDERED, STALE_REFUSED, STALE_NOTICED, STALE_CHANCE };

/* What stale holder a did from a later grant at t to its exit (oracle.h):
 * a unit refused or abandoned before its write carried no effect, whatever
 * it read; otherwise its last access decides, the one that carries the
 * unit's effect. */
static enum stale_kind stale_kind(const struct oracle_interval *a, int64_t t)
{
    if (a->flags & ORACLE_REFUSED)
        return STALE_REFUSED;
    if (a->flags & ORACLE_NOTICED)
        return STALE_NOTICED;
    if (a->last_access_ns != 0 && a->last_access_ns >= t)
        return (a->flags & ORACLE_FENCED) ? STALE_ORDERED : STALE_THROUGH;
    return STALE_CHANCE;
}

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int i64_cmp(const void *pa, const void *pb)
{
    return cmp_i64(*(const int64_t *)pa, *(const int64_t *)pb);
}

/* See oracle.h. The later grants overlapping a follow it directly in entry
 * order (the same pairs oracle_analyze() counts); the first of them is the
 * earliest. */
int oracle_stale_holders(const struct oracle_interval *iv, size_t n, struct oracle_stale *out)
{
    struct oracle_stale r = {.window_p50_ns = -1, .window_max_ns = -1};
    int64_t *win = malloc((n ? n : 1) * sizeof *win);

    if (!win)
        return -ENOMEM;
    for (size_t a = 0; a < n; a++) {
        size_t b = a + 1;
        if (b >= n || iv[b].key != iv[a].key || iv[b].enter_ns >= iv[a].exit_ns)
            continue; /* nobody was granted while a was inside */
        int64_t first_grant = iv[b].enter_ns;
        for (; b < n && iv[b].key == iv[a].key && iv[b].enter_ns < iv[a].exit_ns; b++) {
            switch (stale_kind(&iv[a], iv[b].enter_ns)) {
            case STALE_THROUGH: r.through++; break;
            case STALE_ORDERED: r.ordered++; break;
            case STALE_REFUSED: r.refused++; break;
            case STALE_NOTICED: r.noticed++; break;
            case STALE_CHANCE: r.chance++; break;
            }
        }
        bool noticed = (iv[a].flags & ORACLE_NOTICED) && iv[a].notice_ns > 0;
        int64_t end = noticed ? iv[a].notice_ns : iv[a].exit_ns;
        win[r.holders++] = end > first_grant ? end - first_grant : 0;
        r.holders_noticed += noticed;
    }
    if (r.holders > 0) {
        qsort(win, (size_t)r.holders, sizeof *win, i64_cmp);
        r.window_p50_ns = win[(r.holders + 1) / 2 - 1];
        r.window_max_ns = win[r.holders - 1];
    }
    free(win);
    *out = r;
    return 0;
}

/* ------------------------------------------------------------------------
 * Sorting
 * --------------------------------------------------------------------- */


/* Order by key, entry, exit; wait time and client only make ties
 * deterministic (they change no count but the order handoffs are seen). */
static int interval_cmp(const void *pa, const void *pb)
{
    const struct oracle_interval *a = pa, *b = pb;
    int c;

    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if ((c = cmp_i64(a->enter_ns, b->enter_ns)) != 0)
        return c;
    if ((c = cmp_i64(a->exit_ns, b->exit_ns)) != 0)
        return c;
    if ((c = cmp_i64(a->wait_ns, b->wait_ns)) != 0)
        return c;
    return (a->client > b->client) - (a->client < b->client);
}

void oracle_sort(struct oracle_interval *iv, size_t n)
{
    qsort(iv, n, sizeof *iv, interval_cmp);
}

/* ------------------------------------------------------------------------
 * Min-heap of exit times of the active intervals of one key
 * --------------------------------------------------------------------- */

struct exit_heap {
    int64_t *v; /* heap-ordered exit times, v[0] the earliest */
    size_t len; /* intervals currently active */
};

static void heap_push(struct exit_heap *h, int64_t x)
{
    size_t i = h->len++;

    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h->v[parent] <= x)
            break;
        h->v[i] = h->v[parent];
        i = parent;
    }
    h->v[i] = x;
}

static void heap_pop(struct exit_heap *h)
{
    int64_t x = h->v[--h->len];
    size_t i = 0;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->len)
            break;
        if (c + 1 < h->len && h->v[c + 1] < h->v[c])
            c++;
        if (x <= h->v[c])
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->len > 0)
        h->v[i] = x;
}

/* Retire every active interval that exits at or before t, adding to *overlap
 * the time since *cur during which two or more were active; *cur becomes t.
 * Every active interval entered at or before *cur and exits at or after the
 * heap's minimum, so between two consecutive exits the count is the heap size. */
static void heap_advance(struct exit_heap *h, int64_t t, int64_t *cur, int64_t *overlap)
{
    while (h->len > 0 && h->v[0] <= t) {
        if (h->len >= 2)
            *overlap += h->v[0] - *cur;
        *cur = h->v[0];
        heap_pop(h);
    }
    if (h->len >= 2)
        *overlap += t - *cur;
    *cur = t;
}

/* ------------------------------------------------------------------------
 * Analysis
 * --------------------------------------------------------------------- */

/* Sweep the intervals of one key (sorted by entry) and add to out. */
static void analyze_key(const struct oracle_interval *iv, size_t n, struct exit_heap *h,
                        struct oracle_report *out, struct hist *handoff)
{
    int64_t cur = iv[0].enter_ns; /* time up to which overlap is accounted */
    int64_t max_exit = iv[0].exit_ns; /* latest exit among earlier intervals */

    h->len = 0;
    for (size_t i = 0; i < n; i++) {
        heap_advance(h, iv[i].enter_ns, &cur, &out->overlap_ns);
        /* Every interval still active entered no later than this one and
         * exits after it enters. One entered at the same instant would sort
         * later unless it has zero length, and then it was just retired; so
         * each active one entered strictly earlier and overlaps this one,
         * even when this one has zero length. */
        out->violations += (int64_t)h->len;
        if ((int64_t)h->len + 1 > out->max_concurrent)
            out->max_concurrent = (int)(h->len + 1);
        heap_push(h, iv[i].exit_ns);

        if (i > 0) {
            if (iv[i].wait_ns < max_exit && iv[i].enter_ns >= max_exit) {
                int64_t gap_ns = iv[i].enter_ns - max_exit;
                if (handoff)
                    hist_record(handoff, (gap_ns + 500) / 1000);
                out->handoffs++;
            }
            if (iv[i].exit_ns > max_exit)
                max_exit = iv[i].exit_ns;
        }
    }
    while (h->len > 0)
        heap_advance(h, h->v[0], &cur, &out->overlap_ns);
}

/* See oracle.h. Returns 0, -EINVAL for a NULL argument or an interval that
 * exits before it enters (nothing touched), or -ENOMEM (the array may then
 * be sorted but out is untouched). */
int oracle_analyze(struct oracle_interval *iv, size_t n, struct oracle_report *out,
                   struct hist *handoff)
{
    struct oracle_report r = {0};
    struct exit_heap h = {0};
    size_t longest = 0;

    if (!out || (n > 0 && !iv))
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (iv[i].exit_ns < iv[i].enter_ns)
            return -EINVAL;

    r.intervals = (int64_t)n;
    if (n == 0) {
        *out = r;
        return 0;
    }

    oracle_sort(iv, n);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && iv[j].key == iv[i].key; j++)
            ;
        if (j - i > longest)
            longest = j - i;
    }
    h.v = malloc(longest * sizeof *h.v);
    if (!h.v)
        return -ENOMEM;

    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && iv[j].key == iv[i].key; j++)
            ;
        analyze_key(iv + i, j - i, &h, &r, handoff);
    }
    free(h.v);
    *out = r;
    return 0;
}

/* ------------------------------------------------------------------------
 * The live counter replayed from the logs
 * --------------------------------------------------------------------- */

static int seq_cmp(const void *pa, const void *pb)
{
    const struct oracle_interval *a = pa, *b = pb;

    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->enter_seq > b->enter_seq) - (a->enter_seq < b->enter_seq);
}

/* See oracle.h. The same sweep as analyze_key(), on event numbers: the
 * intervals of a key in entry order, a min-heap of the exits still ahead.
 * Event numbers are unique per key, so there are no ties to break. */
int oracle_sequence(struct oracle_interval *iv, size_t n, struct oracle_sequence *out)
{
    struct oracle_sequence r = {0};
    struct exit_heap h = {0};

    if (!out || (n > 0 && !iv))
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if ((iv[i].flags & ORACLE_SEQ_UNKNOWN) || iv[i].exit_seq < iv[i].enter_seq)
            return -EINVAL;
    if (n > 0) {
        h.v = malloc(n * sizeof *h.v);
        if (!h.v)
            return -ENOMEM;
        qsort(iv, n, sizeof *iv, seq_cmp);
    }
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || iv[i].key != iv[i - 1].key)
            h.len = 0;
        while (h.len > 0 && h.v[0] < (int64_t)iv[i].enter_seq)
            heap_pop(&h);
        if (h.len > 0)
            r.overlaps++;
        if ((int)h.len + 1 > r.max_holders)
            r.max_holders = (int)h.len + 1;
        heap_push(&h, (int64_t)iv[i].exit_seq);
    }
    free(h.v);
    *out = r;
    return 0;
}
