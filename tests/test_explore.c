/*
 * test_explore.c - the I/O-free parts of `locklab explore`
 * (harness/explore/): the explore: section read and its errors with
 * line:column, the seeded generator (one seed, one stream of schedules;
 * another seed, others), every generated schedule loaded by the real
 * scenario loader, its entries back as drawn, the shrinker's candidates
 * each strictly smaller, and the text edits (an explore: block commented
 * out line for line, a scalar spliced at libyaml's marks past an accented
 * comment).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "explore.h"
#include "scenario_load.h"

static const char base_text[] =
    "# a base file, with an accent in a comment: é — to test the marks\n"
    "name: explore-unit\n"
    "impls: [redis-set-del, zk-sequential]\n"
    "clients: 3\n"
    "run: {max_duration: 4s}\n"
    "lock: {ttl: 400ms, wait: 100ms}\n"
    "explore:\n"
    "  actions: [pause, kill, restart, clock-jump]\n"
    "  faults: [1, 4]\n"
    "workload: {kind: counter, business: 50ms}\n"
    "expect: {\"*\": safe}\n";

static struct explore_env unit_env(void)
{
    struct explore_env env = {.ttl_ns = 400000000, .business_ns = 50000000,
                              .run_ns = 4000000000LL, .n_roles = 2};
    snprintf(env.roles[0], XPL_NAME_MAX, "redis");
    env.role_clock[0] = true;
    snprintf(env.roles[1], XPL_NAME_MAX, "zookeeper");
    return env;
}

static void test_spec_errors(void)
{
    struct explore_spec sp;
    char err[512];
    static const struct { const char *text, *want; } bad[] = {
        {"name: x\nexplore:\n  actions: [paus]\n", "x.yaml:3:13: explore.actions: unknown action 'paus'"},
        {"name: x\nexplore:\n  actions: [pause]\n  at: [2s, 1s]\n", "x.yaml:4:7: explore.at: the range is upside down"},
        {"name: x\nexplore:\n  actions: [pause]\n  duraton: [1s, 2s]\n", "did you mean 'duration'?"},
        {"name: x\nexplore:\n  actions: [pause]\n  faults: [0, 2]\n", "x.yaml:4:12: explore.faults: '0' is not a count"},
        {"name: x\nexplore:\n  actions: [pause]\n  at: [1x, 2s]\n", "x.yaml:4:8: explore.at: '1x' is not a duration"},
        {"name: x\nexplore:\n  targets: [holder]\n", "x.yaml:3:3: explore: actions is missing"},
        {"name: x\nexplore: [pause]\n", "x.yaml:2:10: explore: expected a mapping"},
        {"name: x\n", "x.yaml: no explore: section"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = explore_spec_read(bad[i].text, strlen(bad[i].text), "x.yaml", &sp, err,
                                   sizeof err);
        CHECK(rc == -1 && strstr(err, bad[i].want), "bad %zu: rc %d, '%s' lacks '%s'", i, rc, err,
              bad[i].want);
    }
    CHECK(explore_spec_read(base_text, strlen(base_text), "b.yaml", &sp, err, sizeof err) == 0,
          "%s", err);
    CHECK(sp.actions == (1u << XA_PAUSE | 1u << XA_KILL | 1u << XA_RESTART | 1u << XA_CLOCK_JUMP),
          "actions %x", sp.actions);
    CHECK(sp.faults[0] == 1 && sp.faults[1] == 4 && sp.line == 7, "faults %d..%d line %d",
          sp.faults[0], sp.faults[1], sp.line);
    /* a partition with no hosts: nothing to cut */
    const char *part = "name: x\nexplore: {actions: [partition]}\n";
    struct explore_env env = unit_env();
    CHECK(explore_spec_read(part, strlen(part), "p.yaml", &sp, err, sizeof err) == 0, "%s", err);
    CHECK(explore_spec_resolve(&sp, &env, "p.yaml", err, sizeof err) == -1 &&
          strstr(err, "p.yaml:2:1: explore: partition has nothing to aim at"), "%s", err);
}

/* The base text commented, with sch appended, loaded by the real loader. */
static int load_with(const char *base, const struct xschedule *sch, struct scenario *s,
                     char *err, size_t n)
{
    char yaml[4096], path[] = "/tmp/test_explore_XXXXXX";
    explore_faults_yaml(sch, yaml, sizeof yaml);
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    fprintf(f, "%s%s", base, yaml);
    fclose(f);
    int rc = scenario_load(path, s, err, n);
    unlink(path);
    return rc;
}

