/*
 * test_scenario.c - unit test of the scenario loader (harness/loader/).
 *
 * Usage: test_scenario <fixtures-dir>. The directory holds good/, files
 * that must load (a few are checked field by field), and bad/, files that
 * must be refused. Every bad file has a row in bad_cases giving
 * the "line:column" its message must start with and a phrase it must contain,
 * and a bad file without a row fails the test, so a new fixture cannot go
 * unchecked. duration_parse is tested directly, including overflow.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "adapter.h"
#include "lock.h"
#include "lex.h"
#include "plan.h"
#include "scenario_load.h"
#include "redis_settings.h"
#include "zk_settings.h"

#define NS 1LL
#define US 1000LL
#define MS 1000000LL
#define SEC 1000000000LL
#define MIN (60 * SEC)
#define HOUR (3600 * SEC)

static const char *dir;

static const char *fixture(char *buf, size_t n, const char *sub, const char *file)
{
    snprintf(buf, n, "%s/%s/%s", dir, sub, file);
    return buf;
}

/* ------------------------------------------------------------------------
 * duration_parse
 * ------------------------------------------------------------------------ */

static void test_durations(void)
{
    static const struct {
        const char *text;
        int64_t ns;
    } good[] = {
        { "0", 0 },
        { "0.0", 0 },
        { "0s", 0 },
        { "0 ms", 0 },
        { "1ns", 1 },
        { "750ns", 750 * NS },
        { "250us", 250 * US },
        { "100ms", 100 * MS },
        { "10 ms", 10 * MS },
        { "5s", 5 * SEC },
        { "3m", 3 * MIN },
        { "2h", 2 * HOUR },
        { "1.5s", 1500 * MS },
        { "1.5 s", 1500 * MS },
        { "1.25us", 1250 * NS },
        { "2.5m", 150 * SEC },
        { "0.5h", 30 * MIN },
        { "0.001ms", 1 * US },
        { "007s", 7 * SEC },
        { "1.9ns", 1 },                /* below a nanosecond is truncated */
        { "0.0000000001s", 0 },
        { "0.00000000000000000001h", 0 },
        { "1.00000000000000000000000001s", SEC },
        { "9223372036854775807ns", INT64_MAX },
        { "9223372036.854775807s", INT64_MAX },
        { "2562047h", 2562047 * HOUR },
    };
    static const char *const bad[] = {
        "", " ", "s", "5", "1.5", "5 parsecs", "-1s", "+1s", "1.s", ".5s", "1..5s",
        "1 s ", " 1s", "1  s", "1\ts", "1S", "1sec", "1e3s", "1,5s", "5mss", "0x10s",
        "1 ", "0 ", "ms", "1d", "1µs", "1s5",
        "9223372036854775808ns",  /* INT64_MAX + 1 */
        "9223372036.854775808s",
        "2562048h",
        "99999999999999999999999999s",
        "9223372036854775807us",
    };

    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t ns = -42;
        int rc = duration_parse(good[i].text, &ns);
        CHECK(rc == 0 && ns == good[i].ns, "duration_parse(\"%s\") = %d, %" PRId64 "; want %" PRId64,
              good[i].text, rc, ns, good[i].ns);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ns = -42;
        int rc = duration_parse(bad[i], &ns);
        CHECK(rc == -1 && ns == -42, "duration_parse(\"%s\") = %d, %" PRId64 "; want -1, untouched",
              bad[i], rc, ns);
    }
    int64_t ns = -42;
    CHECK(duration_parse(NULL, &ns) == -1 && ns == -42, "duration_parse(NULL) must fail");
}

/* ------------------------------------------------------------------------
 * Files that load
 * ------------------------------------------------------------------------ */

static bool load_good(const char *file, struct scenario *s)
{
    char path[1024], err[512];

    memset(s, 0x5a, sizeof *s);
    fixture(path, sizeof path, "good", file);
    int rc = scenario_load(path, s, err, sizeof err);
    CHECK(rc == 0, "%s: %s", file, err);
    if (rc != 0)
        return false;
    CHECK(strcmp(s->path, path) == 0, "%s: path is '%s'", file, s->path);
    return true;
}

static void test_full(void)
{
    struct scenario s;

    if (!load_good("full.yaml", &s))
        return;
    CHECK(strcmp(s.name, "full-scenario_1.0") == 0, "name '%s'", s.name);
    CHECK(strcmp(s.description, "Every key set: 8 buyers race for 500 units.") == 0,
          "description '%s'", s.description);
    CHECK(s.n_impls == 3, "n_impls %d", s.n_impls);
    CHECK(strcmp(s.impls[0], "none") == 0 && strcmp(s.impls[1], "local-mutex") == 0 &&
          strcmp(s.impls[2], "redis-lua") == 0, "impls %s %s %s", s.impls[0], s.impls[1],
          s.impls[2]);
    CHECK(strcmp(redis_settings_of(&s)->topology, "single") == 0, "topology '%s'",
          redis_settings_of(&s)->topology);
    CHECK(zk_settings_of(&s)->ensemble == 3, "ensemble %d", zk_settings_of(&s)->ensemble);
    CHECK(s.clients == 8, "clients %d", s.clients);
    CHECK(s.ops_per_client == 20, "ops_per_client %" PRId64, s.ops_per_client);
    CHECK(s.max_duration_ns == 90 * SEC, "max_duration %" PRId64, s.max_duration_ns);
    CHECK(strcmp(s.lock_key, "stock-lock") == 0, "lock_key '%s'", s.lock_key);
    CHECK(s.ttl_ns == 5 * SEC, "ttl %" PRId64, s.ttl_ns);
    CHECK(s.wait_ns == 0, "wait %" PRId64, s.wait_ns);
    CHECK(s.retry_interval_ns == 250 * MS, "retry_interval %" PRId64, s.retry_interval_ns);
    CHECK(s.retry == RETRY_BACKOFF, "retry %d", (int)s.retry);
    CHECK(s.workload == WORKLOAD_STOCK, "workload %d", (int)s.workload);
    CHECK(s.stock == 500, "stock %" PRId64, s.stock);
    CHECK(s.business_ns == 2 * MS, "business %" PRId64, s.business_ns);
    CHECK(s.n_expect == 3, "n_expect %d", s.n_expect);
    CHECK(scenario_expected(&s, "none") == VERDICT_SET(VERDICT_VIOLATION), "expected(none)");
    CHECK(scenario_expected(&s, "local-mutex") == VERDICT_SET(VERDICT_ANY), "expected(local-mutex)");
    CHECK(scenario_expected(&s, "redis-lua") == VERDICT_SET(VERDICT_SAFE), "expected(redis-lua) via *");
    CHECK(scenario_expected(&s, "not-listed") == VERDICT_SET(VERDICT_SAFE), "expected(not-listed) via *");
}

