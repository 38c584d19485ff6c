/*
 * explore_text.c - edits of a scenario's text at the places libyaml's
 * marks give: the lines of a top-level key (to comment an explore: block
 * out, or to replace impls: and expect: in a repro file), and the bytes of
 * one scalar at a dotted path (to splice a shorter duration or fewer
 * clients in). The text is never rebuilt from structs: what the loader
 * reads is the file as its author wrote it, with these edits.
 *
 * libyaml counts a mark's index in characters, not bytes; a mark is turned
 * into a byte offset from its line and column (UTF-8 continuation bytes are
 * not characters), so a comment with an accent does not shift the splice.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "explore.h"

/* The byte offset of mark m in text. */
static size_t mark_byte(const char *text, size_t len, const yaml_mark_t *m)
{
    size_t i = 0;
    for (size_t line = 0; line < m->line && i < len; i++)
        if (text[i] == '\n')
            line++;
    for (size_t col = 0; col < m->column && i < len; col++) {
        i++;
        while (i < len && ((unsigned char)text[i] & 0xC0) == 0x80)
            i++;
    }
    return i;
}

static int fail(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

int explore_top_keys(const char *text, size_t len, const char *path, struct xtop *out, int *n,
                     char *err, size_t errlen)
{
    yaml_parser_t p;
    yaml_event_t e;
    int depth = 0, rc = 0;
    bool want_key = false; /* at depth 1: the next scalar or node is a key */
    *n = 0;
    if (!yaml_parser_initialize(&p))
        return fail(err, errlen, "%s: out of memory", path);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    for (bool done = false; !done && rc == 0;) {
        if (!yaml_parser_parse(&p, &e)) {
            rc = fail(err, errlen, "%s:%zu:%zu: YAML syntax error: %s", path,
                      p.problem_mark.line + 1, p.problem_mark.column + 1,
                      p.problem ? p.problem : "unknown problem");
            break;
        }
        bool key = depth == 1 && want_key;
        switch (e.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_MAPPING_START_EVENT:
            if (depth == 0 && e.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE)
                rc = fail(err, errlen, "%s:%zu:%zu: an explore file's top level must be a "
                          "block mapping (a key a line)", path, e.start_mark.line + 1,
                          e.start_mark.column + 1);
            if (depth == 0)
                want_key = true;
            else if (depth == 1)
                want_key = !want_key;
            depth++;
            break;
        case YAML_SEQUENCE_START_EVENT:
            if (depth == 0)
                rc = fail(err, errlen, "%s:%zu:%zu: the top level must be a mapping of scenario "
                          "keys", path, e.start_mark.line + 1, e.start_mark.column + 1);
            if (depth == 1)
                want_key = !want_key;
            depth++;
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            depth--;
            break;
        case YAML_SCALAR_EVENT:
            if (depth == 0)
                rc = fail(err, errlen, "%s:%zu:%zu: the top level must be a mapping of scenario "
                          "keys", path, e.start_mark.line + 1, e.start_mark.column + 1);
            if (key) {
                if (*n == XPL_TOP_MAX) {
                    rc = fail(err, errlen, "%s: more than %d top-level keys", path, XPL_TOP_MAX);
                    break;
                }
                struct xtop *t = &out[(*n)++];
                snprintf(t->key, sizeof t->key, "%s", (const char *)e.data.scalar.value);
                t->start = mark_byte(text, len, &e.start_mark);
                while (t->start > 0 && text[t->start - 1] != '\n')
                    t->start--; /* the key's whole line */
                t->line = (int)e.start_mark.line + 1;
                t->column = (int)e.start_mark.column + 1;
            }
            if (depth == 1)
                want_key = !want_key;
            break;
        case YAML_ALIAS_EVENT:
            if (depth == 1)
                want_key = !want_key;
            break;
        default:
            break;
        }
        yaml_event_delete(&e);
    }
    yaml_parser_delete(&p);
    for (int i = 0; rc == 0 && i < *n; i++)
        out[i].end = i + 1 < *n ? out[i + 1].start : len;
    return rc;
}

char *explore_comment_key(const char *text, size_t len, const struct xtop *keys, int n,
                          const char *key)
{
    const struct xtop *k = NULL;
    for (int i = 0; i < n && !k; i++)
        if (strcmp(keys[i].key, key) == 0)
            k = &keys[i];
    size_t lines = 0;
    for (size_t i = k ? k->start : 0; k && i < k->end; i++)
        lines += text[i] == '\n';
    char *out = malloc(len + 2 * (lines + 1) + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        bool in = k && i >= k->start && i < k->end;
        if (in && (i == k->start || text[i - 1] == '\n')) {
            out[o++] = '#';
            out[o++] = ' ';
        }
        out[o++] = text[i];
    }
    out[o] = '\0';
    return out;
}

int explore_scalar_at(const char *text, size_t len, const char *path, size_t *start,
                      size_t *end)
{
    enum { DEPTH = 8 };
    yaml_parser_t p;
    yaml_event_t e;
    char keys[DEPTH][64];
    bool is_map[DEPTH], want_key[DEPTH];
    int depth = 0, rc = -1;
    if (!yaml_parser_initialize(&p))
        return -1;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    for (bool done = false; !done;) {
        if (!yaml_parser_parse(&p, &e))
            break;
        /* the value at the current level: its dotted path */
        bool value = depth > 0 && is_map[depth - 1] && !want_key[depth - 1];
        bool key = depth > 0 && is_map[depth - 1] && want_key[depth - 1];
        switch (e.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
            if (depth > 0 && is_map[depth - 1])
                want_key[depth - 1] = true; /* this node was the value */
            if (depth == DEPTH) {
                done = true;
                break;
            }
            is_map[depth] = e.type == YAML_MAPPING_START_EVENT;
            want_key[depth] = true;
            keys[depth][0] = '\0';
            depth++;
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            depth--;
            break;
        case YAML_SCALAR_EVENT:
            if (key) {
                snprintf(keys[depth - 1], sizeof keys[0], "%s", (const char *)e.data.scalar.value);
                want_key[depth - 1] = false;
                break;
            }
            if (value) {
                want_key[depth - 1] = true;
                char dotted[256] = "";
                bool whole = true;
                for (int i = 0; i < depth; i++) {
                    size_t u = strlen(dotted);
                    whole &= is_map[i];
                    snprintf(dotted + u, sizeof dotted - u, "%s%s", i ? "." : "", keys[i]);
                }
                if (whole && strcmp(dotted, path) == 0) {
                    *start = mark_byte(text, len, &e.start_mark);
                    *end = mark_byte(text, len, &e.end_mark);
                    rc = 0;
                    done = true;
                }
            }
            break;
        case YAML_ALIAS_EVENT:
            if (depth > 0 && is_map[depth - 1])
                want_key[depth - 1] = !want_key[depth - 1];
            break;
        default:
            break;
        }
        yaml_event_delete(&e);
    }
    yaml_parser_delete(&p);
    return rc;
}

char *explore_splice(const char *text, size_t len, size_t start, size_t end, const char *with)
{
    size_t w = strlen(with);
    if (start > end || end > len)
        return NULL;
    char *out = malloc(len - (end - start) + w + 1);
    if (!out)
        return NULL;
    memcpy(out, text, start);
    memcpy(out + start, with, w);
    memcpy(out + start + w, text + end, len - end);
    out[len - (end - start) + w] = '\0';
    return out;
}
