/*
 * scenario_load.h - read a scenario file into a struct scenario
 * (scenario_load.c and its sections in harness/loader/).
 *
 * The loader is strict: an unknown key, a wrong type, a bad duration, an
 * out-of-range number or an unknown implementation is an error naming
 * file:line:column, and the caller starts nothing.
 */
#ifndef LOCKLAB_SCENARIO_LOAD_H
#define LOCKLAB_SCENARIO_LOAD_H

#include <stddef.h>
#include <stdio.h>

#include "scenario.h"

/* Load and validate path into *out. On error returns -1 and writes one line
 * "path:line:column: what is wrong" (or "path: ..." when there is no
 * position, e.g. a missing file or a directory) into err (errlen bytes).
 * Returns 0 on success. */
int scenario_load(const char *path, struct scenario *out, char *err, size_t errlen);

/* Fill *out as a scenario file giving no key would leave it: zeros, then
 * every default of the option tables (for scenarios built in code, such as
 * the benchmarks'). Returns 0, or -1 when a default in the tables does not
 * read (a bug in the tables). */
int scenario_defaults(struct scenario *out);

/* Print every key a scenario file takes, one line each (dotted path,
 * default, help), from the loader's option rows and every design's: the
 * reference `locklab list --options` prints and the docs are checked
 * against. */
void scenario_print_keys(FILE *f);

#endif