static void test_minimal(void)
{
    struct scenario s;

    if (!load_good("minimal.yaml", &s))
        return;
    CHECK(strcmp(s.name, "minimal") == 0, "name '%s'", s.name);
    CHECK(s.description[0] == '\0', "description '%s'", s.description);
    CHECK(s.n_impls == 1 && strcmp(s.impls[0], "redis-lua") == 0, "impls");
    CHECK(strcmp(redis_settings_of(&s)->topology, "single") == 0, "default topology '%s'",
          redis_settings_of(&s)->topology);
    CHECK(zk_settings_of(&s)->ensemble == 1, "default ensemble %d", zk_settings_of(&s)->ensemble);
    CHECK(s.clients == 1, "default clients %d", s.clients);
    CHECK(s.ops_per_client == 0, "default ops_per_client %" PRId64, s.ops_per_client);
    CHECK(s.max_duration_ns == 60 * SEC, "default max_duration %" PRId64, s.max_duration_ns);
    CHECK(strcmp(s.lock_key, "locklab") == 0, "default lock_key '%s'", s.lock_key);
    CHECK(s.ttl_ns == 10 * SEC, "default ttl %" PRId64, s.ttl_ns);
    CHECK(s.wait_ns == 30 * SEC, "default wait %" PRId64, s.wait_ns);
    CHECK(s.retry_interval_ns == 100 * MS, "default retry_interval %" PRId64,
          s.retry_interval_ns);
    CHECK(s.retry == RETRY_FIXED, "default retry %d", (int)s.retry);
    CHECK(s.workload == WORKLOAD_COUNTER, "default workload %d", (int)s.workload);
    CHECK(s.stock == 100, "default stock %" PRId64, s.stock);
    CHECK(s.business_ns == 0, "default business %" PRId64, s.business_ns);
    CHECK(s.n_expect == 0, "n_expect %d", s.n_expect);
    CHECK(scenario_expected(&s, "redis-lua") == 0, "no expectation");
}

static void test_sketch(void)
{
    struct scenario s;

    if (!load_good("sketch.yaml", &s))
        return;
    CHECK(strcmp(s.name, "oversell") == 0, "name '%s'", s.name);
    CHECK(strcmp(s.description, "32 buyers race for 100 units of stock through a lock.") == 0,
          "description '%s'", s.description);
    CHECK(s.n_impls == 4 && strcmp(s.impls[3], "redis-lua") == 0, "impls");
    CHECK(s.clients == 32 && s.ops_per_client == 20 && s.stock == 100, "numbers");
    CHECK(s.business_ns == 2 * MS && s.wait_ns == 30 * SEC, "durations");
    CHECK(scenario_expected(&s, "local-mutex") == VERDICT_SET(VERDICT_VIOLATION), "expected(local-mutex)");
    CHECK(scenario_expected(&s, "redis-setnx-expire") == VERDICT_SET(VERDICT_SAFE), "expected via *");
}

static void test_durations_files(void)
{
    struct scenario s;

    if (load_good("durations-units.yaml", &s)) {
        CHECK(s.max_duration_ns == 2 * HOUR, "h: %" PRId64, s.max_duration_ns);
        CHECK(s.ttl_ns == 1500 * MS, "ms: %" PRId64, s.ttl_ns);
        CHECK(s.wait_ns == 250 * US, "us: %" PRId64, s.wait_ns);
        CHECK(s.retry_interval_ns == 750 * NS, "ns: %" PRId64, s.retry_interval_ns);
        CHECK(s.business_ns == 3 * MIN, "m: %" PRId64, s.business_ns);
    }
    if (load_good("durations-decimal.yaml", &s)) {
        CHECK(s.max_duration_ns == 30 * MIN, "0.5h: %" PRId64, s.max_duration_ns);
        CHECK(s.ttl_ns == 1500 * MS, "1.5 s: %" PRId64, s.ttl_ns);
        CHECK(s.wait_ns == 0, "0s: %" PRId64, s.wait_ns);
        CHECK(s.retry_interval_ns == 1250 * NS, "1.25us: %" PRId64, s.retry_interval_ns);
        CHECK(s.business_ns == 90 * SEC, "1.5m: %" PRId64, s.business_ns);
    }
}

static void test_quoted(void)
{
    struct scenario s;

    if (!load_good("quoted.yaml", &s))
        return;
    CHECK(strcmp(s.name, "quoted.name") == 0, "name '%s'", s.name);
    CHECK(strcmp(s.description, "single 'quoted', with: a colon") == 0, "description '%s'",
          s.description);
    CHECK(s.n_impls == 2 && strcmp(s.impls[0], "redis-lua") == 0 &&
          strcmp(s.impls[1], "redis-set-del") == 0, "impls");
    CHECK(s.clients == 4, "quoted clients %d", s.clients);
    CHECK(s.ops_per_client == 7, "quoted ops_per_client %" PRId64, s.ops_per_client);
    CHECK(s.max_duration_ns == 45 * SEC, "quoted max_duration %" PRId64, s.max_duration_ns);
    CHECK(strcmp(s.lock_key, "my key") == 0, "lock_key '%s'", s.lock_key);
    CHECK(s.ttl_ns == 2 * SEC, "quoted ttl %" PRId64, s.ttl_ns);
    CHECK(s.retry == RETRY_FIXED && s.workload == WORKLOAD_COUNTER, "quoted words");
    CHECK(s.stock == 1000000000, "stock at its maximum %" PRId64, s.stock);
    /* expect came before impls in the file */
    CHECK(scenario_expected(&s, "redis-lua") == VERDICT_SET(VERDICT_BLOCKED), "expected(redis-lua)");
    CHECK(scenario_expected(&s, "redis-set-del") == VERDICT_SET(VERDICT_ERROR), "expected via *");
}