static void test_draw_and_load(char *base)
{
    struct explore_spec sp;
    struct explore_env env = unit_env();
    char err[4096];
    CHECK(explore_spec_read(base_text, strlen(base_text), "b.yaml", &sp, err, sizeof err) == 0,
          "%s", err);
    CHECK(explore_spec_resolve(&sp, &env, "b.yaml", err, sizeof err) == 0, "%s", err);
    CHECK(sp.at[0] == 400000000 && sp.at[1] == 2400000000LL, "at %lld..%lld",
          (long long)sp.at[0], (long long)sp.at[1]);
    CHECK(sp.duration[0] == 200000000 && sp.duration[1] == 850000000, "duration %lld..%lld",
          (long long)sp.duration[0], (long long)sp.duration[1]);
    CHECK(sp.n_clock == 1 && !strcmp(sp.clock[0], "redis"), "clock targets %d", sp.n_clock);

    /* same seed, same schedules; another seed, other ones */
    struct xrng a, b, c;
    xrng_seed(&a, 42);
    xrng_seed(&b, 42);
    xrng_seed(&c, 43);
    int differ = 0, seen[XA_COUNT] = {0}, multi = 0, held = 0;
    struct scenario *s = malloc(sizeof *s);
    for (int t = 0; t < 200; t++) {
        struct xschedule x, y, z;
        explore_draw(&sp, &a, &x);
        explore_draw(&sp, &b, &y);
        explore_draw(&sp, &c, &z);
        CHECK(memcmp(&x, &y, sizeof x) == 0, "trial %d: seed 42 drew two schedules", t);
        differ += memcmp(&x, &z, sizeof x) != 0;
        CHECK(x.n >= 1 && x.n <= 4, "trial %d: %d entries", t, x.n);
        multi += x.n > 1;
        for (int i = 0; i < x.n; i++) {
            const struct xfault *f = &x.f[i];
            seen[f->action]++;
            held += f->when_holder;
            CHECK(f->at_ns >= sp.at[0] && f->at_ns <= sp.at[1] && f->at_ns % 1000000 == 0,
                  "trial %d: at %lld", t, (long long)f->at_ns);
            CHECK(i == 0 || f->at_ns >= x.f[i - 1].at_ns, "trial %d: not in time order", t);
            CHECK(f->action != XA_CLOCK_JUMP || !strcmp(f->target, "redis"),
                  "clock-jump at %s", f->target);
        }
        /* every schedule is a file the loader takes, its entries as drawn */
        if (!s || load_with(base, &x, s, err, sizeof err) != 0) {
            CHECK(0, "trial %d: the loader refused it: %s", t, err);
            continue;
        }
        CHECK(s->n_faults == x.n, "trial %d: %d entries loaded of %d", t, s->n_faults, x.n);
        for (int i = 0; i < x.n && i < s->n_faults; i++) {
            bool every = x.f[i].count > 1;
            CHECK((every ? s->faults[i].every_ns : s->faults[i].at_ns) == x.f[i].at_ns,
                  "trial %d entry %d: time", t, i);
            CHECK(s->faults[i].duration_ns == x.f[i].duration_ns, "trial %d entry %d: duration",
                  t, i);
            CHECK(!every || s->faults[i].count == x.f[i].count, "trial %d entry %d: count", t, i);
        }
    }
    free(s);
    CHECK(differ > 190, "seeds 42 and 43 drew the same schedule %d times of 200", 200 - differ);
    for (int k = 0; k < XA_COUNT; k++)
        CHECK(((sp.actions >> k) & 1) == (seen[k] > 0), "action %s drawn %d times",
              explore_action_words[k], seen[k]);
    CHECK(multi > 0 && held > 0, "mixes %d, held back %d", multi, held);
}

