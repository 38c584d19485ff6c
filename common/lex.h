/*
 * lex.h - the words of a settings file that are numbers: durations such as
 * "250ms" or "1.5 s", and plain decimal integers.
 *
 * The scenario loader, the failpoint settings handed to clients and the
 * fault loader all read the same forms, so they are read here once, with
 * no YAML and nothing of the harness: overflow is an answer of its own
 * (LEX_RANGE), never a wrapped number.
 */
#ifndef LOCKLAB_LEX_H
#define LOCKLAB_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum scan_result {
    SCAN_OK = 0,     /* parsed */
    SCAN_BAD = -1,   /* not in the expected form */
    SCAN_RANGE = -2  /* well-formed but does not fit in an int64_t */
};

/* The duration units, for messages. */
#define DURATION_UNITS_TEXT "ns, us, ms, s, m, h"

/* Parse "<digits>[.<digits>][ ]<unit>" (units ns, us, ms, s, m, h) or a
 * bare zero into nanoseconds, truncating below one nanosecond. Returns an
 * enum scan_result. */
int duration_scan(const char *s, int64_t *ns_out);

/* Parse a duration: a non-negative number (integer or decimal) followed by a
 * unit ns, us, ms, s, m or h, with optional space ("250ms", "1.5 s"). A bare
 * 0 is accepted. Returns 0 and *ns_out, or -1 when malformed or too large. */
int duration_parse(const char *s, int64_t *ns_out);

/* Parse a plain decimal integer: optional '-', digits, no leading zeros (010
 * is octal to some YAML readers), nothing else. Returns an enum scan_result. */
int int_scan(const char *s, int64_t *out);

bool lex_is_digit(char c);

/* Whether text (len bytes) is a non-empty name of letters, digits, '_', '.'
 * and '-' (a scenario's name, an adapter's). */
bool lex_is_ident(const char *text, size_t len);

/* The word of words (n of them, or NULL-terminated when n is 0) nearest
 * to text (len bytes) by edit distance (insert, delete, replace, swap two
 * neighbours), when it is near enough to be a typo of it: at most 1 edit
 * for a word of up to 4 letters, 2 up to 8, 3 beyond. NULL when none is. */
const char *lex_nearest(const char *text, size_t len, const char *const *words, size_t n);

#endif