/* workload.fencing: a sweep off and on, and expectations per fencing step. */
static void test_fencing(void)
{
    struct scenario s;

    if (!load_good("fencing.yaml", &s))
        return;
    CHECK(s.n_fence_modes == 2 && s.fence_modes[0] == 0 && s.fence_modes[1] == 1 &&
          s.fencing == 0, "fencing steps %d: %d %d, first %d", s.n_fence_modes,
          s.fence_modes[0], s.fence_modes[1], s.fencing);
    CHECK(scenario_expected(&s, "redis-lua") == VERDICT_SET(VERDICT_VIOLATION), "unfenced redis-lua");
    CHECK(scenario_expected(&s, "redlock") == VERDICT_SET(VERDICT_VIOLATION), "unfenced redlock");
    s.fencing = 1;
    CHECK(scenario_expected(&s, "redis-lua") == VERDICT_SET(VERDICT_FENCED), "fenced redis-lua (from *)");
    CHECK(scenario_expected(&s, "redlock") == VERDICT_SET(VERDICT_VIOLATION), "fenced redlock (scalar)");
    /* a list: the verdicts allowed, each met, none other; named in order */
    if (load_good("expect-list.yaml", &s)) {
        char buf[160];
        verdict_set e = scenario_expected(&s, "etcd-lease");
        CHECK(e == (VERDICT_SET(VERDICT_BLOCKED) | VERDICT_SET(VERDICT_SAFE)), "list: %#x", e);
        CHECK(verdict_set_allows(e, VERDICT_SAFE) && verdict_set_allows(e, VERDICT_BLOCKED) &&
              !verdict_set_allows(e, VERDICT_VIOLATION) && !verdict_set_allows(e, VERDICT_ERROR),
              "a list allows its verdicts and no other");
        CHECK(strcmp(verdict_set_name(e, buf, sizeof buf), "safe/blocked") == 0, "named %s", buf);
        e = scenario_expected(&s, "redis-lua");
        CHECK(strcmp(verdict_set_name(e, buf, sizeof buf), "violation/blocked") == 0,
              "unfenced list from *: %s", buf);
        s.fencing = 1;
        CHECK(scenario_expected(&s, "redis-lua") == VERDICT_SET(VERDICT_FENCED), "fenced from *");
        CHECK(verdict_set_allows(0, VERDICT_ERROR) &&
              verdict_set_allows(VERDICT_SET(VERDICT_ANY), VERDICT_VIOLATION) &&
              strcmp(verdict_set_name(0, buf, sizeof buf), "-") == 0 &&
              strcmp(verdict_set_name(VERDICT_SET(VERDICT_ANY), buf, sizeof buf), "any") == 0,
              "no expectation and any allow every verdict");
    }
    CHECK(verdict_parse("fenced") == VERDICT_FENCED && strcmp(verdict_name(VERDICT_FENCED),
                                                              "fenced") == 0, "verdict name");
    if (!load_good("minimal.yaml", &s))
        return;
    CHECK(s.n_fence_modes == 1 && s.fencing == 0, "fencing off by default");
}

static void test_markers(void)
{
    struct scenario s;

    if (!load_good("markers.yaml", &s))
        return;
    CHECK(strcmp(s.name, "markers") == 0, "name '%s'", s.name);
    CHECK(s.n_impls == 2 && strcmp(s.impls[1], "redis-check-then-set") == 0, "impls");
    CHECK(s.ttl_ns == 3 * SEC && s.wait_ns == 3 * SEC, "alias: ttl %" PRId64 " wait %" PRId64,
          s.ttl_ns, s.wait_ns);
    CHECK(scenario_expected(&s, "redis-get-del") == VERDICT_SET(VERDICT_SAFE), "expected(redis-get-del)");
    CHECK(scenario_expected(&s, "redis-check-then-set") == 0, "no * entry");
}

/* ------------------------------------------------------------------------
 * Files that are refused
 * ------------------------------------------------------------------------ */