static void test_shrink(void)
{
    struct explore_spec sp;
    struct explore_env env = unit_env();
    char err[512];
    explore_spec_read(base_text, strlen(base_text), "b.yaml", &sp, err, sizeof err);
    explore_spec_resolve(&sp, &env, "b.yaml", err, sizeof err);
    struct xrng r;
    xrng_seed(&r, 7);
    struct xschedule *cand = malloc(sizeof *cand * XPL_CANDIDATES_MAX);
    char (*why)[96] = malloc(sizeof *why * XPL_CANDIDATES_MAX);
    int total = 0, longest = 0;
    for (int t = 0; t < 100; t++) {
        struct xschedule x;
        explore_draw(&sp, &r, &x);
        /* follow the first candidate down: each step strictly smaller, and
         * the descent ends */
        int steps = 0;
        for (;;) {
            int n = explore_candidates(&sp, &x, cand, why);
            CHECK(n >= 0 && n <= XPL_CANDIDATES_MAX, "%d candidates", n);
            total += n;
            for (int i = 0; i < n; i++)
                CHECK(explore_smaller(&cand[i], &x) && !explore_smaller(&x, &cand[i]),
                      "trial %d: candidate %d (%s) is not smaller", t, i, why[i]);
            if (n == 0)
                break;
            x = cand[n - 1]; /* the last: the slowest descent */
            if (++steps > 500)
                break;
        }
        CHECK(steps <= 500, "trial %d: the descent did not end", t);
        CHECK(x.n == 1, "trial %d: ends with %d entries", t, x.n);
        if (steps > longest)
            longest = steps;
    }
    CHECK(total > 0, "no candidates at all");
    /* a schedule is not smaller than itself */
    struct xschedule x;
    explore_draw(&sp, &r, &x);
    CHECK(!explore_smaller(&x, &x), "a schedule smaller than itself");
    free(cand);
    free(why);
    printf("shrink: longest descent %d steps\n", longest);
}

static void test_text(char **base)
{
    struct xtop top[XPL_TOP_MAX];
    int n = 0;
    char err[512];
    size_t len = strlen(base_text);
    CHECK(explore_top_keys(base_text, len, "b.yaml", top, &n, err, sizeof err) == 0, "%s", err);
    CHECK(n == 8, "%d top-level keys", n);
    CHECK(n > 5 && !strcmp(top[5].key, "explore") && top[5].line == 7 && top[5].column == 1,
          "explore at %d:%d", n > 5 ? top[5].line : 0, n > 5 ? top[5].column : 0);
    *base = explore_comment_key(base_text, len, top, n, "explore");
    CHECK(*base && strstr(*base, "# explore:\n#   actions: [pause, kill, restart, clock-jump]\n"
                                 "#   faults: [1, 4]\nworkload:"), "%s", *base);
    int lines_a = 0, lines_b = 0;
    for (const char *p = base_text; *p; p++)
        lines_a += *p == '\n';
    for (const char *p = *base; p && *p; p++)
        lines_b += *p == '\n';
    CHECK(lines_a == lines_b, "lines %d -> %d", lines_a, lines_b);
    /* a scalar spliced at its marks, past the accented comment */
    size_t a, b;
    CHECK(explore_scalar_at(base_text, len, "workload.business", &a, &b) == 0 &&
          b - a == 4 && !strncmp(base_text + a, "50ms", 4), "business at %zu..%zu", a, b);
    char *t = explore_splice(base_text, len, a, b, "10ms");
    CHECK(t && strstr(t, "business: 10ms}"), "splice");
    free(t);
    CHECK(explore_scalar_at(base_text, len, "clients", &a, &b) == 0 && base_text[a] == '3',
          "clients");
    CHECK(explore_scalar_at(base_text, len, "lock.nothing", &a, &b) == -1, "a missing path");
    const char *flow = "{name: x, explore: {actions: [pause]}}\n";
    CHECK(explore_top_keys(flow, strlen(flow), "f.yaml", top, &n, err, sizeof err) == -1 &&
          strstr(err, "f.yaml:1:1: an explore file's top level must be a block mapping"), "%s",
          err);
    char d[32];
    explore_dur(d, sizeof d, 1500000000);
    CHECK(!strcmp(d, "1500ms"), "%s", d);
    explore_dur(d, sizeof d, 2000000000);
    CHECK(!strcmp(d, "2s"), "%s", d);
}

/* The walk back, fed scripted runs: state i's runs break as rates[i]
 * says, run after run ('x' breaks, '.' does not), as far as the walk asks. */
struct scripted {
    const char *rates[9];
    int asked[9];          /* runs taken of each state */
    int stop_after;        /* stop() true after this many states measured, -1 never */
    int measured;
};

static int scripted_rate(void *arg, int state, bool give_up, int *fails, int *runs)
{
    struct scripted *s = arg;
    const char *r = s->rates[state];
    int n = (int)strlen(r);
    *fails = *runs = 0;
    for (int i = 0; i < n; i++) {
        if (give_up && explore_out_of_reach(*fails, *runs, n))
            break;
        (*runs)++;
        *fails += r[i] == 'x';
    }
    s->asked[state] = *runs;
    s->measured++;
    return 0;
}

