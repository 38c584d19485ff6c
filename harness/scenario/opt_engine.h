/*
 * opt_engine.h - the option-row engine the loaders share (opt_engine.c):
 * its state, its error reporting and its readers of YAML nodes.
 *
 * Everything here is for the loaders of scenario files (harness/scenario/)
 * and of their fault entries; the rest of the program sees only the
 * loaded struct scenario (scenario.h). A reader returns 0, or -1 with one
 * message "file:line:column: what is wrong" written into the caller's
 * buffer; the first failure ends the load.
 */
#ifndef LOCKLAB_OPT_ENGINE_H
#define LOCKLAB_OPT_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "opt.h"
#include "scenario.h"

#define LOADER_MAX_GIVEN 64   /* more than the scalar keys of all the tables */
#define LOADER_MAX_DESIGNS 32 /* at least the registry's designs */
#define LOADER_MAX_ERRORS 10  /* errors one load reports; the rest are counted */

/* The state of one load (common/opt.h names it for the rows' handlers). */
struct opt_loader {
    const char *path;      /* file name, first thing in every message */
    const void *given[LOADER_MAX_GIVEN]; /* fields of the scalar keys the file gave (not defaults) */
    int n_given;
    const yaml_node_t *design_impl[LOADER_MAX_DESIGNS]; /* the impls item naming design i */
    const yaml_node_t *design_node[LOADER_MAX_DESIGNS]; /* the value of its first key given */
    const yaml_node_t *keys_node;   /* lock.keys, if any */
    const yaml_node_t *fencing_node; /* workload.fencing, if any */
    const yaml_node_t *adapter_key[SCN_MAX_ADAPTERS]; /* each adapter's name in adapters */
    char *err;             /* caller's message buffer (may be NULL): one line per error */
    size_t errlen;         /* its size */
    size_t err_used;       /* bytes of it written */
    int n_errors;          /* errors found so far (the first LOADER_MAX_ERRORS written) */
    bool impls_failed;     /* impls had an error: expect does not check names against it */
    bool adapters_failed;  /* adapters had one: impls does not report unknown names */
    yaml_document_t *doc;  /* the parsed document */
    struct scenario *s;    /* scenario being filled */
};

/* Fail at mark m ("path:line:col: ..."), or with the path alone when m is
 * NULL: the message is added to the caller's buffer as one more line, and
 * the load goes on where it can (the next key, item or entry) so that one
 * run of the loader reports every error it can find, up to
 * LOADER_MAX_ERRORS. Always -1, so that a caller can return it. */
__attribute__((format(printf, 3, 4)))
int fail_mark(struct opt_loader *L, const yaml_mark_t *m, const char *fmt, ...);

/* Fail at a node's start, or without a position when node is NULL. */
__attribute__((format(printf, 3, 4)))
int fail_at(struct opt_loader *L, const yaml_node_t *node, const char *fmt, ...);

#define SHOW_MAX 48 /* size of a buffer for show() */

/* User text made fit to quote in a message (control bytes '?', long text
 * cut on a UTF-8 boundary and ending in "..."), in buf of n bytes. */
const char *show(char *buf, size_t n, const char *text, size_t len);

yaml_node_t *node_at(struct opt_loader *L, int index);

/* A plain scalar that YAML reads as null: empty, ~ or null. */
bool node_is_null(const yaml_node_t *n);

const char *scalar_text(const yaml_node_t *n);

/* Fail: value (at keypath) is not what was expected, a description such
 * as "an integer from 1 to 1024". */
int wrong_type(struct opt_loader *L, const yaml_node_t *value, const char *keypath,
               const char *expected);

/* 0 when value is a non-null scalar without NUL bytes, else fail. */
int want_scalar(struct opt_loader *L, const yaml_node_t *value, const char *keypath,
                const char *expected);

/* "a, b, c" from a NULL-terminated word list, in buf of n bytes. */
const char *join_words(char *buf, size_t n, const char *const *words);

/* The index of text in a NULL-terminated word list, or -1. */
int find_word(const char *const *words, const char *text);

/* " (did you mean 'x'?)" when a word of words (NULL-terminated) is near
 * text (len bytes), else "": for messages, in buf of n bytes. */
const char *did_you_mean(char *buf, size_t n, const char *text, size_t len,
                         const char *const *words);

/* Close the caller's message: a last line telling how many errors were
 * not shown, when more than LOADER_MAX_ERRORS were found. */
void loader_errors_done(struct opt_loader *L);

/* "false", "true": an OPT_CHOICE list whose index is the value. */
extern const char *const bool_words[];

/* Store the scalar text (len bytes) as row o's value into its field in
 * base; pos is where the text stands in the file (NULL for a default). */
int set_value(struct opt_loader *L, const struct opt *o, char *base, const char *keypath,
              const char *text, size_t len, const yaml_node_t *pos);

/* Fill in the defaults of the rows opts (a mapping at path, "" for the top
 * level) and of their nested mappings, into base. design: the registry
 * index of the design the rows are of, -1 for the harness's own. */
int apply_defaults(struct opt_loader *L, const struct opt *opts, const char *path, char *base,
                   int design);

/* Read the mapping map (at path) through the rows opts into base: every
 * key known and given once, required keys present, OPT_LATE keys last. A
 * key in error does not stop the others being read; -1 when any was. */
int load_section(struct opt_loader *L, const struct opt *opts, const yaml_node_t *map,
                 const char *path, char *base, int design);

/* Whether the file gave the scalar key stored at field, rather than
 * leaving it to its default (fio's fio_option_is_set). */
bool opt_given(const struct opt_loader *L, const void *field);

#endif