static const struct bad_case {
    const char *file;   /* under bad/ */
    const char *where;  /* "line:column" the message starts with */
    const char *phrase; /* text the rest of the message contains */
} bad_cases[] = {
    { "unknown-key-top.yaml", "3:1",
      "unknown key 'client' in the top-level mapping (expected one of: name, description, "
      "adapters, impls, backends, clients, run, lock, workload, arrival, hosts, faults, expect, explore)" },
    { "unknown-key-nested.yaml", "5:3",
      "unknown key 'ttls' in lock (expected one of: key, ttl, wait, retry_interval, retry, watchdog_lease, script, wait_replicas, wait_timeout, on_disconnect, etcd_keepalive, keys)" },
    { "unknown-key-deep.yaml", "3:20",
      "unknown key 'topolgy' in backends.redis (expected one of: topology, replicas, masters, persistence, min_replicas_to_write, min_replicas_max_lag)" },
    { "duplicate-key.yaml", "5:1", "duplicate key 'clients' in the top-level mapping (first at 3:1)" },
    { "duplicate-key-nested.yaml", "6:3", "duplicate key 'ttl' in lock (first at 4:3)" },
    { "bad-duration.yaml", "4:17",
      "bad duration '5 parsecs' for run.max_duration (expected a number and a unit: "
      "ns, us, ms, s, m, h)" },
    { "duration-overflow.yaml", "3:21", "duration '9999999999999h' for run.max_duration is too large" },
    { "ttl-zero.yaml", "3:13", "lock.ttl must be greater than 0" },
    { "wrong-type-int.yaml", "3:10",
      "bad integer 'lots' for clients (expected a plain decimal integer from 1 to 10000)" },
    { "wrong-type-float.yaml", "3:10", "bad integer '1.5' for clients" },
    { "leading-zero.yaml", "3:10", "bad integer '010' for clients" },
    { "wrong-type-list.yaml", "1:7", "name must be a string" },
    { "wrong-type-section.yaml", "3:6", "run must be a mapping" },
    { "wrong-type-mapping.yaml", "4:8", "lock.ttl must be a duration" },
    { "null-value.yaml", "4:7", "lock.key has no value; expected a string" },
    { "unknown-impl.yaml", "4:5",
      "unknown implementation 'redis-redlock' (run `locklab list` to see them)" },
    { "impls-empty.yaml", "2:8", "impls is empty" },
    { "impls-scalar.yaml", "2:8", "impls must be a sequence of implementation names" },
    { "impls-duplicate.yaml", "2:26", "implementation 'redis-lua' is listed twice in impls (first at 2:9)" },
    { "unknown-verdict.yaml", "4:14",
      "unknown verdict 'fine' for expect.redis-lua (expected one of: safe, violation, "
      "blocked, error, fenced, unavailable, token-regressed, not-exercised, any)" },
    { "fencing-counter.yaml", "3:36",
      "workload.fencing needs kind stock (the stock store is the resource that checks the "
      "tokens)" },
    { "fencing-twice.yaml", "3:41", "workload.fencing lists true twice" },
    { "optimistic-counter.yaml", "2:25",
      "mysql-optimistic keeps its own stock and its version: it needs workload kind stock" },
    { "expect-fenced-missing.yaml", "4:21",
      "expect.redis-lua needs both unfenced and fenced (missing: fenced)" },
    { "expect-fenced-key.yaml", "4:22",
      "unknown key 'fencing' in expect.redis-lua (expected unfenced and fenced)" },
    { "expect-not-in-impls.yaml", "3:3", "expect names 'none', which is not in impls" },
    { "expect-duplicate.yaml", "3:37", "duplicate key 'redis-lua' in expect (first at 3:10)" },
    { "expect-null.yaml", "4:13", "expect.redis-lua has no value; expected a verdict" },
    { "expect-list-any.yaml", "3:28",
      "expect.redis-lua: any in a list of verdicts (any allows them all: give it alone)" },
    { "expect-list-twice.yaml", "3:37", "expect.redis-lua: safe named twice" },
    { "expect-list-one.yaml", "3:21",
      "expect.redis-lua: a list of verdicts names two or more (one: give it alone)" },
    { "expect-list-typo.yaml", "3:28",
      "unknown verdict 'blokced' for expect.redis-lua (expected one of: safe, violation, "
      "blocked, error, fenced, unavailable, token-regressed, not-exercised, any); did you mean "
      "'blocked'?" },
    { "empty.yaml", "1:1", "the file is empty; expected a scenario mapping" },
    { "comments-only.yaml", "1:1", "the file is empty; expected a scenario mapping" },
    { "document-empty.yaml", "2:1", "the document is empty; expected a scenario mapping" },
    { "syntax-bracket.yaml", "3:8",
      "YAML syntax error: did not find expected ',' or ']' while parsing a flow sequence "
      "that starts at 2:8" },
    { "syntax-indent.yaml", "5:7", "YAML syntax error: mapping values are not allowed" },
    { "syntax-dedent.yaml", "5:3", "YAML syntax error: did not find expected key" },
    { "undefined-alias.yaml", "3:13", "YAML syntax error: found undefined alias" },
    { "invalid-utf8.yaml", "1:10", "YAML syntax error: invalid leading UTF-8 octet" },
    { "clients-range.yaml", "3:10",
      "clients is 20000, out of range (expected an integer from 1 to 10000)" },
    { "clients-zero.yaml", "3:10", "clients is 0, out of range" },
    { "ops-negative.yaml", "3:23", "run.ops_per_client is -1, out of range (expected an integer >= 0)" },
    { "stock-range.yaml", "3:32", "workload.stock is 1000000001, out of range" },
    { "ensemble-even.yaml", "5:15", "backends.zookeeper.ensemble must be an odd number from 1 to 3, not 2" },
    { "faults-bad-key.yaml", "4:6", "unknown key 'kill'" },
    { "groups-across-hosts.yaml", "4:28",
      "puts client:1 (on b) in one process with client:0 (on a)" },
    { "faults-scalar.yaml", "3:9", "faults must be a sequence" },
    { "faults-point-unknown.yaml", "4:66",
      "faults[0].point: unknown value 'middle' (valid: grant: right after a grant, random: a "
      "point drawn within the business time)" },
    { "faults-point-not-holder.yaml", "4:5", "faults[0]: point goes with target: holder" },
    { "faults-role-typo.yaml", "4:36",
      "unknown target 'zookeeper-leeder' (valid: holder, client:N, random-client, redis, "
      "redis-master, redis-replica:I, sentinel:I, redis-node:I, zookeeper[:I], zookeeper-leader, "
      "zookeeper-follower:I, etcd, etcd-member:I, etcd-leader, mysql, postgres)" },
    { "faults-follower-index.yaml", "4:36", "unknown target 'zookeeper-follower'" },
    { "faults-leader-index.yaml", "4:36", "unknown target 'zookeeper-leader:1'" },
    { "topology-unknown.yaml", "3:30", "unknown value 'cluster' for backends.redis.topology" },
    { "retry-unknown.yaml", "3:15",
      "unknown value 'linear' for lock.retry (expected one of: fixed, backoff)" },
    { "workload-unknown.yaml", "4:9",
      "unknown value 'transfer' for workload.kind (expected one of: counter, stock, reentrant)" },
    { "missing-name.yaml", "2:1", "missing required key 'name'" },
    { "missing-impls.yaml", "1:1", "missing required key 'impls'" },
    { "two-documents.yaml", "3:1", "a second YAML document starts here" },
    { "top-level-list.yaml", "1:1", "the top level must be a mapping" },
    { "name-chars.yaml", "1:7", "name 'over sell' may only contain letters, digits" },
    { "name-too-long.yaml", "1:7", "name is too long (64 bytes; at most 63)" },
    { "key-too-long.yaml", "4:8", "lock.key is too long (128 bytes; at most 127)" },
    { "name-nul.yaml", "1:7", "name contains a NUL character" },
};

/* Load path, expect failure with message "<path>[:<where>]: ...<phrase>...",
 * and check the scenario was left alone. */
static void expect_failure(const char *path, const char *where, const char *phrase)
{
    struct scenario s;
    char err[512], prefix[1200];

    memset(&s, 0x5a, sizeof s);
    memset(err, 0, sizeof err);
    int rc = scenario_load(path, &s, err, sizeof err);
    CHECK(rc == -1, "%s: loaded, but should have failed", path);
    if (where && *where)
        snprintf(prefix, sizeof prefix, "%s:%s: ", path, where);
    else
        snprintf(prefix, sizeof prefix, "%s: ", path);
    size_t n = strlen(prefix);
    CHECK(strncmp(err, prefix, n) == 0, "%s: message '%s' does not start with '%s'", path, err,
          prefix);
    CHECK(strncmp(err, prefix, n) == 0 && strstr(err + n, phrase),
          "%s: message '%s' lacks '%s'", path, err, phrase);
    CHECK(!strchr(err, '\n'), "%s: message is not one line: '%s'", path, err);
    CHECK(s.name[0] == 0x5a && s.clients == 0x5a5a5a5a, "%s: scenario modified on failure", path);
}

static const struct bad_case *find_case(const char *file)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
        if (strcmp(bad_cases[i].file, file) == 0)
            return &bad_cases[i];
    return NULL;
}

static bool is_yaml(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".yaml") == 0;
}

static void test_bad(void)
{
    char path[1024];

    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
        expect_failure(fixture(path, sizeof path, "bad", bad_cases[i].file), bad_cases[i].where,
                       bad_cases[i].phrase);

    /* No position: the file cannot be read at all. */
    snprintf(path, sizeof path, "%s/bad", dir);
    expect_failure(path, NULL, "is a directory");
    expect_failure(fixture(path, sizeof path, "bad", "no-such-file.yaml"), NULL,
                   "cannot open: No such file or directory");

    /* Every fixture in bad/ has a row; a new one cannot go unchecked. */
    snprintf(path, sizeof path, "%s/bad", dir);
    DIR *d = opendir(path);
    CHECK(d != NULL, "cannot list %s", path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!is_yaml(e->d_name))
            continue;
        n++;
        CHECK(find_case(e->d_name) != NULL, "bad/%s has no row in bad_cases", e->d_name);
    }
    if (d)
        closedir(d);
    CHECK(n == (int)(sizeof bad_cases / sizeof bad_cases[0]), "bad/ holds %d fixtures, table %zu",
          n, sizeof bad_cases / sizeof bad_cases[0]);
}

