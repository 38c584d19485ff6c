/*
 * opt_engine.c - the option-row engine: reads a YAML mapping through rows
 * of struct opt (common/opt.h) into the struct the rows describe.
 *
 * What each key means is described once, as a row (name, type, field,
 * range, default, help), in the manner of fio's options.c. The same rows
 * fill in the defaults (apply_defaults), drive the parsing and validation
 * (load_section: every key known and given once, required keys present,
 * OPT_LATE keys read last) and produce the "expected one of: ..." lists in
 * messages. Every message names file:line:column of the node at fault
 * (fail_at), since libyaml's document API keeps each node's start mark.
 *
 * Rows that belong to somebody else stand in a table as one placeholder
 * row: OPT_DESIGNS, where every lock design's own rows (lock_ops.options)
 * are keys of the mapping, each design's values going to its own struct in
 * scenario.options (options_offset). A section's fields are at its row's
 * offset in the struct of the mapping it stands in (0 for most), so that
 * a section may fill a struct of its own inside a blob: the loader gives
 * each store's settings a section so (harness/loader/load_stores.c). The
 * scenario loader (harness/loader/) and the fault loader use this engine;
 * none has a parser of its own.
 */
#include "opt_engine.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "lex.h"
#include "lock.h"

const char *const bool_words[] = { "false", "true", NULL }; /* index = value */

/* ------------------------------------------------------------------------
 * Loader state and error reporting
 * ------------------------------------------------------------------------ */

/* Add "path:line:col: message" (or "path: message" without a mark) to the
 * caller's buffer, a line of its own after the first. Always returns -1 so
 * that callers can return it. */
__attribute__((format(printf, 3, 0)))
static int vfail(struct opt_loader *L, const yaml_mark_t *m, const char *fmt, va_list ap)
{
    if (++L->n_errors > LOADER_MAX_ERRORS || !L->err || L->errlen == 0)
        return -1;
    char *out = L->err + L->err_used;
    size_t room = L->errlen - L->err_used;
    int n = 0;

    if (L->err_used > 0 && room > 1) {
        *out++ = '\n';
        room--;
    }
    if (room <= 1)
        return -1;
    if (m)
        n = snprintf(out, room, "%s:%zu:%zu: ", L->path, m->line + 1, m->column + 1);
    else
        n = snprintf(out, room, "%s: ", L->path);
    if (n >= 0 && (size_t)n < room)
        vsnprintf(out + n, room - (size_t)n, fmt, ap);
    L->err_used += (size_t)(out - (L->err + L->err_used)) + strlen(out);
    return -1;
}

void loader_errors_done(struct opt_loader *L)
{
    int more = L->n_errors - LOADER_MAX_ERRORS;

    if (more > 0 && L->err && L->err_used + 1 < L->errlen)
        snprintf(L->err + L->err_used, L->errlen - L->err_used,
                 "\n%s: %d more error%s not shown (fix these first)", L->path, more,
                 more == 1 ? "" : "s");
}

int fail_mark(struct opt_loader *L, const yaml_mark_t *m, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(L, m, fmt, ap);
    va_end(ap);
    return -1;
}

/* Fail at a node's start, or without a position when node is NULL. */
int fail_at(struct opt_loader *L, const yaml_node_t *node, const char *fmt, ...)
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
const char *show(char *buf, size_t n, const char *text, size_t len)
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


/* ------------------------------------------------------------------------
 * Node helpers
 * ------------------------------------------------------------------------ */

yaml_node_t *node_at(struct opt_loader *L, int index)
{
    return yaml_document_get_node(L->doc, index);
}

/* A plain scalar that YAML reads as null: empty, ~ or null. */
bool node_is_null(const yaml_node_t *n)
{
    static const char *const words[] = { "", "~", "null", "Null", "NULL" };

    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp((const char *)n->data.scalar.value, words[i]) == 0)
            return true;
    return false;
}