static bool scripted_stop(void *arg)
{
    struct scripted *s = arg;
    return s->stop_after >= 0 && s->measured >= s->stop_after;
}

static void test_walk_back(void)
{
    struct xwalk w;
    /* the smallest reproduces: no walk */
    struct scripted a = {{"..........", "xxxxxxxxxx", "xxxxxxxx.."}, .stop_after = -1};
    explore_walk_back(2, 10, scripted_rate, scripted_stop, &a, &w);
    CHECK(w.kept == 2 && w.fails == 8 && w.runs == 10 && w.reached, "8 of 10 kept: state %d, %d of %d",
          w.kept, w.fails, w.runs);
    CHECK(a.asked[1] == 0 && a.asked[0] == 0, "no walk when the smallest reproduces");
    /* 2 of 10 at the smallest, 5 of 10 a step back (given up at its third
     * miss), 9 of 10 two back: that one */
    struct scripted b = {{"xxxxxxxxxx", "xxxxxxxxx.", "xx.x..x.x.", "x.x......."},
                         .stop_after = -1};
    explore_walk_back(3, 10, scripted_rate, scripted_stop, &b, &w);
    CHECK(w.kept == 1 && w.fails == 9 && w.runs == 10 && w.reached, "walked back to state %d, %d of %d",
          w.kept, w.fails, w.runs);
    CHECK(w.top_fails == 2 && w.top_runs == 10, "the smallest's rate %d of %d", w.top_fails,
          w.top_runs);
    CHECK(b.asked[3] == 10, "the smallest measured in full (%d runs)", b.asked[3]);
    CHECK(b.asked[2] == 6, "a state that cannot reach 8 of 10 given up at its third miss (%d runs)",
          b.asked[2]);
    CHECK(b.asked[0] == 0, "the walk stops at the first state that reproduces");
    CHECK(!w.cut, "not cut");
    /* nothing reaches 8 of 10: the smallest stays */
    struct scripted c = {{".x.x.xxxxx", "..........", "x........."}, .stop_after = -1};
    explore_walk_back(2, 10, scripted_rate, scripted_stop, &c, &w);
    CHECK(w.kept == 2 && w.fails == 1 && w.runs == 10 && !w.cut && !w.reached,
          "none reproduces: the smallest kept (state %d, %d of %d)", w.kept, w.fails, w.runs);
    CHECK(c.asked[0] == 5, "7 of 10 is given up at its third miss (%d runs)", c.asked[0]);
    /* the budget stops the walk: the smallest stays, cut said */
    struct scripted d = {{"xxxxxxxxxx", "..........", "x........."}, .stop_after = 2};
    explore_walk_back(2, 10, scripted_rate, scripted_stop, &d, &w);
    CHECK(w.kept == 2 && w.cut && d.asked[0] == 0, "cut by the budget: state %d, cut %d",
          w.kept, w.cut);
    /* a long path is bisected: states 0-5 reproduce, 6-8 do not; 5 is
     * found in four measurements (8, 4, 6, 5), the others never run */
    struct scripted f = {{"xxxxxxxxxx", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxxxxxxx",
                          "xxxxxxxxx.", "..........", "..........", "x........."},
                         .stop_after = -1};
    explore_walk_back(8, 10, scripted_rate, scripted_stop, &f, &w);
    CHECK(w.kept == 5 && w.fails == 9, "bisected to state %d (%d of %d)", w.kept, w.fails, w.runs);
    CHECK(f.measured == 4 && f.asked[1] == 0 && f.asked[2] == 0 && f.asked[3] == 0 &&
          f.asked[7] == 0, "bisection: %d states measured", f.measured);
    /* 8 of 10 in three runs of three is 3 of 3: 2 of 3 walks back */
    struct scripted e = {{"xxx", "x.x"}, .stop_after = -1};
    explore_walk_back(1, 3, scripted_rate, scripted_stop, &e, &w);
    CHECK(w.kept == 0 && w.fails == 3 && w.runs == 3, "n 3: state %d, %d of %d", w.kept,
          w.fails, w.runs);
}

int main(void)
{
    test_walk_back();
    char *base = NULL;
    test_spec_errors();
    test_text(&base);
    if (base)
        test_draw_and_load(base);
    test_shrink();
    free(base);
    return check_done();
}