/* Every fixture in good/ loads, including ones not checked field by field. */
static void test_all_good(void)
{
    char path[1024];
    struct scenario s;

    snprintf(path, sizeof path, "%s/good", dir);
    DIR *d = opendir(path);
    CHECK(d != NULL, "cannot list %s", path);
    for (struct dirent *e; d && (e = readdir(d));)
        if (is_yaml(e->d_name))
            load_good(e->d_name, &s);
    if (d)
        closedir(d);
}

/* The message buffer is optional and may be small. */
static void test_err_buffer(void)
{
    char path[1024], small[16], full[512];
    struct scenario s;

    fixture(path, sizeof path, "bad", "bad-duration.yaml");
    CHECK(scenario_load(path, &s, NULL, 0) == -1, "fails without a message buffer");
    CHECK(scenario_load(path, &s, full, sizeof full) == -1, "fails");
    memset(small, 'x', sizeof small);
    CHECK(scenario_load(path, &s, small, sizeof small) == -1, "fails with a small buffer");
    CHECK(memchr(small, '\0', sizeof small) != NULL && strncmp(full, small, sizeof small - 1) == 0,
          "small buffer holds a terminated prefix: '%.*s'", (int)sizeof small, small);

    fixture(path, sizeof path, "good", "minimal.yaml");
    memset(full, 'x', sizeof full);
    CHECK(scenario_load(path, &s, full, sizeof full) == 0 && full[0] == '\0',
          "success leaves an empty message");
}

/* Write text to a temporary file and load it; returns scenario_load's result. */
static int load_text(const char *text, struct scenario *out, char *err, size_t errlen, char *path)
{
    strcpy(path, "/tmp/locklab-test-scenario-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return -2;
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    int rc = scenario_load(path, out, err, errlen);
    unlink(path);
    return rc;
}

/* Sweeps: clients as a list, lock.keys as a word or a list. */
static void test_sweeps(void)
{
    static struct scenario s;
    char err[512], path[64];
    int rc = load_text("name: t\nimpls: [redis-lua]\nclients: [1, 2, 4, 64]\n"
                       "lock: {keys: [hot, per-client]}\n",
                       &s, err, sizeof err, path);
    CHECK(rc == 0, "sweep loads: %s", err);
    CHECK(s.n_client_steps == 4 && s.client_steps[3] == 64 && s.clients == 1,
          "client steps %d, last %d, first %d", s.n_client_steps, s.client_steps[3], s.clients);
    CHECK(s.n_key_modes == 2 && s.key_modes[0] == KEYS_HOT && s.key_modes[1] == KEYS_PER_CLIENT,
          "key modes %d", s.n_key_modes);
    rc = load_text("name: t\nimpls: [redis-lua]\nclients: 8\n", &s, err, sizeof err, path);
    CHECK(rc == 0 && s.n_client_steps == 1 && s.clients == 8 && s.n_key_modes == 1 &&
              s.key_modes[0] == KEYS_HOT,
          "one count, hot by default: %s", err);
    rc = load_text("name: t\nimpls: [redis-lua]\n", &s, err, sizeof err, path);
    CHECK(rc == 0 && s.clients == 1 && s.n_client_steps == 1, "no clients key: one client");
    rc = load_text("name: t\nimpls: [redis-lua]\nclients: [2, 4, 2]\n", &s, err, sizeof err,
                   path);
    CHECK(rc == -1 && strstr(err, ":3:17: clients lists 2 twice"), "duplicate count: %s", err);
    rc = load_text("name: t\nimpls: [redis-lua]\nclients: [1, 20000]\n", &s, err, sizeof err,
                   path);
    CHECK(rc == -1 && strstr(err, ":3:14: clients[1] is 20000, out of range"), "range: %s", err);
    rc = load_text("name: t\nimpls: [redis-lua]\nworkload: {kind: stock}\nlock: {keys: per-client}\n",
                   &s, err, sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":4:14: lock.keys per-client needs the counter"),
          "per-client stock: %s", err);
    rc = load_text("name: t\nimpls: [redis-lua]\nlock: {keys: cold}\n", &s, err, sizeof err,
                   path);
    CHECK(rc == -1 && strstr(err, ":3:14: unknown value 'cold' for lock.keys"), "bad word: %s",
          err);
}

/* The plan (harness/scenario/plan.c): one step per combination, key layout
 * outermost and fencing innermost; the loaded scenario stays as loaded, and
 * plan_apply gives each step its own values. */
static void test_plan(void)
{
    static struct scenario s, cur;
    struct plan_step st[PLAN_MAX_STEPS];
    char err[512], path[64];
    int rc = load_text("name: t\nimpls: [redis-lua]\nclients: [1, 4]\nworkload: {kind: stock, "
                       "fencing: [false, true]}\n",
                       &s, err, sizeof err, path);
    CHECK(rc == 0, "sweep loads: %s", err);
    int n = plan_steps(&s, st);
    CHECK(n == 4, "4 steps, not %d", n);
    CHECK(st[0].clients == 1 && !st[0].fencing && st[1].clients == 1 && st[1].fencing &&
              st[2].clients == 4 && !st[2].fencing && st[3].clients == 4 && st[3].fencing,
          "order: clients then fencing inside");
    CHECK(plan_is_sweep(&s), "a client sweep is a sweep");
    plan_apply(&s, &st[3], &cur);
    CHECK(cur.clients == 4 && cur.fencing == 1 && s.clients == 1 && s.fencing == 0,
          "step 4 runs 4 fenced clients (%d, %d); the loaded scenario keeps 1, unfenced (%d, %d)",
          cur.clients, cur.fencing, s.clients, s.fencing);
    rc = load_text("name: t\nimpls: [redis-lua]\nclients: [2, 8]\nlock: {keys: [hot, "
                   "per-client]}\n", &s, err, sizeof err, path);
    n = plan_steps(&s, st);
    CHECK(rc == 0 && n == 4 && st[0].per_client_keys == KEYS_HOT && st[0].clients == 2 &&
              st[1].clients == 8 && st[2].per_client_keys == KEYS_PER_CLIENT &&
              st[2].clients == 2,
          "keys outermost: %d steps", n);
    rc = load_text("name: t\nimpls: [redis-lua]\nclients: 3\n", &s, err, sizeof err, path);
    n = plan_steps(&s, st);
    CHECK(rc == 0 && n == 1 && st[0].clients == 3 && !plan_is_sweep(&s), "one step: %d", n);
}