const char *scalar_text(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* Report that value (at keypath) is not what was expected: a description
 * such as "an integer from 1 to 1024". */
int wrong_type(struct opt_loader *L, const yaml_node_t *value, const char *keypath,
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
int want_scalar(struct opt_loader *L, const yaml_node_t *value, const char *keypath,
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

/* ------------------------------------------------------------------------
 * Reading values through the tables
 * ------------------------------------------------------------------------ */

/* Join "a, b, c" from a NULL-terminated word list into buf. */
const char *join_words(char *buf, size_t n, const char *const *words)
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
int find_word(const char *const *words, const char *text)
{
    for (int i = 0; words[i]; i++)
        if (strcmp(words[i], text) == 0)
            return i;
    return -1;
}

const char *did_you_mean(char *buf, size_t n, const char *text, size_t len,
                         const char *const *words)
{
    const char *near = lex_nearest(text, len, words, 0);

    if (near)
        snprintf(buf, n, "; did you mean '%s'?", near);
    else if (n)
        buf[0] = '\0';
    return buf;
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
int set_value(struct opt_loader *L, const struct opt *o, char *base, const char *keypath,
              const char *text, size_t len, const yaml_node_t *pos)
{
    char *field = base + o->off;
    char shown[SHOW_MAX], list[160], near[96];
    int64_t v;
    int r, idx;

    switch (o->type) {
    case OPT_STR:
        if (o->choices) {
            idx = find_word(o->choices, text);
            if (idx < 0)
                return fail_at(L, pos, "unknown value '%s' for %s (expected one of: %s)%s",
                               show(shown, sizeof shown, text, len), keypath,
                               join_words(list, sizeof list, o->choices),
                               did_you_mean(near, sizeof near, text, len, o->choices));
            if (idx >= o->n_supported)
                return fail_at(L, pos, "%s '%s' is not supported yet (this build supports: %s)",
                               keypath, text, o->choices[0]);
        }
        if (len >= o->size)
            return fail_at(L, pos, "%s is too long (%zu bytes; at most %zu)", keypath, len,
                           o->size - 1);
        if ((o->flags & (OPT_NONEMPTY | OPT_IDENT)) && len == 0)
            return fail_at(L, pos, "%s must not be empty", keypath);
        if ((o->flags & OPT_IDENT) && !lex_is_ident(text, len))
            return fail_at(L, pos, "%s '%s' may only contain letters, digits, '_', '.' and '-'",
                           keypath, show(shown, sizeof shown, text, len));
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
            return fail_at(L, pos, "unknown value '%s' for %s (expected one of: %s)%s",
                           show(shown, sizeof shown, text, len), keypath,
                           join_words(list, sizeof list, o->choices),
                           did_you_mean(near, sizeof near, text, len, o->choices));
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
 * The designs' own settings, where a table has its OPT_DESIGNS row
 * ------------------------------------------------------------------------ */

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

/* A row several designs share (the very same struct opt: the ZooKeeper
 * designs' on_disconnect) is one key, read into the first design's struct
 * and copied to the others' (designs_finish). */
static bool shared_row_seen(const struct key_row *rows, int n, const struct opt *d)
{
    for (int j = 0; j < n; j++)
        if (rows[j].o == d)
            return true;
    return false;
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
                if (!(d->flags & OPT_DERIVED) && !shared_row_seen(rows, n, d) &&
                    add_row(L, rows, &n,
                            (struct key_row){ d, L->s->options + options_offset(i), i },
                            where) != 0)
                    return -1;
    }
    return n;
}

/* Fill in the defaults of a mapping's keys and of their mappings. */
int apply_defaults(struct opt_loader *L, const struct opt *opts, const char *path,
                   char *base, int design)
{
    struct key_row rows[SECTION_MAX_OPTS];
    char keypath[96];
    int n = section_rows(L, opts, base, design, *path ? path : "the top-level mapping", rows);

    for (int i = 0; i < n; i++) {
        const struct opt *o = rows[i].o;
        join_path(keypath, sizeof keypath, path, o->name);
        if (o->type == OPT_SECTION) {
            if (apply_defaults(L, o->sub, keypath, rows[i].base + o->off, rows[i].design) != 0)
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
bool opt_given(const struct opt_loader *L, const void *field)
{
    for (int i = 0; i < L->n_given; i++)
        if (L->given[i] == field)
            return true;
    return false;
}

/* ------------------------------------------------------------------------
 * Reading mappings through the tables
 * ------------------------------------------------------------------------ */

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
        return load_section(L, o->sub, value, keypath, r->base + o->off, r->design);
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
int load_section(struct opt_loader *L, const struct opt *opts, const yaml_node_t *map,
                 const char *path, char *base, int design)
{
    const yaml_node_t *seen[SECTION_MAX_OPTS] = { NULL };
    struct key_row rows[SECTION_MAX_OPTS];
    const char *names[SECTION_MAX_OPTS + 1];
    const yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    size_t n_pairs = (size_t)(map->data.mapping.pairs.top - pairs);
    const char *where = *path ? path : "the top-level mapping";
    char keypath[96], shown[SHOW_MAX], list[256], near[96];
    int n_opts = section_rows(L, opts, base, design, where, rows);
    int errors = L->n_errors;

    if (n_opts < 0)
        return -1;
    for (int i = 0; i < n_opts; i++)
        names[i] = rows[i].o->name;
    names[n_opts] = NULL;
    for (int late = 0; late <= 1; late++) {
        for (size_t p = 0; p < n_pairs; p++) {
            const yaml_node_t *key = node_at(L, pairs[p].key);
            const yaml_node_t *value = node_at(L, pairs[p].value);
            int i;

            if (key->type != YAML_SCALAR_NODE) {
                if (!late)
                    fail_at(L, key, "keys in %s must be strings, not a %s", where,
                            key->type == YAML_MAPPING_NODE ? "mapping" : "sequence");
                continue;
            }
            const char *name = scalar_text(key);
            size_t len = key->data.scalar.length;
            for (i = 0; i < n_opts; i++)
                if (strlen(rows[i].o->name) == len && memcmp(rows[i].o->name, name, len) == 0)
                    break;
            if (i == n_opts) {
                if (!late)
                    fail_at(L, key, "unknown key '%s' in %s (expected one of: %s)%s",
                            show(shown, sizeof shown, name, len), where,
                            join_keys(list, sizeof list, rows, n_opts),
                            did_you_mean(near, sizeof near, name, len, names));
                continue;
            }
            if (!late) {
                if (seen[i]) {
                    fail_at(L, key, "duplicate key '%s' in %s (first at %zu:%zu)",
                            rows[i].o->name, where, seen[i]->start_mark.line + 1,
                            seen[i]->start_mark.column + 1);
                    continue;
                }
                seen[i] = key;
            } else if (seen[i] != key) {
                continue; /* a duplicate, reported */
            }
            const struct opt *o = rows[i].o;
            if (!(o->flags & OPT_LATE) != !late)
                continue;
            join_path(keypath, sizeof keypath, path, o->name);
            load_value(L, &rows[i], value, keypath);
        }
        if (!late)
            for (int i = 0; i < n_opts; i++)
                if ((rows[i].o->flags & OPT_REQUIRED) && !seen[i]) {
                    join_path(keypath, sizeof keypath, path, rows[i].o->name);
                    fail_at(L, map, "missing required key '%s' (%s)", keypath,
                            rows[i].o->help);
                }
    }
    return L->n_errors > errors ? -1 : 0;
}
