/*
 * scenario.c - load and validate a scenario file.
 *
 * A scenario file is one YAML document describing what to run: which lock
 * implementations, how many clients, how long, with which lock parameters and
 * workload, and which verdict each implementation is expected to get. A typo
 * in such a file must never turn into a silently different experiment, so the
 * loader is strict: an unknown key, a duplicate key, a value of the wrong type,
 * a malformed duration, an out-of-range number or an unknown implementation is
 * reported as one line "file:line:column: what is wrong" and nothing runs.
 *
 * The file is parsed with libyaml's document API (yaml_parser_load), so every
 * node keeps its start mark and each message can point at the key or value at
 * fault. What each key means is described once, in the option tables below
 * (one row per key: name, type, field, range, default, help, in the manner of
 * fio's options.c; the row type is common/opt.h's). The same rows fill in the
 * defaults, drive the parsing and validation, and produce the "expected one
 * of: ..." lists in messages, so a new key is one new row. The few keys that
 * need more than a scalar check (impls, faults, expect) have their own handler.
 *
 * A lock design's own settings are rows in the design's file
 * (lock_ops.options), read by the same machinery: they are keys of the lock
 * section, standing where its table has its OPT_DESIGNS row, and their
 * values go to the design's own struct, one per design in
 * scenario.options (scenario_options), which the client hands to the
 * design as lock_env.options. A design's keys are accepted whether or not
 * it is in impls, since `run --impl` may run it anyway; its finish_options
 * hook, called once the file is read, derives values and checks what the
 * file must give for a design it lists.
 *
 * Durations are resolved here into nanoseconds (duration_parse), so the runner
 * only ever sees plain numbers.
 */
#include "scenario.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <yaml.h>

#include "backend.h"
#include "failpoint_env.h"
#include "fault_action.h"
#include "lock.h"

/* ------------------------------------------------------------------------
 * Numbers: durations and plain decimal integers
 * ------------------------------------------------------------------------ */

enum scan_result {
    SCAN_OK = 0,     /* parsed */
    SCAN_BAD = -1,   /* not in the expected form */
    SCAN_RANGE = -2  /* well-formed but does not fit in an int64_t */
};

/* A unit is mant * 10^exp nanoseconds, which keeps fractions exact. */
static const struct duration_unit {
    const char *name; /* as written after the number */
    int64_t mant;     /* mantissa of the unit in ns */
    int exp;          /* power of ten of the unit in ns */
} duration_units[] = {
    { "ns", 1, 0 },  { "us", 1, 3 },  { "ms", 1, 6 },
    { "s", 1, 9 },   { "m", 6, 10 },  { "h", 36, 11 },
};

#define DURATION_UNITS_TEXT "ns, us, ms, s, m, h"
#define DURATION_FRAC_DIGITS 17 /* fraction digits kept; later ones are < 1 ns even for h */

static const int64_t pow10_tab[DURATION_FRAC_DIGITS + 1] = {
    1LL, 10LL, 100LL, 1000LL, 10000LL, 100000LL, 1000000LL, 10000000LL,
    100000000LL, 1000000000LL, 10000000000LL, 100000000000LL, 1000000000000LL,
    10000000000000LL, 100000000000000LL, 1000000000000000LL,
    10000000000000000LL, 100000000000000000LL,
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Parse "<digits>[.<digits>][ ]<unit>" or a bare zero into nanoseconds,
 * truncating below one nanosecond. Returns an enum scan_result. */
static int duration_scan(const char *s, int64_t *ns_out)
{
    const char *p = s;
    int64_t whole = 0, frac = 0;
    int frac_digits = 0;
    bool too_big = false, zero = true;

    if (!is_digit(*p))
        return SCAN_BAD;
    for (; is_digit(*p); p++) {
        int d = *p - '0';
        if (d)
            zero = false;
        if (whole > (INT64_MAX - d) / 10)
            too_big = true;
        else
            whole = whole * 10 + d;
    }
    if (*p == '.') {
        p++;
        if (!is_digit(*p))
            return SCAN_BAD;
        for (; is_digit(*p); p++) {
            if (*p != '0')
                zero = false;
            if (frac_digits < DURATION_FRAC_DIGITS) {
                frac = frac * 10 + (*p - '0');
                frac_digits++;
            }
        }
    }
    if (*p == '\0') {
        if (!zero)
            return SCAN_BAD; /* only a bare 0 may go without a unit */
        *ns_out = 0;
        return SCAN_OK;
    }
    if (*p == ' ')
        p++;

    const struct duration_unit *u = NULL;
    for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++)
        if (strcmp(p, duration_units[i].name) == 0)
            u = &duration_units[i];
    if (!u)
        return SCAN_BAD;

    /* frac / 10^frac_digits units, in whole nanoseconds; always < one unit. */
    int64_t frac_ns;
    if (frac_digits <= u->exp) {
        frac_ns = frac * pow10_tab[u->exp - frac_digits] * u->mant;
    } else {
        int64_t q = pow10_tab[frac_digits - u->exp];
        frac_ns = frac / q * u->mant + frac % q * u->mant / q;
    }
    int64_t unit_ns = u->mant * pow10_tab[u->exp];
    if (too_big || whole > (INT64_MAX - frac_ns) / unit_ns)
        return SCAN_RANGE;
    *ns_out = whole * unit_ns + frac_ns;
    return SCAN_OK;
}

int duration_parse(const char *s, int64_t *ns_out)
{
    int64_t ns;

    if (!s || !ns_out || duration_scan(s, &ns) != SCAN_OK)
        return -1;
    *ns_out = ns;
    return 0;
}

/* Parse a plain decimal integer: optional '-', digits, no leading zeros (010
 * is octal to some YAML readers), nothing else. Returns an enum scan_result. */
static int int_scan(const char *s, int64_t *out)
{
    const char *p = s;
    bool neg = false, too_big = false;
    int64_t v = 0;

    if (*p == '-') {
        neg = true;
        p++;
    }
    if (!is_digit(*p) || (p[0] == '0' && p[1] != '\0'))
        return SCAN_BAD;
    for (; is_digit(*p); p++) {
        int d = *p - '0';
        if (v > (INT64_MAX - d) / 10)
            too_big = true;
        else
            v = v * 10 + d;
    }
    if (*p != '\0')
        return SCAN_BAD;
    if (too_big)
        return SCAN_RANGE;
    *out = neg ? -v : v;
    return SCAN_OK;
}

/* ------------------------------------------------------------------------
 * Loader state and error reporting
 * ------------------------------------------------------------------------ */

#define LOADER_MAX_GIVEN 64   /* more than the scalar keys of all the tables */
#define LOADER_MAX_DESIGNS 32 /* at least the registry's designs */

struct opt_loader {
    const char *path;      /* file name, first thing in every message */
    const void *given[LOADER_MAX_GIVEN]; /* fields of the scalar keys the file gave (not defaults) */
    int n_given;
    const yaml_node_t *design_impl[LOADER_MAX_DESIGNS]; /* the impls item naming design i */
    const yaml_node_t *design_node[LOADER_MAX_DESIGNS]; /* the value of its first key given */
    const yaml_node_t *keys_node;   /* lock.keys, if any */
    const yaml_node_t *fencing_node; /* workload.fencing, if any */
    const yaml_node_t *adapter_key[SCN_MAX_ADAPTERS]; /* each adapter's name in adapters */
    char *err;             /* caller's message buffer (may be NULL) */
    size_t errlen;         /* its size */
    yaml_document_t *doc;  /* the parsed document */
    struct scenario *s;    /* scenario being filled */
};

/* Write "path:line:col: message" (or "path: message" without a mark) into
 * the caller's buffer. Always returns -1 so that callers can return it. */
__attribute__((format(printf, 3, 0)))
static int vfail(struct opt_loader *L, const yaml_mark_t *m, const char *fmt, va_list ap)
{
    int n;

    if (!L->err || L->errlen == 0)
        return -1;
    if (m)
        n = snprintf(L->err, L->errlen, "%s:%zu:%zu: ", L->path, m->line + 1, m->column + 1);
    else
        n = snprintf(L->err, L->errlen, "%s: ", L->path);
    if (n >= 0 && (size_t)n < L->errlen)
        vsnprintf(L->err + n, L->errlen - (size_t)n, fmt, ap);
    return -1;
}

__attribute__((format(printf, 3, 4)))
static int fail_mark(struct opt_loader *L, const yaml_mark_t *m, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(L, m, fmt, ap);
    va_end(ap);
    return -1;
}

/* Fail at a node's start, or without a position when node is NULL. */
__attribute__((format(printf, 3, 4)))
static int fail_at(struct opt_loader *L, const yaml_node_t *node, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(L, node ? &node->start_mark : NULL, fmt, ap);
    va_end(ap);
    return -1;
}

/* Copy user text into buf for quoting in a message: control bytes become
 * '?', and long text is cut (on a UTF-8 boundary) and ends in "...", so a
 * message stays one short line whatever the file holds. */
static const char *show(char *buf, size_t n, const char *text, size_t len)
{
    size_t keep = len, o = 0;

    if (keep > n - 4) {
        keep = n - 4;
        while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80)
            keep--;
    }
    for (size_t i = 0; i < keep; i++)
        buf[o++] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
    if (keep < len) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

#define SHOW_MAX 48 /* size of a buffer for show() */

/* ------------------------------------------------------------------------
 * Node helpers
 * ------------------------------------------------------------------------ */

static yaml_node_t *node_at(struct opt_loader *L, int index)
{
    return yaml_document_get_node(L->doc, index);
}

/* A plain scalar that YAML reads as null: empty, ~ or null. */
static bool node_is_null(const yaml_node_t *n)
{
    static const char *const words[] = { "", "~", "null", "Null", "NULL" };

    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp((const char *)n->data.scalar.value, words[i]) == 0)
            return true;
    return false;
}