/* A design's setting as the loader stored it, found through the design's
 * own rows (the test does not know the design's struct): the field of the
 * row at dotted path ("script.acquire"), derived rows included. NULL when
 * there is no such row. */
static const char *design_field(const struct scenario *s, const char *design, const char *path)
{
    const struct lock_ops *ops = lock_find(design);
    const char *blob = ops ? scenario_options(s, ops) : NULL;
    const struct opt *o = ops ? ops->options : NULL;

    while (blob && o && o->name) {
        size_t len = strcspn(path, ".");
        if (strlen(o->name) != len || strncmp(o->name, path, len) != 0) {
            o++;
            continue;
        }
        if (path[len] == '\0')
            return blob + o->off;
        if (o->type != OPT_SECTION)
            return NULL;
        path += len + 1;
        o = o->sub;
    }
    return NULL;
}

static int64_t design_ns(const struct scenario *s, const char *design, const char *path)
{
    const char *f = design_field(s, design, path);
    int64_t v = INT64_MIN;

    if (f)
        memcpy(&v, f, sizeof v);
    return v;
}

/* redisson's leaseTime: the ttl the file gives, unless it also gives the
 * watchdog's lease; without a ttl, the watchdog (leaseTime 0). Regression:
 * redisson used to ignore lock.ttl and take its lease from lock.lease only.
 * Both live in redisson's own settings (impls/redis/redisson.c), the lease
 * derived by its finish_options hook. */
static void test_redisson_lease(void)
{
    struct scenario s;
    char err[512], path[64];

    int rc = load_text("name: t\nimpls: [redisson]\n", &s, err, sizeof err, path);
    CHECK(rc == 0 && design_ns(&s, "redisson", "leaseTime") == 0 &&
              design_ns(&s, "redisson", "watchdog_lease") == 30 * SEC,
          "no ttl: watchdog with 30 s (%s)", err);
    rc = load_text("name: t\nimpls: [redisson]\nlock: {ttl: 2s}\n", &s, err, sizeof err, path);
    CHECK(rc == 0 && design_ns(&s, "redisson", "leaseTime") == 2 * SEC,
          "ttl given: lease %" PRId64 " (%s)", design_ns(&s, "redisson", "leaseTime"), err);
    rc = load_text("name: t\nimpls: [redisson]\nlock: {ttl: 10s}\n", &s, err, sizeof err,
                   path);
    CHECK(rc == 0 && design_ns(&s, "redisson", "leaseTime") == 10 * SEC,
          "ttl given at its default value is still given");
    rc = load_text("name: t\nimpls: [redisson]\nlock: {ttl: 200ms, watchdog_lease: 200ms}\n", &s,
                   err, sizeof err, path);
    CHECK(rc == 0 && design_ns(&s, "redisson", "leaseTime") == 0 &&
              design_ns(&s, "redisson", "watchdog_lease") == 200 * MS,
          "ttl and watchdog_lease: watchdog (%s)", err);
    rc = load_text("name: t\nimpls: [redisson]\nlock: {watchdog_lease: 1s}\n", &s, err,
                   sizeof err, path);
    CHECK(rc == 0 && design_ns(&s, "redisson", "leaseTime") == 0 &&
              design_ns(&s, "redisson", "watchdog_lease") == SEC,
          "watchdog_lease: watchdog");
    rc = load_text("name: t\nimpls: [redisson]\nlock: {lease: 50ms}\n", &s, err, sizeof err,
                   path);
    CHECK(rc == -1 && strstr(err, ":3:8: unknown key 'lease' in lock"), "lease is gone: %s", err);
    rc = load_text("name: t\nimpls: [redisson]\nlock: {leaseTime: 50ms}\n", &s, err, sizeof err,
                   path);
    CHECK(rc == -1 && strstr(err, ":3:8: unknown key 'leaseTime' in lock (expected one of: key, "
                                  "ttl, wait, retry_interval, retry, watchdog_lease, script, wait_replicas, wait_timeout, on_disconnect, etcd_keepalive, keys)"),
          "a derived value is not a key: %s", err);
}

/* A design's own rows (lock_ops.options) go through the loader's machinery:
 * defaults, validation with file:line:column, the design's struct, and its
 * finish_options check. */
static void test_design_options(void)
{
    static struct scenario s;
    char err[512], path[64];

    /* bad values of a design's key, placed like any other key's */
    int rc = load_text("name: t\nimpls: [redisson]\nlock: {watchdog_lease: 5 parsecs}\n", &s, err,
                       sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":3:24: bad duration '5 parsecs' for lock.watchdog_lease "
                                  "(expected a number and a unit: ns, us, ms, s, m, h)"),
          "bad watchdog_lease: %s", err);
    rc = load_text("name: t\nimpls: [redisson]\nlock:\n  watchdog_lease: 0\n", &s, err,
                   sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":4:19: lock.watchdog_lease must be greater than 0, not '0'"),
          "zero watchdog_lease: %s", err);
    rc = load_text("name: t\nimpls: [redisson]\nlock: {watchdog_lease: [1s]}\n", &s, err,
                   sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":3:24: lock.watchdog_lease must be a duration such as 250ms"),
          "list for watchdog_lease: %s", err);
    rc = load_text("name: t\nimpls: [redisson]\nlock: {watchdog_lease: 1s, watchdog_lease: 2s}\n",
                   &s, err, sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":3:28: duplicate key 'watchdog_lease' in lock (first at 3:8)"),
          "duplicate watchdog_lease: %s", err);

    /* redis-script: the scripts go to its struct; acquire and release required when listed */
    rc = load_text("name: t\nimpls: [redis-script]\nlock:\n  script:\n    acquire: return 7\n"
                   "    release: return 0\n",
                   &s, err, sizeof err, path);
    CHECK(rc == 0, "scripts load: %s", err);
    const char *acq = design_field(&s, "redis-script", "script.acquire");
    const char *ren = design_field(&s, "redis-script", "script.renew");
    CHECK(acq && strcmp(acq, "return 7") == 0 && ren && ren[0] == '\0', "scripts stored: '%s'",
          acq ? acq : "(no row)");
    rc = load_text("name: t\nimpls: [redis-lua, redis-script]\n", &s, err, sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":2:20: redis-script needs lock.script.acquire and "
                                  "lock.script.release (missing: acquire)"),
          "no scripts: at the impls item: %s", err);
    rc = load_text("name: t\nimpls: [redis-script]\nlock: {script: {release: return 1}}\n", &s,
                   err, sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":3:16: redis-script needs lock.script.acquire and "
                                  "lock.script.release (missing: acquire)"),
          "no acquire: at lock.script: %s", err);
    rc = load_text("name: t\nimpls: [redis-script]\nlock: {script: {acquire: x, renwe: y}}\n", &s,
                   err, sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":3:29: unknown key 'renwe' in lock.script (expected one of: "
                                  "acquire, release, renew)"),
          "typo in lock.script: %s", err);
    rc = load_text("name: t\nimpls: [redis-script]\nlock: {script: {acquire: '', release: x}}\n",
                   &s, err, sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":3:26: lock.script.acquire must not be empty"),
          "empty acquire: %s", err);

    /* a design's keys are accepted when it is not listed (run --impl may
     * run it), and what it requires is then not required */
    rc = load_text("name: t\nimpls: [redis-lua]\nlock: {watchdog_lease: 2s, script: {renew: r}}\n",
                   &s, err, sizeof err, path);
    CHECK(rc == 0 && design_ns(&s, "redisson", "watchdog_lease") == 2 * SEC,
          "keys of designs not listed: %s", err);

    /* scenarios built in code get every design's defaults */
    CHECK(scenario_defaults(&s) == 0 && design_ns(&s, "redisson", "watchdog_lease") == 30 * SEC &&
              design_ns(&s, "redisson", "leaseTime") == 0,
          "defaults of the designs' settings");
    CHECK(scenario_options(&s, lock_find("redis-lua")) == NULL, "a design without settings");
}

