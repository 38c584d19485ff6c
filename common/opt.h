/*
 * opt.h - a setting described as one row of a table.
 *
 * fio describes every option once, as a row (name, type, where the value is
 * stored, range, default, help), and the same rows drive the parsing, the
 * validation and the help text; an engine brings rows of its own
 * (ioengine_ops.options) for a struct of its own, which the core never
 * sees. locklab does the same: the scenario loader's tables
 * (harness/scenario/) and the rows a lock design declares for its own
 * settings (lock_ops.options, impls/) are arrays of struct opt, read by one
 * parser, the loader's. This header holds only the description, no code,
 * so that a design can declare rows without including anything of the
 * harness.
 *
 * A table is an array of rows ending in a row whose name is NULL. A row
 * stores its value at .off in a struct the table belongs to (OPT_FIELD
 * fills .off and .size); a default is written as it would be in the file.
 */
#ifndef LOCKLAB_OPT_H
#define LOCKLAB_OPT_H

#include <stddef.h>
#include <stdint.h>

enum opt_type {
    OPT_STR,     /* string copied into char[size]; with choices, one of those words */
    OPT_INT,     /* plain decimal integer in [min, max], an int or int64_t by size */
    OPT_DUR,     /* duration in ns (int64_t), at least min */
    OPT_CHOICE,  /* one of choices; its index is stored in an int (enum) field */
    OPT_SECTION, /* a nested mapping whose keys are the rows of sub */
    OPT_NODE,    /* anything else: the parser's handler fn takes the node */
    OPT_DESIGNS  /* no key: where the rows of every lock design stand in the
                  * harness's lock section (the harness's tables only) */
};

enum opt_flags {
    OPT_REQUIRED = 1u << 0, /* the key must be present */
    OPT_IDENT = 1u << 1,    /* string: non-empty, letters, digits, '_', '.', '-' */
    OPT_NONEMPTY = 1u << 2, /* string: must not be empty */
    OPT_ODD = 1u << 3,      /* integer: must be odd */
    OPT_LATE = 1u << 4,     /* handled after the other keys of its mapping */
    OPT_DERIVED = 1u << 5   /* not a key of the file: a value the design's
                             * finish_options hook derives from the others
                             * (listed with its help, never parsed) */
};

struct opt_loader;  /* the parser's state (harness/scenario/opt_engine.h) */
struct yaml_node_s; /* libyaml's node */

/* OPT_NODE: read value (at keypath, "lock.keys") into the parser's target.
 * 0, or -1 with the parser's error set. */
typedef int (*opt_handler)(struct opt_loader *L, const struct yaml_node_s *value,
                           const char *keypath);

struct opt {
    const char *name;           /* key as written in the file; NULL ends a table */
    enum opt_type type;         /* how the value is read */
    size_t off;                 /* offset of the field in the table's struct */
    size_t size;                /* sizeof the field */
    int64_t min, max;           /* OPT_INT range; OPT_DUR lower bound (min) */
    const char *def;            /* default, read like a value in the file; NULL: none */
    const char *const *choices; /* OPT_CHOICE words; OPT_STR: allowed words or NULL */
    int n_supported;            /* OPT_STR choices: words from here on are planned only */
    const struct opt *sub;      /* OPT_SECTION: the rows of the nested mapping */
    opt_handler fn;             /* OPT_NODE: the handler */
    unsigned flags;             /* enum opt_flags */
    const char *help;           /* what the key means, for messages and `locklab list` */
};

/* .off and .size of field f of struct type T, for a row's initializer. */
#define OPT_FIELD(T, f) .off = offsetof(T, f), .size = sizeof(((T *)0)->f)

#endif