static const char *scalar_text(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* Report that value (at keypath) is not what was expected: a description
 * such as "an integer from 1 to 1024". */
static int wrong_type(struct opt_loader *L, const yaml_node_t *value, const char *keypath,
                      const char *expected)
{
    char shown[SHOW_MAX];

    if (node_is_null(value))
        return fail_at(L, value, "%s has no value; expected %s", keypath, expected);
    switch (value->type) {
    case YAML_MAPPING_NODE:
        return fail_at(L, value, "%s must be %s, not a mapping", keypath, expected);
    case YAML_SEQUENCE_NODE:
        return fail_at(L, value, "%s must be %s, not a sequence", keypath, expected);
    default:
        return fail_at(L, value, "%s must be %s, not '%s'", keypath, expected,
                       show(shown, sizeof shown, scalar_text(value), value->data.scalar.length));
    }
}

/* Check that value is a non-null scalar without NUL bytes. */
static int want_scalar(struct opt_loader *L, const yaml_node_t *value, const char *keypath,
                       const char *expected)
{
    if (value->type != YAML_SCALAR_NODE || node_is_null(value))
        return wrong_type(L, value, keypath, expected);
    if (strlen(scalar_text(value)) != value->data.scalar.length)
        return fail_at(L, value, "%s contains a NUL character", keypath);
    return 0;
}

/* ------------------------------------------------------------------------
 * The option tables
 * ------------------------------------------------------------------------ */

/* One key of a mapping as the parser reads it: its row, the struct its
 * value goes to, and whose row it is. */
struct key_row {
    const struct opt *o; /* the row */
    char *base;          /* the struct holding its field */
    int design;          /* registry index of the design the row is of; -1: the harness's */
};

#define SECTION_MAX_OPTS 32 /* keys of one mapping, the designs' included */

#define FIELD(f) OPT_FIELD(struct scenario, f)

static int load_impls(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
static int load_clients(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
static int load_keys(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
static int load_fencing(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
static int load_faults(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
static int load_expect(struct opt_loader *L, const yaml_node_t *value, const char *keypath);
static int load_adapters_done(struct opt_loader *L, const yaml_node_t *value,
                              const char *keypath);

/* Word lists for OPT_CHOICE are in enum order; the asserts keep them so. */
static const char *const workload_words[] = { "counter", "stock", "reentrant", NULL };
static const char *const retry_words[] = { "fixed", "backoff", NULL };
static const char *const bool_words[] = { "false", "true", NULL }; /* index = value */
static const char *const topology_words[] = { "single", "independent", "sentinel", NULL };
static const char *const persistence_words[] = { "none", "aof-everysec", "aof-always", NULL };

_Static_assert(WORKLOAD_COUNTER == 0 && WORKLOAD_STOCK == 1 && WORKLOAD_REENTRANT == 2,
               "workload_words order");
_Static_assert(RETRY_FIXED == 0 && RETRY_BACKOFF == 1, "retry_words order");
_Static_assert(PERSIST_NONE == 0 && PERSIST_AOF_EVERYSEC == 1 && PERSIST_AOF_ALWAYS == 2,
               "persistence_words order");
_Static_assert(sizeof(enum workload_kind) == sizeof(int) && sizeof(enum retry_kind) == sizeof(int),
               "OPT_CHOICE stores an int");

static const struct opt redis_opts[] = {
    { .name = "topology", .type = OPT_STR, FIELD(redis_topology), .def = "single",
      .choices = topology_words, .n_supported = 3,
      .help = "how the Redis lock store is laid out" },
    { .name = "replicas", .type = OPT_INT, FIELD(redis_replicas), .min = 1, .max = SCN_MAX_REPLICAS,
      .def = "2", .help = "replicas of the master, in the sentinel topology" },
    { .name = "masters", .type = OPT_INT, FIELD(redis_masters), .min = 1, .max = SCN_MAX_MASTERS,
      .def = "5", .flags = OPT_ODD, .help = "independent Redis masters, for redlock" },
    { .name = "persistence", .type = OPT_CHOICE, FIELD(redis_persistence),
      .choices = persistence_words, .def = "none",
      .help = "what an embedded lock store or master keeps across a restart fault" },
    { .name = NULL }
};

static const struct opt zookeeper_opts[] = {
    { .name = "ensemble", .type = OPT_INT, FIELD(zk_ensemble), .min = 1, .max = 3, .def = "1",
      .flags = OPT_ODD, .help = "number of ZooKeeper servers" },
    { .name = "session_timeout", .type = OPT_DUR, FIELD(zk_session_timeout_ns), .min = 1,
      .def = "10s", .help = "ZooKeeper session timeout of each client" },
    { .name = "force_sync", .type = OPT_CHOICE, FIELD(zk_force_sync), .choices = bool_words,
      .def = "true", .help = "fsync the transaction log before answering" },
    { .name = NULL }
};

static const struct opt backends_opts[] = {
    { .name = "redis", .type = OPT_SECTION, .sub = redis_opts, .help = "the Redis backend" },
    { .name = "zookeeper", .type = OPT_SECTION, .sub = zookeeper_opts,
      .help = "the ZooKeeper backend" },
    { .name = NULL }
};

static const struct opt run_opts[] = {
    { .name = "ops_per_client", .type = OPT_INT, FIELD(ops_per_client), .min = 0,
      .max = INT64_MAX, .def = "0", .help = "lock/unlock rounds per client, 0 for no limit" },
    { .name = "max_duration", .type = OPT_DUR, FIELD(max_duration_ns), .min = 1, .def = "60s",
      .help = "longest a run may take" },
    { .name = NULL }
};

static const struct opt lock_opts[] = {
    { .name = "key", .type = OPT_STR, FIELD(lock_key), .def = "locklab", .flags = OPT_NONEMPTY,
      .help = "name of the lock in the store" },
    { .name = "ttl", .type = OPT_DUR, FIELD(ttl_ns), .min = 1, .def = "10s",
      .help = "lock lifetime for designs with a TTL; when given, redisson's leaseTime" },
    { .name = "wait", .type = OPT_DUR, FIELD(wait_ns), .min = 0, .def = "30s",
      .help = "how long an acquire may wait, 0 to try once" },
    { .name = "retry_interval", .type = OPT_DUR, FIELD(retry_interval_ns), .min = 1,
      .def = "100ms", .help = "pause between polls of a taken lock" },
    { .name = "retry", .type = OPT_CHOICE, FIELD(retry), .choices = retry_words, .def = "fixed",
      .help = "polling policy" },
    { .name = "(each design's own keys)", .type = OPT_DESIGNS,
      .help = "the keys of the designs' own settings (lock_ops.options)" },
    { .name = "keys", .type = OPT_NODE, .fn = load_keys,
      .help = "hot (one key for all), per-client, or a list of both" },
    { .name = NULL }
};

static const struct opt workload_opts[] = {
    { .name = "kind", .type = OPT_CHOICE, FIELD(workload), .choices = workload_words,
      .def = "counter", .help = "what clients do while holding the lock" },
    { .name = "stock", .type = OPT_INT, FIELD(stock), .min = 1, .max = 1000000000, .def = "100",
      .help = "units of stock for kind stock" },
    { .name = "business", .type = OPT_DUR, FIELD(business_ns), .min = 0, .def = "0",
      .help = "time spent inside the critical section" },
    { .name = "depth", .type = OPT_INT, FIELD(depth), .min = 1, .max = 16, .def = "3",
      .help = "nested acquires of the same lock for kind reentrant" },
    { .name = "think", .type = OPT_DUR, FIELD(think_ns), .min = 0, .def = "0",
      .help = "pause outside the lock after each release" },
    { .name = "fencing", .type = OPT_NODE, .fn = load_fencing,
      .help = "stock: the store checks fencing tokens; true, false or [false, true]" },
    { .name = NULL }
};

static const struct opt top_opts[] = {
    { .name = "name", .type = OPT_STR, FIELD(name), .flags = OPT_REQUIRED | OPT_IDENT,
      .help = "the scenario's name" },
    { .name = "description", .type = OPT_STR, FIELD(description), .def = "",
      .help = "what the scenario shows" },
    { .name = "adapters", .type = OPT_NODE, .fn = load_adapters_done,
      .help = "programs driving real lock libraries, usable in impls (docs/adapters.md)" },
    { .name = "impls", .type = OPT_NODE, .fn = load_impls, .flags = OPT_REQUIRED,
      .help = "the implementations to run" },
    { .name = "backends", .type = OPT_SECTION, .sub = backends_opts,
      .help = "how the lock servers are laid out" },
    { .name = "clients", .type = OPT_NODE, .fn = load_clients,
      .help = "number of client processes (1..1024), or a list of them to sweep" },
    { .name = "run", .type = OPT_SECTION, .sub = run_opts, .help = "when a run ends" },
    { .name = "lock", .type = OPT_SECTION, .sub = lock_opts,
      .help = "how clients take the lock" },
    { .name = "workload", .type = OPT_SECTION, .sub = workload_opts,
      .help = "what clients do with the lock" },
    { .name = "faults", .type = OPT_NODE, .fn = load_faults, .help = "faults to inject" },
    { .name = "expect", .type = OPT_NODE, .fn = load_expect, .flags = OPT_LATE,
      .help = "the verdict expected of each implementation" },
    { .name = NULL }
};

/* ------------------------------------------------------------------------
 * Reading values through the tables
 * ------------------------------------------------------------------------ */

/* Join "a, b, c" from a NULL-terminated word list into buf. */
static const char *join_words(char *buf, size_t n, const char *const *words)
{
    size_t o = 0;

    buf[0] = '\0';
    for (int i = 0; words[i] && o < n; i++) {
        int w = snprintf(buf + o, n - o, "%s%s", i ? ", " : "", words[i]);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    return buf;
}

/* Join the key names of a mapping into buf. */
static const char *join_keys(char *buf, size_t n, const struct key_row *rows, int n_rows)
{
    const char *words[SECTION_MAX_OPTS + 1];
    int i;

    for (i = 0; i < n_rows; i++)
        words[i] = rows[i].o->name;
    words[i] = NULL;
    return join_words(buf, n, words);
}

/* Index of text in a NULL-terminated word list, or -1. */
static int find_word(const char *const *words, const char *text)
{
    for (int i = 0; words[i]; i++)
        if (strcmp(words[i], text) == 0)
            return i;
    return -1;
}

/* "from 1 to 1024" or ">= 0" for messages. */
static const char *range_text(char *buf, size_t n, int64_t min, int64_t max)
{
    if (max == INT64_MAX)
        snprintf(buf, n, ">= %" PRId64, min);
    else
        snprintf(buf, n, "from %" PRId64 " to %" PRId64, min, max);
    return buf;
}

/* What a key's value should look like, for wrong-type messages. */
static const char *expected_text(char *buf, size_t n, const struct opt *o)
{
    char list[160];

    switch (o->type) {
    case OPT_STR:
        snprintf(buf, n, "a string (%s)", o->help);
        break;
    case OPT_INT:
        snprintf(buf, n, "an integer %s (%s)", range_text(list, sizeof list, o->min, o->max),
                 o->help);
        break;
    case OPT_DUR:
        snprintf(buf, n, "a duration such as 250ms (%s)", o->help);
        break;
    case OPT_CHOICE:
        snprintf(buf, n, "one of: %s", join_words(list, sizeof list, o->choices));
        break;
    case OPT_SECTION:
        snprintf(buf, n, "a mapping (%s)", o->help);
        break;
    case OPT_NODE:
    case OPT_DESIGNS:
        snprintf(buf, n, "%s", o->help);
        break;
    }
    return buf;
}

/* Store a scalar value into its field in base (from the file, or a
 * default when pos is NULL). */
static int set_value(struct opt_loader *L, const struct opt *o, char *base, const char *keypath,
                     const char *text, size_t len, const yaml_node_t *pos)
{
    char *field = base + o->off;
    char shown[SHOW_MAX], list[160];
    int64_t v;
    int r, idx;

    switch (o->type) {
    case OPT_STR:
        if (o->choices) {
            idx = find_word(o->choices, text);
            if (idx < 0)
                return fail_at(L, pos, "unknown value '%s' for %s (expected one of: %s)",
                               show(shown, sizeof shown, text, len), keypath,
                               join_words(list, sizeof list, o->choices));
            if (idx >= o->n_supported)
                return fail_at(L, pos, "%s '%s' is not supported yet (this build supports: %s)",
                               keypath, text, o->choices[0]);
        }
        if (len >= o->size)
            return fail_at(L, pos, "%s is too long (%zu bytes; at most %zu)", keypath, len,
                           o->size - 1);
        if ((o->flags & (OPT_NONEMPTY | OPT_IDENT)) && len == 0)
            return fail_at(L, pos, "%s must not be empty", keypath);
        if (o->flags & OPT_IDENT)
            for (size_t i = 0; i < len; i++) {
                char c = text[i];
                if (!(is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      c == '_' || c == '.' || c == '-'))
                    return fail_at(L, pos,
                                   "%s '%s' may only contain letters, digits, '_', '.' and '-'",
                                   keypath, show(shown, sizeof shown, text, len));
            }
        memcpy(field, text, len);
        field[len] = '\0';
        return 0;

    case OPT_INT:
        r = int_scan(text, &v);
        if (r == SCAN_BAD)
            return fail_at(L, pos, "bad integer '%s' for %s (expected a plain decimal integer %s)",
                           show(shown, sizeof shown, text, len), keypath,
                           range_text(list, sizeof list, o->min, o->max));
        if (r == SCAN_RANGE || v < o->min || v > o->max)
            return fail_at(L, pos, "%s is %s, out of range (expected an integer %s)", keypath,
                           show(shown, sizeof shown, text, len),
                           range_text(list, sizeof list, o->min, o->max));
        if ((o->flags & OPT_ODD) && v % 2 == 0)
            return fail_at(L, pos, "%s must be an odd number %s, not %" PRId64, keypath,
                           range_text(list, sizeof list, o->min, o->max), v);
        if (o->size == sizeof(int)) {
            int iv = (int)v;
            memcpy(field, &iv, sizeof iv);
        } else {
            memcpy(field, &v, sizeof v);
        }
        return 0;

    case OPT_DUR:
        r = duration_scan(text, &v);
        if (r == SCAN_BAD)
            return fail_at(L, pos,
                           "bad duration '%s' for %s (expected a number and a unit: "
                           DURATION_UNITS_TEXT ")",
                           show(shown, sizeof shown, text, len), keypath);
        if (r == SCAN_RANGE)
            return fail_at(L, pos, "duration '%s' for %s is too large (at most about 292 years)",
                           show(shown, sizeof shown, text, len), keypath);
        if (v < o->min)
            return fail_at(L, pos, "%s must be greater than 0, not '%s'", keypath,
                           show(shown, sizeof shown, text, len));
        memcpy(field, &v, sizeof v);
        return 0;

    case OPT_CHOICE:
        idx = find_word(o->choices, text);
        if (idx < 0)
            return fail_at(L, pos, "unknown value '%s' for %s (expected one of: %s)",
                           show(shown, sizeof shown, text, len), keypath,
                           join_words(list, sizeof list, o->choices));
        memcpy(field, &idx, sizeof idx);
        return 0;

    case OPT_SECTION:
    case OPT_NODE:
    case OPT_DESIGNS:
        break;
    }
    return fail_at(L, pos, "internal error: %s is not a scalar option", keypath);
}

static void join_path(char *buf, size_t n, const char *prefix, const char *name)
{
    snprintf(buf, n, "%s%s%s", prefix, *prefix ? "." : "", name);
}

/* ------------------------------------------------------------------------
 * The designs' own settings
 * ------------------------------------------------------------------------ */

#define OPTIONS_ALIGN _Alignof(max_align_t)

/* Where design i's struct starts in scenario.options: the structs of the
 * designs before it in the registry, each rounded up to OPTIONS_ALIGN.
 * With i = lock_registry_count, the bytes all of them take. */
static size_t options_offset(int i)
{
    size_t off = 0;

    for (int j = 0; j < i; j++)
        off += (lock_registry[j]->options_size + OPTIONS_ALIGN - 1) / OPTIONS_ALIGN *
               OPTIONS_ALIGN;
    return off;
}

static int design_index(const struct lock_ops *ops)
{
    for (int i = 0; i < lock_registry_count; i++)
        if (lock_registry[i] == ops)
            return i;
    return -1;
}

const void *scenario_options(const struct scenario *s, const struct lock_ops *ops)
{
    int i = design_index(ops);

    if (i < 0 && adapter_is(ops))
        for (int a = 0; a < s->n_adapters; a++)
            if (strcmp(s->adapters[a].spec.name, ops->name) == 0)
                return &s->adapters[a].spec;

    if (i < 0 || !ops->options || options_offset(i + 1) > sizeof s->options)
        return NULL;
    return s->options + options_offset(i);
}

/* Append r to the n rows of a mapping (at where); -1 is an internal error:
 * too many keys, or two rows for one key. */
static int add_row(struct opt_loader *L, struct key_row *rows, int *n, struct key_row r,
                   const char *where)
{
    if (*n == SECTION_MAX_OPTS)
        return fail_at(L, NULL, "internal error: too many keys in %s", where);
    for (int j = 0; j < *n; j++)
        if (strcmp(rows[j].o->name, r.o->name) == 0)
            return fail_at(L, NULL, "internal error: two rows for key '%s' in %s", r.o->name,
                           where);
    rows[(*n)++] = r;
    return 0;
}

/* The keys of a mapping as rows: a table's rows in order, and each
 * design's own rows (but its derived ones) where the table has its
 * OPT_DESIGNS row. Returns how many, or -1 (an internal error). */
static int section_rows(struct opt_loader *L, const struct opt *opts, char *base, int design,
                        const char *where, struct key_row *rows)
{
    int n = 0;

    for (const struct opt *o = opts; o->name; o++) {
        if (o->type != OPT_DESIGNS) {
            if (add_row(L, rows, &n, (struct key_row){ o, base, design }, where) != 0)
                return -1;
            continue;
        }
        for (int i = 0; i < lock_registry_count; i++)
            for (const struct opt *d = lock_registry[i]->options; d && d->name; d++)
                if (!(d->flags & OPT_DERIVED) &&
                    add_row(L, rows, &n,
                            (struct key_row){ d, L->s->options + options_offset(i), i },
                            where) != 0)
                    return -1;
    }
    return n;
}

/* Fill in the defaults of a mapping's keys and of their mappings. */
static int apply_defaults(struct opt_loader *L, const struct opt *opts, const char *path,
                          char *base, int design)
{
    struct key_row rows[SECTION_MAX_OPTS];
    char keypath[96];
    int n = section_rows(L, opts, base, design, *path ? path : "the top-level mapping", rows);

    for (int i = 0; i < n; i++) {
        const struct opt *o = rows[i].o;
        join_path(keypath, sizeof keypath, path, o->name);
        if (o->type == OPT_SECTION) {
            if (apply_defaults(L, o->sub, keypath, rows[i].base, rows[i].design) != 0)
                return -1;
        } else if (o->def) {
            if (set_value(L, o, rows[i].base, keypath, o->def, strlen(o->def), NULL) != 0)
                return -1;
        }
    }
    return n < 0 ? -1 : 0;
}

/* Whether the file gave the scalar key stored at field, rather than
 * leaving it to its default (fio's fio_option_is_set). */
static bool given(const struct opt_loader *L, const void *field)
{
    for (int i = 0; i < L->n_given; i++)
        if (L->given[i] == field)
            return true;
    return false;
}

static bool ctx_given(const struct lock_opts_ctx *ctx, const void *field)
{
    return given(ctx->loader, field);
}

/* The designs' own settings fit in scenario.options (internal error if not). */
static int designs_fit(struct opt_loader *L)
{
    if (lock_registry_count > LOADER_MAX_DESIGNS ||
        options_offset(lock_registry_count) > sizeof L->s->options)
        return fail_at(L, NULL, "internal error: the designs' settings take %zu bytes of %zu "
                                "(SCN_OPTIONS_MAX), %d designs of %d",
                       options_offset(lock_registry_count), sizeof L->s->options,
                       lock_registry_count, LOADER_MAX_DESIGNS);
    return 0;
}

/* Once the file is read: each design derives and checks its settings. A
 * failure is placed at the design's first key in the file, else at its item
 * in impls. */
static int designs_finish(struct opt_loader *L)
{
    struct lock_opts_ctx ctx = {
        .ttl_ns = L->s->ttl_ns, .ttl_given = given(L, &L->s->ttl_ns), .given = ctx_given,
        .loader = L };

    for (int i = 0; i < lock_registry_count; i++) {
        const struct lock_ops *ops = lock_registry[i];
        struct lab_err err = { 0 };
        if (!ops->options || !ops->finish_options)
            continue;
        ctx.listed = L->design_impl[i] != NULL;
        if (ops->finish_options(L->s->options + options_offset(i), &ctx, &err) != 0)
            return fail_at(L, L->design_node[i] ? L->design_node[i] : L->design_impl[i], "%s",
                           err.msg[0] ? err.msg : "bad settings");
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Reading mappings through the tables
 * ------------------------------------------------------------------------ */

static int load_section(struct opt_loader *L, const struct opt *opts, const yaml_node_t *map,
                        const char *path, char *base, int design);

static int load_value(struct opt_loader *L, const struct key_row *r, const yaml_node_t *value,
                      const char *keypath)
{
    const struct opt *o = r->o;
    char expected[256];

    if (r->design >= 0 && !L->design_node[r->design])
        L->design_node[r->design] = value;
    switch (o->type) {
    case OPT_SECTION:
        if (value->type != YAML_MAPPING_NODE)
            return wrong_type(L, value, keypath, expected_text(expected, sizeof expected, o));
        return load_section(L, o->sub, value, keypath, r->base, r->design);
    case OPT_NODE:
        return o->fn(L, value, keypath);
    default:
        if (want_scalar(L, value, keypath, expected_text(expected, sizeof expected, o)) != 0 ||
            set_value(L, o, r->base, keypath, scalar_text(value), value->data.scalar.length,
                      value) != 0)
            return -1;
        if (L->n_given < LOADER_MAX_GIVEN)
            L->given[L->n_given++] = r->base + o->off;
        return 0;
    }
}

/* Read a mapping (at path, "" for the top level) through its rows, whose
 * fields are in base: every key must be known and appear once; required
 * keys must be there; OPT_LATE keys are read last. */
static int load_section(struct opt_loader *L, const struct opt *opts, const yaml_node_t *map,
                        const char *path, char *base, int design)
{
    const yaml_node_t *seen[SECTION_MAX_OPTS] = { NULL };
    struct key_row rows[SECTION_MAX_OPTS];
    const yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    size_t n_pairs = (size_t)(map->data.mapping.pairs.top - pairs);
    const char *where = *path ? path : "the top-level mapping";
    char keypath[96], shown[SHOW_MAX], list[256];
    int n_opts = section_rows(L, opts, base, design, where, rows);

    if (n_opts < 0)
        return -1;
    for (int late = 0; late <= 1; late++) {
        for (size_t p = 0; p < n_pairs; p++) {
            const yaml_node_t *key = node_at(L, pairs[p].key);
            const yaml_node_t *value = node_at(L, pairs[p].value);
            int i;

            if (!late) {
                if (key->type != YAML_SCALAR_NODE)
                    return fail_at(L, key, "keys in %s must be strings, not a %s", where,
                                   key->type == YAML_MAPPING_NODE ? "mapping" : "sequence");
            }
            const char *name = scalar_text(key);
            for (i = 0; i < n_opts; i++)
                if (strlen(rows[i].o->name) == key->data.scalar.length &&
                    memcmp(rows[i].o->name, name, key->data.scalar.length) == 0)
                    break;
            if (!late) {
                if (i == n_opts)
                    return fail_at(L, key, "unknown key '%s' in %s (expected one of: %s)",
                                   show(shown, sizeof shown, name, key->data.scalar.length),
                                   where, join_keys(list, sizeof list, rows, n_opts));
                if (seen[i])
                    return fail_at(L, key, "duplicate key '%s' in %s (first at %zu:%zu)",
                                   rows[i].o->name, where, seen[i]->start_mark.line + 1,
                                   seen[i]->start_mark.column + 1);
                seen[i] = key;
            }
            const struct opt *o = rows[i].o;
            if (!(o->flags & OPT_LATE) != !late)
                continue;
            join_path(keypath, sizeof keypath, path, o->name);
            if (load_value(L, &rows[i], value, keypath) != 0)
                return -1;
        }
        if (!late)
            for (int i = 0; i < n_opts; i++)
                if ((rows[i].o->flags & OPT_REQUIRED) && !seen[i]) {
                    join_path(keypath, sizeof keypath, path, rows[i].o->name);
                    return fail_at(L, map, "missing required key '%s' (%s)", keypath,
                                   rows[i].o->help);
                }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Keys with their own handlers
 * ------------------------------------------------------------------------ */

static int load_impls(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    struct scenario *s = L->s;
    const yaml_node_t *first[SCN_MAX_IMPLS];
    char itempath[96], shown[SHOW_MAX];

    if (value->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, value, keypath,
                          "a sequence of implementation names, such as [redis-lua]");
    const yaml_node_item_t *items = value->data.sequence.items.start;
    size_t n = (size_t)(value->data.sequence.items.top - items);
    if (n == 0)
        return fail_at(L, value, "%s is empty; list at least one implementation", keypath);

    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *item = node_at(L, items[i]);
        snprintf(itempath, sizeof itempath, "%s[%zu]", keypath, i);
        if (want_scalar(L, item, itempath, "an implementation name") != 0)
            return -1;
        const char *name = scalar_text(item);
        size_t len = item->data.scalar.length;
        if (s->n_impls == SCN_MAX_IMPLS)
            return fail_at(L, item, "too many implementations in %s (at most %d)", keypath,
                           SCN_MAX_IMPLS);
        if (len >= SCN_NAME_MAX || !scenario_impl(s, name))
            return fail_at(L, item,
                           "unknown implementation '%s' (run `locklab list` to see them); "
                           "a program driving a library is declared under adapters",
                           show(shown, sizeof shown, name, len));
        for (int j = 0; j < s->n_impls; j++)
            if (strcmp(s->impls[j], name) == 0)
                return fail_at(L, item,
                               "implementation '%s' is listed twice in %s (first at %zu:%zu)",
                               name, keypath, first[j]->start_mark.line + 1,
                               first[j]->start_mark.column + 1);
        if (lock_find(name))
            L->design_impl[design_index(lock_find(name))] = item;
        memcpy(s->impls[s->n_impls], name, len + 1);
        first[s->n_impls++] = item;
    }
    return 0;
}

/* A key that takes one value or a list of distinct values to sweep over
 * (clients, lock.keys). opt reads one value into the field of the run's
 * value (an int); the list goes to an int array and its count. */
struct sweep_key {
    const struct opt *opt;   /* reads one value */
    size_t steps_off;        /* offsetof(struct scenario, the int array of steps) */
    size_t n_off;            /* offsetof(struct scenario, the int count of them) */
    size_t max_steps;        /* the array's length */
    const char *one_or_list; /* what the value may be, for messages */
    const char *wrong_type;  /* ... when it is neither a scalar nor a list */
    const char *one;         /* what one item of the list may be */
    const char *steps;       /* what the list holds ("client counts") */
    const char *count;       /* how many it may hold ("1 to 16") */
};

static int load_sweep(struct opt_loader *L, const struct sweep_key *k, const yaml_node_t *value,
                      const char *keypath)
{
    char *base = (char *)L->s;
    int *cur = (int *)(base + k->opt->off);
    int *steps = (int *)(base + k->steps_off);
    int *n_steps = (int *)(base + k->n_off);
    char itempath[96];

    if (value->type == YAML_SCALAR_NODE) {
        if (want_scalar(L, value, keypath, k->one_or_list) != 0 ||
            set_value(L, k->opt, base, keypath, scalar_text(value), value->data.scalar.length,
                      value) != 0)
            return -1;
        steps[0] = *cur;
        *n_steps = 1;
        return 0;
    }
    if (value->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, value, keypath, k->wrong_type);
    const yaml_node_item_t *items = value->data.sequence.items.start;
    size_t n = (size_t)(value->data.sequence.items.top - items);
    if (n == 0 || n > k->max_steps)
        return fail_at(L, value, "%s lists %zu %s (expected %s)", keypath, n, k->steps,
                       k->count);
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *item = node_at(L, items[i]);
        snprintf(itempath, sizeof itempath, "%s[%zu]", keypath, i);
        if (want_scalar(L, item, itempath, k->one) != 0 ||
            set_value(L, k->opt, base, itempath, scalar_text(item), item->data.scalar.length,
                      item) != 0)
            return -1;
        for (int j = 0; j < *n_steps; j++)
            if (steps[j] == *cur)
                return k->opt->choices
                           ? fail_at(L, item, "%s lists %s twice", keypath, k->opt->choices[*cur])
                           : fail_at(L, item, "%s lists %d twice", keypath, *cur);
        steps[(*n_steps)++] = *cur;
    }
    *cur = steps[0];
    return 0;
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* clients: one count, or a sequence of counts to sweep. */
static const struct opt clients_opt = {
    .name = "clients", .type = OPT_INT, FIELD(clients), .min = 1, .max = SCN_MAX_CLIENTS,
    .help = "number of client processes" };
static const struct sweep_key clients_sweep = {
    .opt = &clients_opt, .steps_off = offsetof(struct scenario, client_steps),
    .n_off = offsetof(struct scenario, n_client_steps), .max_steps = SCN_MAX_STEPS,
    .one_or_list = "an integer or a list of integers",
    .wrong_type = "an integer or a list of integers such as [1, 2, 4]", .one = "an integer",
    .steps = "client counts", .count = "1 to " STR(SCN_MAX_STEPS) };

static int load_clients(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    return load_sweep(L, &clients_sweep, value, keypath);
}

/* workload.fencing: false | true, or a sequence of both. */
static const struct opt fencing_opt = {
    .name = "fencing", .type = OPT_CHOICE, FIELD(fencing), .choices = bool_words,
    .help = "fencing" };
static const struct sweep_key fencing_sweep = {
    .opt = &fencing_opt, .steps_off = offsetof(struct scenario, fence_modes),
    .n_off = offsetof(struct scenario, n_fence_modes), .max_steps = 2,
    .one_or_list = "true, false, or a list of them",
    .wrong_type = "true, false, or a list of them such as [false, true]",
    .one = "true or false", .steps = "fencing settings", .count = "1 or 2" };

_Static_assert(sizeof(((struct scenario *)0)->fencing) == sizeof(int) &&
               sizeof(((struct scenario *)0)->fence_modes) == 2 * sizeof(int),
               "a sweep key's value and steps are ints");

static int load_fencing(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    L->fencing_node = value;
    return load_sweep(L, &fencing_sweep, value, keypath);
}

/* lock.keys: hot | per-client, or a sequence of them. */
static const char *const key_words[] = { "hot", "per-client", NULL };
static const struct opt keys_opt = {
    .name = "keys", .type = OPT_CHOICE, FIELD(per_client_keys), .choices = key_words,
    .help = "key layout" };
static const struct sweep_key keys_sweep = {
    .opt = &keys_opt, .steps_off = offsetof(struct scenario, key_modes),
    .n_off = offsetof(struct scenario, n_key_modes), .max_steps = 2,
    .one_or_list = "hot, per-client, or a list of them",
    .wrong_type = "hot, per-client, or a list of them", .one = "hot or per-client",
    .steps = "key layouts", .count = "1 or 2" };

_Static_assert(sizeof(((struct scenario *)0)->clients) == sizeof(int) &&
               sizeof(((struct scenario *)0)->per_client_keys) == sizeof(int) &&
               sizeof(((struct scenario *)0)->key_modes) == 2 * sizeof(int) &&
               sizeof(((struct scenario *)0)->client_steps) == SCN_MAX_STEPS * sizeof(int),
               "a sweep key's value and steps are ints");

static int load_keys(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    L->keys_node = value;
    return load_sweep(L, &keys_sweep, value, keypath);
}

/* One scalar of a fault entry as a duration (> 0 unless zero_ok). */
static int fault_duration(struct opt_loader *L, const yaml_node_t *v, const char *kp, bool zero_ok,
                          int64_t *out)
{
    const char *what = zero_ok ? "a duration such as 500ms or 0" : "a duration such as 500ms";
    if (want_scalar(L, v, kp, what) != 0)
        return -1;
    if (duration_scan(scalar_text(v), out) != SCAN_OK || (!zero_ok && *out == 0))
        return wrong_type(L, v, kp, what);
    return 0;
}

static bool act_at_failpoint(const struct fault_action_ops *a)
{
    return a->at_failpoint != NULL;
}

static bool act_offset(const struct fault_action_ops *a)
{
    return a->keys & FA_OFFSET;
}

static bool act_timed(const struct fault_action_ops *a)
{
    return a->hit_client || a->hit_server || a->fire_server;
}

static bool act_failpoint_only(const struct fault_action_ops *a)
{
    return !act_timed(a);
}

/* Check an entry's keys against its action's row (fault_action.h: the keys
 * it takes, the targets its hooks serve, its own rule) and its target; 0
 * or -1. */
static int fault_check(struct opt_loader *L, const yaml_node_t *entry, const char *kp,
                       const struct fault_spec *f, bool has_at, bool has_every, bool has_count,
                       bool has_duration, bool has_target, bool has_window, bool has_offset)
{
    const struct fault_action_ops *row = fault_action_of(f->action);
    const char *act = row->word;
    char words[96], msg[240];
    bool fp = f->target == TARGET_FAILPOINT, server = f->target == TARGET_SERVER;
    if (fp + has_at + has_every != 1)
        return fail_at(L, entry, "%s: give exactly one of at, every or failpoint", kp);
    if (fp && has_target)
        return fail_at(L, entry, "%s: a failpoint hits the client that reaches it; "
                                 "drop target", kp);
    if (!fp && !has_target)
        return fail_at(L, entry, "%s: target is missing (holder, client:N, random-client, "
                                 "or a server: %s)", kp, fault_server_targets());
    if (fp && !row->at_failpoint)
        return fail_at(L, entry, "%s: at a failpoint the action is %s, not %s", kp,
                       fault_action_join(words, sizeof words, act_at_failpoint, " or "), act);
    if (!fp && !act_timed(row))
        return fail_at(L, entry, "%s: %s is a failpoint action %s", kp, act, row->hint);
    bool lasts = row->keys & FA_DURATION;
    if (lasts && !has_duration)
        return fail_at(L, entry, "%s: %s needs a duration", kp, act);
    if (!lasts && has_duration)
        return fail_at(L, entry, "%s: %s takes no duration", kp, act);
    if (has_at && has_count)
        return fail_at(L, entry, "%s: count goes with every or failpoint, not at", kp);
    if (has_window && f->target != TARGET_HOLDER && !f->when_holder && !(row->keys & FA_WINDOW))
        return fail_at(L, entry, "%s: window is how long to wait for a holder; the target "
                                 "is not holder and there is no when: holder", kp);
    if (!fp && row->check && row->check(f, msg, sizeof msg))
        return fail_at(L, entry, "%s: %s", kp, msg);
    if (!fp && !server && !row->hit_client)
        return fail_at(L, entry, "%s: %s applies to a server (%s), not to %s", kp, act,
                       fault_server_targets(), f->target_text);
    if ((row->keys & FA_OFFSET) && !has_offset)
        return fail_at(L, entry, "%s: %s needs an offset (such as 30s, or -5s to go back)", kp,
                       act);
    if (!(row->keys & FA_OFFSET) && has_offset)
        return fail_at(L, entry, "%s: offset goes with %s, not %s", kp,
                       fault_action_join(words, sizeof words, act_offset, " or "), act);
    if (f->when_holder && !server)
        return fail_at(L, entry, "%s: when: holder holds back a server fault until a client "
                                 "holds the lock; to hit the holder itself, write target: holder",
                       kp);
    return 0;
}

/* A clock offset: a duration, negative with a leading '-', never 0. */
static int fault_offset(struct opt_loader *L, const yaml_node_t *v, const char *kp, int64_t *out)
{
    const char *what = "a duration such as 30s, or -5s to go back";
    if (want_scalar(L, v, kp, what) != 0)
        return -1;
    const char *t = scalar_text(v);
    bool back = *t == '-';
    if (duration_scan(t + (back || *t == '+'), out) != SCAN_OK || *out == 0)
        return wrong_type(L, v, kp, what);
    if (back)
        *out = -*out;
    return 0;
}

/* The keys of a fault entry, in the order load_fault's has[] counts them,
 * and what each means (`locklab list --options`). */
static const char *const fault_keys[] = {"at", "every", "count", "duration", "action", "target",
                                         "failpoint", "window", "offset", "when", NULL};
static const char *const fault_key_help[] = {
    "when the fault fires, after the start barrier",
    "fire periodically, this far apart",
    "how many times (every: until the run ends; failpoint: 1)",
    "how long a pause or a restart's down time lasts",
    "pause, kill, restart, stop, start, failover, clock-jump, sleep (at a failpoint)",
    "holder, client:N, random-client, or a server role (redis, zookeeper-leader, ...)",
    "fire when a client reaches this failpoint (locklab list --failpoints)",
    "how long a holder target or when: holder may wait for a holder (default 1s)",
    "clock-jump: how far the server's wall clock moves (+ or -)",
    "holder: fire a server fault only while a client holds the lock",
    NULL};
_Static_assert(sizeof fault_keys == sizeof fault_key_help, "one help per fault key");

static int load_fault(struct opt_loader *L, const yaml_node_t *entry, const char *kp,
                      struct fault_spec *f)
{
    const char *const *actions = fault_action_words();
    const char *const *keys = fault_keys;
    char shown[SHOW_MAX], list[160], sub[128];
    bool has[10] = {false};
    if (entry->type != YAML_MAPPING_NODE)
        return wrong_type(L, entry, kp, "a mapping such as {at: 1s, action: pause, target: "
                                        "holder, duration: 2s}");
    memset(f, 0, sizeof *f);
    f->index = -1;
    f->window_ns = 1000000000LL;
    const yaml_node_t *action = NULL;
    for (yaml_node_pair_t *p = entry->data.mapping.pairs.start; p < entry->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k = node_at(L, p->key), *v = node_at(L, p->value);
        int w = k->type == YAML_SCALAR_NODE ? find_word(keys, scalar_text(k)) : -1;
        if (w < 0)
            return fail_at(L, k, "%s: unknown key '%s' (valid: %s)", kp,
                           k->type == YAML_SCALAR_NODE
                               ? show(shown, sizeof shown, scalar_text(k), k->data.scalar.length)
                               : "?",
                           join_words(list, sizeof list, keys));
        if (has[w])
            return fail_at(L, k, "%s: %s given twice", kp, keys[w]);
        has[w] = true;
        snprintf(sub, sizeof sub, "%s.%s", kp, keys[w]);
        int64_t n;
        switch (w) {
        case 0:
            if (fault_duration(L, v, sub, true, &f->at_ns) != 0)
                return -1;
            break;
        case 1:
            if (fault_duration(L, v, sub, false, &f->every_ns) != 0)
                return -1;
            f->at_ns = f->every_ns;
            break;
        case 2:
            if (want_scalar(L, v, sub, "an integer from 1 to 1000000") != 0 ||
                int_scan(scalar_text(v), &n) != SCAN_OK || n < 1 || n > 1000000)
                return wrong_type(L, v, sub, "an integer from 1 to 1000000");
            f->count = (int)n;
            break;
        case 3:
            if (fault_duration(L, v, sub, false, &f->duration_ns) != 0)
                return -1;
            break;
        case 4:
            if (want_scalar(L, v, sub, "an action") != 0)
                return -1;
            action = v;
            if (find_word(actions, scalar_text(v)) < 0)
                return fail_at(L, v, "%s: unknown action '%s' (valid: %s)", sub,
                               show(shown, sizeof shown, scalar_text(v), v->data.scalar.length),
                               join_words(list, sizeof list, actions));
            f->action = (enum fault_action)find_word(actions, scalar_text(v));
            break;
        case 5:
            if (want_scalar(L, v, sub, "a target") != 0)
                return -1;
            if (fault_target_parse(scalar_text(v), f) != 0)
                return fail_at(L, v, "%s: unknown target '%s' (valid: holder, client:N, "
                                     "random-client, %s)", sub,
                               show(shown, sizeof shown, scalar_text(v), v->data.scalar.length),
                               fault_server_targets());
            break;
        case 6:
            if (want_scalar(L, v, sub, "a failpoint name") != 0)
                return -1;
            if (!failpoint_known(scalar_text(v)) ||
                v->data.scalar.length >= sizeof f->target_text)
                return fail_at(L, v, "%s: no failpoint '%s' (see locklab list --failpoints)",
                               sub, show(shown, sizeof shown, scalar_text(v),
                                         v->data.scalar.length));
            f->target = TARGET_FAILPOINT;
            snprintf(f->target_text, sizeof f->target_text, "%s", scalar_text(v));
            break;
        case 7:
            if (fault_duration(L, v, sub, false, &f->window_ns) != 0)
                return -1;
            break;
        case 8:
            if (fault_offset(L, v, sub, &f->offset_ns) != 0)
                return -1;
            break;
        default:
            if (want_scalar(L, v, sub, "holder") != 0)
                return -1;
            if (strcmp(scalar_text(v), "holder") != 0)
                return fail_at(L, v, "%s: unknown value '%s' (valid: holder: fire only while "
                                     "a client holds the lock)", sub,
                               show(shown, sizeof shown, scalar_text(v), v->data.scalar.length));
            f->when_holder = true;
            break;
        }
    }
    if (!action) {
        char timed[160], fp_only[64];
        return fail_at(L, entry, "%s: action is missing (%s; %s at a failpoint)", kp,
                       fault_action_join(timed, sizeof timed, act_timed, ", "),
                       fault_action_join(fp_only, sizeof fp_only, act_failpoint_only, ", "));
    }
    if (fault_check(L, entry, kp, f, has[0], has[1], has[2], has[3], has[5], has[7], has[8]) != 0)
        return -1;
    if (!has[2])
        f->count = f->target == TARGET_FAILPOINT || has[0] ? 1 : 0; /* every: unbounded */
    f->window_given = has[7];
    f->line = (int)entry->start_mark.line + 1;
    f->column = (int)entry->start_mark.column + 1;
    return 0;
}

/* When the last timed fault of s is over at the latest (INT64_MIN: none
 * is, or one repeats without end); *which its entry. */
static int64_t last_fault_end(const struct scenario *s, int *which)
{
    int64_t last = INT64_MIN;
    for (int i = 0; i < s->n_faults; i++) {
        const struct fault_spec *f = &s->faults[i];
        if (f->target == TARGET_FAILPOINT)
            continue;
        if (f->every_ns && !f->count)
            return INT64_MIN;
        int64_t end = f->at_ns + (f->every_ns ? f->every_ns * (f->count - 1) : 0) +
                      f->duration_ns + (f->when_holder || f->target == TARGET_HOLDER ||
                                                (fault_action_of(f->action)->keys & FA_WINDOW)
                                            ? f->window_ns
                                            : 0);
        if (end >= last) {
            last = end;
            *which = i;
        }
    }
    return last;
}

/* The faults once the whole file is read: a failover without a window
 * waits for a fresh grant as long as the lease plus the business time
 * (and a second), so that a lock held at the cut has expired in the
 * replicas and another client has been granted; and a warning when the
 * run has less time after its last fault than lock.wait, since then no
 * acquire can even time out after it. */
static void faults_finish(struct opt_loader *L)
{
    struct scenario *s = L->s;
    for (int i = 0; i < s->n_faults; i++)
        if ((fault_action_of(s->faults[i].action)->keys & FA_WINDOW) && !s->faults[i].window_given)
            s->faults[i].window_ns = s->ttl_ns + s->business_ns + 1000000000LL;
    int k = -1;
    int64_t last = last_fault_end(s, &k);
    if (last == INT64_MIN || last >= s->max_duration_ns || s->wait_ns <= s->max_duration_ns - last)
        return;
    fprintf(stderr, "locklab: warning: %s:%d:%d: the run has %.2f s left after faults[%d] (over "
            "by %.2f s of %.2f s), less than lock.wait (%.2f s): no acquire can time out after "
            "the last fault\n", L->path, s->faults[k].line, s->faults[k].column,
            (double)(s->max_duration_ns - last) / 1e9, k, (double)last / 1e9,
            (double)s->max_duration_ns / 1e9, (double)s->wait_ns / 1e9);
}

static int load_faults(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    struct scenario *s = L->s;
    char kp[64];
    if (value->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, value, keypath, "a sequence of fault entries (write [] for none)");
    s->n_faults = 0;
    for (yaml_node_item_t *it = value->data.sequence.items.start;
         it < value->data.sequence.items.top; it++) {
        if (s->n_faults == FAULT_SPECS_MAX)
            return fail_at(L, node_at(L, *it), "%s: at most %d entries", keypath,
                           FAULT_SPECS_MAX);
        snprintf(kp, sizeof kp, "%s[%d]", keypath, s->n_faults);
        if (load_fault(L, node_at(L, *it), kp, &s->faults[s->n_faults]) != 0)
            return -1;
        s->n_faults++;
    }
    return 0;
}

static const char *verdict_list(char *buf, size_t n)
{
    const char *words[VERDICT_ANY - VERDICT_SAFE + 2];
    int k = 0;

    for (int v = VERDICT_SAFE; v <= VERDICT_ANY; v++)
        words[k++] = verdict_name((enum verdict)v);
    words[k] = NULL;
    return join_words(buf, n, words);
}

/* One verdict (a real one, or any) at path into *out. */
static int expect_verdict(struct opt_loader *L, const yaml_node_t *val, const char *path,
                          const char *list, enum verdict *out)
{
    char shown[SHOW_MAX], expected[192];

    snprintf(expected, sizeof expected, "a verdict (one of: %s)", list);
    if (want_scalar(L, val, path, expected) != 0)
        return -1;
    *out = verdict_parse(scalar_text(val));
    if (*out == VERDICT_NONE)
        return fail_at(L, val, "unknown verdict '%s' for %s (expected one of: %s)",
                       show(shown, sizeof shown, scalar_text(val), val->data.scalar.length),
                       path, list);
    return 0;
}

/* An expectation: one verdict for every step, or {unfenced: V, fenced: V}
 * for the steps with workload.fencing off and on (both keys required). */
static int expect_verdicts(struct opt_loader *L, const yaml_node_t *val, const char *entry,
                           const char *list, enum verdict v[2])
{
    static const char *const modes[] = { "unfenced", "fenced", NULL }; /* find_word's list */
    char path[160], shown[SHOW_MAX];
    const yaml_node_t *given_at[2] = { NULL, NULL };

    if (val->type != YAML_MAPPING_NODE) {
        if (expect_verdict(L, val, entry, list, &v[0]) != 0)
            return -1;
        v[1] = v[0];
        return 0;
    }
    const yaml_node_pair_t *pairs = val->data.mapping.pairs.start;
    size_t n = (size_t)(val->data.mapping.pairs.top - pairs);
    for (size_t p = 0; p < n; p++) {
        const yaml_node_t *key = node_at(L, pairs[p].key);
        int m = key->type == YAML_SCALAR_NODE ? find_word(modes, scalar_text(key)) : -1;
        if (m < 0)
            return fail_at(L, key, "unknown key '%s' in %s (expected unfenced and fenced)",
                           key->type == YAML_SCALAR_NODE
                               ? show(shown, sizeof shown, scalar_text(key),
                                      key->data.scalar.length)
                               : "?",
                           entry);
        if (given_at[m])
            return fail_at(L, key, "duplicate key '%s' in %s", modes[m], entry);
        given_at[m] = key;
        snprintf(path, sizeof path, "%s.%s", entry, modes[m]);
        if (expect_verdict(L, node_at(L, pairs[p].value), path, list, &v[m]) != 0)
            return -1;
    }
    for (int m = 0; m < 2; m++)
        if (!given_at[m])
            return fail_at(L, val, "%s needs both unfenced and fenced (missing: %s)", entry,
                           modes[m]);
    return 0;
}

/* ------------------------------------------------------------------------
 * adapters: programs driving real lock libraries (impls/adapter.h)
 * ------------------------------------------------------------------------ */

#define ADAPTER_FIELD(f) OPT_FIELD(struct adapter_spec, f)

static int load_adapter_command(struct opt_loader *L, const yaml_node_t *value,
                                const char *keypath);

static const struct opt adapter_opts[] = {
    { .name = "command", .type = OPT_NODE, .fn = load_adapter_command, .flags = OPT_REQUIRED,
      .help = "the program and its arguments, run without a shell in the scenario's directory" },
    { .name = "backend", .type = OPT_CHOICE, ADAPTER_FIELD(backend),
      .choices = adapter_backend_words, .flags = OPT_REQUIRED,
      .help = "the servers the harness starts for it and names in LOCKLAB_* variables" },
    { .name = "ready_timeout", .type = OPT_DUR, ADAPTER_FIELD(ready_timeout_ns), .min = 1,
      .def = "30s", .help = "how long the program may take to print ready" },
    { .name = "grace", .type = OPT_DUR, ADAPTER_FIELD(grace_ns), .min = 1, .def = "5s",
      .help = "how long past WAIT_MS a reply may take before the program counts as hung" },
    { .name = NULL }
};

/* The adapter being read: the next free entry. */
static struct adapter_spec *adapter_current(struct opt_loader *L)
{
    return &L->s->adapters[L->s->n_adapters].spec;
}

static int load_adapter_command(struct opt_loader *L, const yaml_node_t *value,
                                const char *keypath)
{
    struct adapter_spec *a = adapter_current(L);
    char itempath[128];

    if (value->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, value, keypath,
                          "a sequence: the program and its arguments, such as "
                          "[/usr/bin/python3, lock.py]");
    const yaml_node_item_t *items = value->data.sequence.items.start;
    size_t n = (size_t)(value->data.sequence.items.top - items), used = 0;
    if (n == 0)
        return fail_at(L, value, "%s is empty; give the program to run", keypath);
    if (n > ADAPTER_MAX_ARGS)
        return fail_at(L, value, "%s has %zu words (at most %d)", keypath, n, ADAPTER_MAX_ARGS);
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *item = node_at(L, items[i]);
        snprintf(itempath, sizeof itempath, "%s[%zu]", keypath, i);
        if (want_scalar(L, item, itempath, "a word of the command") != 0)
            return -1;
        size_t len = item->data.scalar.length;
        if (len == 0)
            return fail_at(L, item, "%s is empty", itempath);
        if (used + len + 1 > sizeof a->argv)
            return fail_at(L, item, "%s is too long (all words together at most %zu bytes)",
                           keypath, sizeof a->argv - 1);
        memcpy(a->argv + used, scalar_text(item), len + 1);
        used += len + 1;
    }
    a->argc = (int)n;
    return 0;
}

/* The directory of the scenario file, absolute: adapters run there. */
static int scenario_dir(struct opt_loader *L, const yaml_node_t *at, char *out, size_t n)
{
    char *real = realpath(L->s->path, NULL);
    if (!real)
        return fail_at(L, at, "cannot resolve the scenario's directory: %s", strerror(errno));
    char *slash = strrchr(real, '/');
    if (slash)
        *(slash == real ? slash + 1 : slash) = '\0';
    int w = snprintf(out, n, "%s", real);
    free(real);
    if (w < 0 || (size_t)w >= n)
        return fail_at(L, at, "the scenario's directory is too long for an adapter (at most %zu "
                              "bytes)", n - 1);
    return 0;
}

/* Read adapters: a mapping name -> {command, backend, ...}. It is read
 * before every other key, since impls and expect name the adapters. */
static int load_adapters(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    struct scenario *s = L->s;
    char shown[SHOW_MAX], path[128];

    if (value->type != YAML_MAPPING_NODE)
        return wrong_type(L, value, keypath,
                          "a mapping from adapter name to {command: [...], backend: ...}");
    const yaml_node_pair_t *pairs = value->data.mapping.pairs.start;
    size_t n = (size_t)(value->data.mapping.pairs.top - pairs);
    for (size_t p = 0; p < n; p++) {
        const yaml_node_t *key = node_at(L, pairs[p].key);
        const yaml_node_t *val = node_at(L, pairs[p].value);
        if (want_scalar(L, key, keypath, "an adapter name") != 0)
            return -1;
        const char *name = scalar_text(key);
        size_t len = key->data.scalar.length;
        if (len == 0 || len >= sizeof s->adapters[0].spec.name)
            return fail_at(L, key, "adapter name '%s' must have 1 to %zu characters",
                           show(shown, sizeof shown, name, len),
                           sizeof s->adapters[0].spec.name - 1);
        for (size_t i = 0; i < len; i++) {
            char c = name[i];
            if (!(is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                  c == '.' || c == '-'))
                return fail_at(L, key,
                               "adapter name '%s' may only contain letters, digits, '_', '.' "
                               "and '-'",
                               show(shown, sizeof shown, name, len));
        }
        if (lock_find(name))
            return fail_at(L, key, "adapter name '%s' is a built-in implementation's; "
                                   "choose another", name);
        for (int j = 0; j < s->n_adapters; j++)
            if (strcmp(s->adapters[j].spec.name, name) == 0)
                return fail_at(L, key, "adapter '%s' is declared twice in %s", name, keypath);
        if (s->n_adapters == SCN_MAX_ADAPTERS)
            return fail_at(L, key, "too many adapters in %s (at most %d)", keypath,
                           SCN_MAX_ADAPTERS);
        if (val->type != YAML_MAPPING_NODE)
            return wrong_type(L, val, name,
                              "a mapping such as {command: [prog, arg], backend: redis}");
        struct adapter_spec *a = adapter_current(L);
        memset(a, 0, sizeof *a);
        memcpy(a->name, name, len + 1);
        snprintf(path, sizeof path, "%s.%s", keypath, name);
        if (apply_defaults(L, adapter_opts, path, (char *)a, -1) != 0 ||
            load_section(L, adapter_opts, val, path, (char *)a, -1) != 0 ||
            scenario_dir(L, key, a->dir, sizeof a->dir) != 0)
            return -1;
        if (adapter_ops_init(&s->adapters[s->n_adapters].ops, a) != 0)
            return fail_at(L, key, "too many different adapters in one invocation");
        L->adapter_key[s->n_adapters++] = key;
    }
    return 0;
}

/* adapters, met again in its place among the keys: read already. */
static int load_adapters_done(struct opt_loader *L, const yaml_node_t *value,
                              const char *keypath)
{
    (void)L;
    (void)value;
    (void)keypath;
    return 0;
}

/* Read the root's adapters key first, if it has one. */
static int load_adapters_first(struct opt_loader *L, const yaml_node_t *root)
{
    const yaml_node_pair_t *pairs = root->data.mapping.pairs.start;
    size_t n = (size_t)(root->data.mapping.pairs.top - pairs);
    for (size_t p = 0; p < n; p++) {
        const yaml_node_t *key = node_at(L, pairs[p].key);
        if (key->type == YAML_SCALAR_NODE && strcmp(scalar_text(key), "adapters") == 0)
            return load_adapters(L, node_at(L, pairs[p].value), "adapters");
    }
    return 0;
}

/* An adapter's backend against the scenario's Redis topology: the Redis
 * table reaches a single store through the sentinels when the topology is
 * sentinel, so the two must agree. */
static int adapters_check(struct opt_loader *L)
{
    struct scenario *s = L->s;
    bool sentinel = strcmp(s->redis_topology, "sentinel") == 0;
    for (int i = 0; i < s->n_adapters; i++) {
        const struct adapter_spec *a = &s->adapters[i].spec;
        const char *why = NULL;
        if (a->backend == ADAPTER_SENTINEL && !sentinel)
            why = "has backend sentinel, which needs backends.redis.topology: sentinel";
        else if (a->backend == ADAPTER_REDIS && sentinel)
            why = "has backend redis, but this scenario's Redis store is behind sentinels "
                  "(topology: sentinel): declare backend sentinel";
        if (why)
            return fail_at(L, L->adapter_key[i], "adapter '%s' %s", a->name, why);
    }
    return 0;
}

const struct lock_ops *scenario_impl(const struct scenario *s, const char *name)
{
    const struct lock_ops *ops = lock_find(name);

    for (int i = 0; !ops && i < s->n_adapters; i++)
        if (strcmp(s->adapters[i].spec.name, name) == 0)
            ops = &s->adapters[i].ops;
    return ops;
}

/* expect runs after impls has been read, since its keys must name them. */
static int load_expect(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    struct scenario *s = L->s;
    const yaml_node_t *first[SCN_MAX_IMPLS + 1];
    char shown[SHOW_MAX], list[128], entry[128];

    verdict_list(list, sizeof list);
    if (value->type != YAML_MAPPING_NODE)
        return wrong_type(L, value, keypath,
                          "a mapping from implementation name (or \"*\") to verdict");

    const yaml_node_pair_t *pairs = value->data.mapping.pairs.start;
    size_t n = (size_t)(value->data.mapping.pairs.top - pairs);
    for (size_t p = 0; p < n; p++) {
        const yaml_node_t *key = node_at(L, pairs[p].key);
        const yaml_node_t *val = node_at(L, pairs[p].value);

        if (key->type != YAML_SCALAR_NODE || node_is_null(key))
            return fail_at(L, key, "keys of %s must be implementation names or \"*\"", keypath);
        const char *name = scalar_text(key);
        size_t len = key->data.scalar.length;
        bool known = strcmp(name, "*") == 0;
        for (int j = 0; j < s->n_impls && !known; j++)
            known = strcmp(s->impls[j], name) == 0;
        if (!known || strlen(name) != len)
            return fail_at(L, key, "%s names '%s', which is not in impls", keypath,
                           show(shown, sizeof shown, name, len));
        for (int j = 0; j < s->n_expect; j++)
            if (strcmp(s->expect[j].impl, name) == 0)
                return fail_at(L, key, "duplicate key '%s' in %s (first at %zu:%zu)", name,
                               keypath, first[j]->start_mark.line + 1,
                               first[j]->start_mark.column + 1);
        if (s->n_expect == SCN_MAX_IMPLS + 1)
            return fail_at(L, key, "too many entries in %s", keypath);

        snprintf(entry, sizeof entry, "%s.%s", keypath, name);
        enum verdict v[2]; /* unfenced, fenced */
        if (expect_verdicts(L, val, entry, list, v) != 0)
            return -1;
        memcpy(s->expect[s->n_expect].impl, name, len + 1);
        s->expect[s->n_expect].verdict = v[0];
        s->expect[s->n_expect].verdict_fenced = v[1];
        first[s->n_expect++] = key;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Reading the file
 * ------------------------------------------------------------------------ */

/* The reader reports a byte offset, not a line: find the line and column
 * (in characters, as libyaml counts them) by reading the file again. */
static bool offset_mark(FILE *f, size_t offset, yaml_mark_t *m)
{
    int c, prev = 0;

    if (fseek(f, 0, SEEK_SET) != 0)
        return false;
    *m = (yaml_mark_t){ .index = offset };
    for (size_t i = 0; i < offset; i++, prev = c) {
        if ((c = getc(f)) == EOF)
            return false;
        if (c == '\n' && prev == '\r')
            continue; /* CR LF is one break */
        if (c == '\n' || c == '\r') {
            m->line++;
            m->column = 0;
        } else if ((c & 0xC0) != 0x80) {
            m->column++;
        }
    }
    return true;
}

static int syntax_error(struct opt_loader *L, const yaml_parser_t *p, FILE *f)
{
    const char *problem = p->problem ? p->problem : "unknown problem";
    const yaml_mark_t *cm = &p->context_mark;
    yaml_mark_t m;

    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return fail_mark(L, NULL, "out of memory while reading YAML");
    case YAML_READER_ERROR:
        if (offset_mark(f, p->problem_offset, &m))
            return fail_mark(L, &m, "YAML syntax error: %s", problem);
        return fail_mark(L, NULL, "YAML syntax error: %s at byte offset %zu", problem,
                         p->problem_offset);
    default:
        if (!p->context)
            return fail_mark(L, &p->problem_mark, "YAML syntax error: %s", problem);
        return fail_mark(L, &p->problem_mark, "YAML syntax error: %s %s that starts at %zu:%zu",
                         problem, p->context, cm->line + 1, cm->column + 1);
    }
}

/* Load the one document of the stream into doc; anything after it is an
 * error. On failure nothing is left to free. */
static int read_document(struct opt_loader *L, yaml_parser_t *p, FILE *f, yaml_document_t *doc)
{
    yaml_document_t next;
    static const yaml_mark_t file_start = { 0, 0, 0 };

    if (!yaml_parser_load(p, doc))
        return syntax_error(L, p, f);
    if (!yaml_document_get_root_node(doc)) {
        yaml_document_delete(doc);
        return fail_mark(L, &file_start, "the file is empty; expected a scenario mapping");
    }
    if (!yaml_parser_load(p, &next)) {
        yaml_document_delete(doc);
        return syntax_error(L, p, f);
    }
    bool more = yaml_document_get_root_node(&next) != NULL;
    yaml_mark_t at = next.start_mark;
    yaml_document_delete(&next);
    if (more) {
        yaml_document_delete(doc);
        return fail_mark(L, &at, "a second YAML document starts here; "
                                 "a scenario file holds exactly one");
    }
    return 0;
}

static int load_root(struct opt_loader *L)
{
    const yaml_node_t *root = yaml_document_get_root_node(L->doc);

    if (node_is_null(root))
        return fail_at(L, root, "the document is empty; expected a scenario mapping");
    if (root->type != YAML_MAPPING_NODE)
        return wrong_type(L, root, "the top level",
                          "a mapping of scenario keys (name, impls, ...)");
    if (load_adapters_first(L, root) != 0 ||
        load_section(L, top_opts, root, "", (char *)L->s, -1) != 0 ||
        adapters_check(L) != 0)
        return -1;
    struct scenario *s = L->s;
    if (s->n_client_steps == 0) { /* no clients key: one client */
        s->clients = s->client_steps[0] = 1;
        s->n_client_steps = 1;
    }
    if (s->n_key_modes == 0) {
        s->key_modes[0] = s->per_client_keys = KEYS_HOT;
        s->n_key_modes = 1;
    }
    if (s->n_fence_modes == 0) {
        s->fence_modes[0] = s->fencing = 0;
        s->n_fence_modes = 1;
    }
    for (int i = 0; i < s->n_fence_modes; i++)
        if (s->fence_modes[i] && s->workload != WORKLOAD_STOCK)
            return fail_at(L, L->fencing_node,
                           "workload.fencing needs kind stock (the stock store is the "
                           "resource that checks the tokens)");
    for (int i = 0; i < s->n_key_modes; i++)
        if (s->key_modes[i] == KEYS_PER_CLIENT && s->workload == WORKLOAD_STOCK)
            return fail_at(L, L->keys_node,
                           "lock.keys per-client needs the counter or reentrant workload "
                           "(the stock is one resource, guarded by one key)");
    for (int j = 0; j < s->n_impls; j++) { /* lock.h: LOCK_CAP_OPTIMISTIC */
        const struct lock_ops *ops = scenario_impl(s, s->impls[j]);
        if (ops && (ops->caps & LOCK_CAP_OPTIMISTIC) && s->workload != WORKLOAD_STOCK)
            return fail_at(L, L->design_impl[design_index(ops)],
                           "%s keeps its own stock and its version: it needs workload kind "
                           "stock", ops->name);
    }
    faults_finish(L);
    return designs_finish(L);
}

int scenario_load(const char *path, struct scenario *out, char *err, size_t errlen)
{
    struct scenario s;
    struct opt_loader L = { .path = path ? path : "(null)", .err = err, .errlen = errlen, .s = &s };
    yaml_parser_t parser;
    yaml_document_t doc;
    struct stat st;
    int rc;

    if (err && errlen)
        err[0] = '\0';
    if (!path || !out)
        return fail_mark(&L, NULL, "no scenario file or no place to load it into");
    memset(&s, 0, sizeof s);
    if (strlen(path) >= sizeof s.path)
        return fail_mark(&L, NULL, "the path is too long (at most %zu bytes)", sizeof s.path - 1);
    memcpy(s.path, path, strlen(path) + 1);
    if (designs_fit(&L) != 0 || apply_defaults(&L, top_opts, "", (char *)&s, -1) != 0)
        return -1;

    FILE *f = fopen(path, "rb");
    if (!f)
        return fail_mark(&L, NULL, "cannot open: %s", strerror(errno));
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        return fail_mark(&L, NULL, "cannot open: %s", strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        fclose(f);
        return fail_mark(&L, NULL, "is a directory");
    }
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return fail_mark(&L, NULL, "out of memory while reading YAML");
    }
    yaml_parser_set_input_file(&parser, f);
    rc = read_document(&L, &parser, f, &doc);
    yaml_parser_delete(&parser);
    fclose(f);
    if (rc != 0)
        return -1;

    L.doc = &doc;
    rc = load_root(&L);
    yaml_document_delete(&doc);
    if (rc == 0)
        *out = s;
    return rc;
}

int scenario_defaults(struct scenario *out)
{
    struct opt_loader L = { .path = "(defaults)", .s = out };

    memset(out, 0, sizeof *out);
    if (designs_fit(&L) != 0 || apply_defaults(&L, top_opts, "", (char *)out, -1) != 0)
        return -1;
    return designs_finish(&L);
}

enum verdict scenario_expected(const struct scenario *s, const char *impl)
{
    enum verdict star = VERDICT_NONE;

    for (int i = 0; i < s->n_expect; i++) {
        enum verdict v = s->fencing ? s->expect[i].verdict_fenced : s->expect[i].verdict;
        if (strcmp(s->expect[i].impl, impl) == 0)
            return v;
        if (strcmp(s->expect[i].impl, "*") == 0)
            star = v;
    }
    return star;
}

/* ------------------------------------------------------------------------
 * The key reference: every key a file takes, printed from the rows above
 * (and each design's), for `locklab list --options` and the docs' test
 * ------------------------------------------------------------------------ */

static void print_rows(FILE *f, const struct opt *rows, const char *path, const char *owner)
{
    char key[128];

    for (const struct opt *o = rows; o && o->name; o++) {
        if (o->flags & OPT_DERIVED)
            continue; /* not a key of the file */
        if (o->type == OPT_DESIGNS) {
            for (int i = 0; i < lock_registry_count; i++)
                print_rows(f, lock_registry[i]->options, path, lock_registry[i]->name);
            continue;
        }
        snprintf(key, sizeof key, "%s%s%s", path, *path ? "." : "", o->name);
        if (o->type == OPT_SECTION) {
            print_rows(f, o->sub, key, owner);
            continue;
        }
        bool named = owner && strncmp(o->help, owner, strlen(owner)) == 0;
        fprintf(f, "%-36s %-9s %s%s%s%s\n", key, !o->def ? "-" : *o->def ? o->def : "\"\"",
                owner && !named ? owner : "", owner && !named ? ": " : "", o->help,
                (o->flags & OPT_REQUIRED) ? " (required)" : "");
        if (o->fn == load_adapters_done)
            print_rows(f, adapter_opts, "adapters.NAME", NULL);
        if (o->fn == load_faults)
            for (int i = 0; fault_keys[i]; i++) {
                snprintf(key, sizeof key, "faults[].%s", fault_keys[i]);
                fprintf(f, "%-36s %-9s %s\n", key, "-", fault_key_help[i]);
            }
    }
}

void scenario_print_keys(FILE *f)
{
    print_rows(f, top_opts, "", NULL);
}