/* Faults II: backends.redis.persistence, clock-jump's offset (either
 * way), when: holder with its window on a server target. */
static void test_faults_ii(void)
{
    static struct scenario s;
    char err[512], path[64];
    int rc = load_text("name: t\nimpls: [redlock]\n", &s, err, sizeof err, path);
    CHECK(rc == 0 && redis_settings_of(&s)->persistence == PERSIST_NONE,
          "persistence none by default: %s", err);
    rc = load_text("name: t\nimpls: [redlock]\nbackends: {redis: {persistence: aof-always}}\n"
                   "faults:\n"
                   "  - {at: 1s, action: clock-jump, target: \"redis-node:2\", offset: 1.5s}\n"
                   "  - {at: 2s, action: clock-jump, target: redis, offset: -250ms}\n"
                   "  - {at: 1s, when: holder, window: 3s, action: restart, target: redis, "
                   "duration: 1s}\n",
                   &s, err, sizeof err, path);
    CHECK(rc == 0, "faults II load: %s", err);
    CHECK(redis_settings_of(&s)->persistence == PERSIST_AOF_ALWAYS, "persistence %d",
          redis_settings_of(&s)->persistence);
    CHECK(s.n_faults == 3 && s.faults[0].action == FAULT_CLOCK_JUMP && s.faults[0].index == 2 &&
              s.faults[0].offset_ns == 1500 * MS && !s.faults[0].when_holder,
          "jump +1.5 s on node 2");
    CHECK(s.faults[1].offset_ns == -250 * MS, "jump back: %lld", (long long)s.faults[1].offset_ns);
    CHECK(s.faults[2].when_holder && s.faults[2].window_ns == 3 * SEC &&
              s.faults[2].action == FAULT_RESTART,
          "restart when a client holds the lock, waiting up to 3 s");
    rc = load_text("name: t\nimpls: [redlock]\nfaults:\n"
                   "  - {at: 1s, window: 3s, action: restart, target: redis, duration: 1s}\n",
                   &s, err, sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":4:5: faults[0]: window is how long to wait for a holder"),
          "window without when: %s", err);
}

/* A holder target's point: grant by default, random when asked. */
static void test_faults_point(void)
{
    static struct scenario s;
    char err[512], path[64];
    int rc = load_text("name: t\nimpls: [redis-lua]\nfaults:\n"
                       "  - {at: 1s, action: pause, target: holder, duration: 1s}\n"
                       "  - {at: 2s, action: kill, target: holder, point: random}\n"
                       "  - {at: 3s, action: pause, target: holder, duration: 1s, point: grant}\n",
                       &s, err, sizeof err, path);
    CHECK(rc == 0, "point load: %s", err);
    CHECK(rc == 0 && s.faults[0].point == FAULT_POINT_GRANT &&
              s.faults[1].point == FAULT_POINT_RANDOM && s.faults[2].point == FAULT_POINT_GRANT,
          "points: %d %d %d", s.faults[0].point, s.faults[1].point, s.faults[2].point);
}

/* The renewal settings an adapter is told follow how the built-in designs
 * of its store resolved theirs: redisson's watchdog lease only when
 * redisson runs its watchdog (a lock.ttl alone is its lease: none), and
 * etcd-lease's keep-alive for an etcd adapter. */
static void test_adapter_renewals(void)
{
    static struct scenario s;
    char err[512], path[64];
    const char *decl = "adapters:\n"
                       "  r: {command: [r], backend: redis}\n"
                       "  e: {command: [e], backend: etcd}\n";
    char text[512];
    snprintf(text, sizeof text, "name: a\nimpls: [r, e]\nlock: {ttl: 1s, watchdog_lease: 2s, "
             "etcd_keepalive: true}\n%s", decl);
    int rc = load_text(text, &s, err, sizeof err, path);
    CHECK(rc == 0, "renewals load: %s", err);
    CHECK(rc == 0 && s.adapters[0].spec.watchdog_lease_ns == 2 * SEC &&
              s.adapters[0].spec.etcd_keepalive == -1 &&
              s.adapters[1].spec.watchdog_lease_ns == 0 && s.adapters[1].spec.etcd_keepalive == 1,
          "watchdog_lease given: told to redis (%lld), keep-alive to etcd (%d)",
          (long long)s.adapters[0].spec.watchdog_lease_ns, s.adapters[1].spec.etcd_keepalive);
    snprintf(text, sizeof text, "name: a\nimpls: [r, e]\nlock: {ttl: 1s}\n%s", decl);
    rc = load_text(text, &s, err, sizeof err, path);
    CHECK(rc == 0 && s.adapters[0].spec.watchdog_lease_ns == 0 &&
              s.adapters[1].spec.etcd_keepalive == 0,
          "lock.ttl alone: no watchdog (%lld), keep-alive false (%d): %s",
          (long long)s.adapters[0].spec.watchdog_lease_ns, s.adapters[1].spec.etcd_keepalive, err);
}

/* Adapters: declared programs become implementations by name, read before
 * impls whatever the key order; their settings are their spec; the adapter
 * is found again in a copy of the scenario (its names outlive the loader). */
static void test_adapters(void)
{
    static struct scenario s, copy;
    char err[512], path[64];
    int rc = load_text("name: a\n"
                       "impls: [redis-lua, py, zk]\n"
                       "expect: {py: violation}\n"
                       "adapters:\n"
                       "  py: {command: [/usr/bin/python3, sub/lock.py, '--x y'], backend: redis}\n"
                       "  zk: {command: [zkl], backend: zookeeper, ready_timeout: 2s,"
                       " grace: 250ms}\n"
                       "  my: {command: [m], backend: mysql}\n"
                       "  pg: {command: [p], backend: postgres}\n"
                       "  nodes: {command: [n], backend: redis-nodes}\n",
                       &s, err, sizeof err, path);
    CHECK(rc == 0, "adapters load: %s", err);
    if (rc != 0)
        return;
    CHECK(s.n_adapters == 5, "five adapters, not %d", s.n_adapters);
    const struct adapter_spec *py = &s.adapters[0].spec, *zk = &s.adapters[1].spec;
    CHECK(py->argc == 3 && strcmp(py->argv, "/usr/bin/python3") == 0 &&
              strcmp(py->argv + 17, "sub/lock.py") == 0 && strcmp(py->argv + 29, "--x y") == 0,
          "py's argv");
    CHECK(strcmp(py->backend, "redis") == 0 && strcmp(zk->backend, "zookeeper") == 0, "backends");
    /* each word takes its store from the stores' tables, with its caps */
    const struct adapter_spec *my = &s.adapters[2].spec, *pg = &s.adapters[3].spec,
                              *nodes = &s.adapters[4].spec;
    CHECK(strcmp(my->store, "mysql") == 0 && strcmp(pg->store, "postgres") == 0 &&
              strcmp(nodes->store, "redis") == 0 && strcmp(zk->store, "zookeeper") == 0,
          "stores: %s %s %s %s", my->store, pg->store, nodes->store, zk->store);
    CHECK(nodes->caps == LOCK_CAP_MULTI_MASTER && py->caps == 0 && my->caps == 0,
          "redis-nodes is multi-master");
    CHECK(strcmp(scenario_impl(&s, "my")->backend, "mysql") == 0 &&
              strcmp(scenario_impl(&s, "pg")->backend, "postgres") == 0,
          "a mysql or postgres adapter runs on its store");
    CHECK(strcmp(py->dir, "/tmp") == 0, "runs in the file's directory, not '%s'", py->dir);
    CHECK(py->ready_timeout_ns == 30 * SEC && py->grace_ns == 5 * SEC, "py's defaults");
    CHECK(zk->ready_timeout_ns == 2 * SEC && zk->grace_ns == 250 * MS, "zk's settings");
    /* no lock.ttl: redisson runs its watchdog with the default lease, and
     * the redis adapters are told it; no other store's are; keep-alive is
     * an etcd store's only */
    CHECK(py->watchdog_lease_ns == 30 * SEC && nodes->watchdog_lease_ns == 30 * SEC &&
              zk->watchdog_lease_ns == 0 && my->watchdog_lease_ns == 0,
          "watchdog lease told to the redis adapters only: %lld %lld %lld",
          (long long)py->watchdog_lease_ns, (long long)nodes->watchdog_lease_ns,
          (long long)zk->watchdog_lease_ns);
    CHECK(py->etcd_keepalive == -1 && zk->etcd_keepalive == -1 && pg->etcd_keepalive == -1,
          "no keep-alive setting off etcd");
    copy = s;
    const struct lock_ops *ops = scenario_impl(&copy, "zk");
    CHECK(ops && adapter_is(ops) && strcmp(ops->name, "zk") == 0 &&
              strcmp(ops->backend, "zookeeper") == 0, "zk is an adapter design");
    CHECK(ops && scenario_options(&copy, ops) == &copy.adapters[1].spec, "its spec");
    CHECK(scenario_impl(&copy, "redis-lua") == lock_find("redis-lua"), "built-ins stay");
    CHECK(scenario_impl(&copy, "nope") == NULL, "unknown");
    CHECK(scenario_expected(&copy, "py") == VERDICT_SET(VERDICT_VIOLATION), "expect names an adapter");
    rc = load_text("name: a\nimpls: [r]\nadapters:\n  r: {command: [x], backend: redis}\n"
                   "backends: {redis: {topology: sentinel}}\n",
                   &s, err, sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":4:3: adapter 'r' has backend redis, but"),
          "a redis adapter behind sentinels: %s", err);
}

/* Every error of a file at once, each with the nearest known word, and no
 * error that only follows from another (an expect entry naming an impl
 * that failed in impls). lex_nearest on its own. */
static void test_suggestions(void)
{
    static struct scenario s;
    static const char *const words[] = { "clients", "redis", "zookeeper", NULL };
    char err[4096], path[64];

    CHECK(lex_nearest("clinets", 7, words, 0) == words[0], "a swap and a letter: clients");
    CHECK(lex_nearest("redsi", 5, words, 0) == words[1], "two swapped letters count one");
    CHECK(lex_nearest("etcd", 4, words, 0) == NULL, "nothing near");
    CHECK(lex_nearest("redis", 5, words, 0) == NULL, "the word itself is no suggestion");
    int rc = load_text("name: t\nimpls: [zk-sequentail]\nclinets: 2\n"
                       "expect: {zk-sequentail: safe}\n", &s, err, sizeof err, path);
    CHECK(rc == -1 && strstr(err, ":2:9: unknown implementation 'zk-sequentail'") &&
              strstr(err, "did you mean 'zk-sequential'?") &&
              strstr(err, ":3:1: unknown key 'clinets'") && strstr(err, "did you mean 'clients'?"),
          "both errors, each with its suggestion: %s", err);
    int lines = 1;
    for (const char *c = err; *c; c++)
        lines += *c == '\n';
    CHECK(lines == 2 && !strstr(err, "not in impls"), "two lines, no cascade: %s", err);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s <fixtures-dir>\n", argv[0]);
        return 2;
    }
    dir = argv[1];

    test_durations();
    test_full();
    test_minimal();
    test_sketch();
    test_durations_files();
    test_quoted();
    test_markers();
    test_fencing();
    test_all_good();
    test_bad();
    test_err_buffer();
    test_sweeps();
    test_plan();
    test_suggestions();
    test_redisson_lease();
    test_design_options();
    test_faults_ii();
    test_faults_point();
    test_adapters();
    test_adapter_renewals();
    return check_done();
}
