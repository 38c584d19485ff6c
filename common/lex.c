/*
 * lex.c - durations and plain integers as a settings file writes them
 * (lex.h).
 *
 * A duration keeps its fraction exactly: a unit is a mantissa times a
 * power of ten nanoseconds, so "1.5 s" and "1500ms" are the same number,
 * and nothing past int64_t nanoseconds (about 292 years) is accepted.
 */
#include "lex.h"

#include <stdint.h>
#include <string.h>


/* A unit is mant * 10^exp nanoseconds, which keeps fractions exact. */
static const struct duration_unit {
    const char *name; /* as written after the number */
    int64_t mant;     /* mantissa of the unit in ns */
    int exp;          /* power of ten of the unit in ns */
} duration_units[] = {
    { "ns", 1, 0 },  { "us", 1, 3 },  { "ms", 1, 6 },
    { "s", 1, 9 },   { "m", 6, 10 },  { "h", 36, 11 },
};

#define DURATION_FRAC_DIGITS 17 /* fraction digits kept; later ones are < 1 ns even for h */

static const int64_t pow10_tab[DURATION_FRAC_DIGITS + 1] = {
    1LL, 10LL, 100LL, 1000LL, 10000LL, 100000LL, 1000000LL, 10000000LL,
    100000000LL, 1000000000LL, 10000000000LL, 100000000000LL, 1000000000000LL,
    10000000000000LL, 100000000000000LL, 1000000000000000LL,
    10000000000000000LL, 100000000000000000LL,
};

bool lex_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Parse "<digits>[.<digits>][ ]<unit>" or a bare zero into nanoseconds,
 * truncating below one nanosecond. Returns an enum scan_result. */
int duration_scan(const char *s, int64_t *ns_out)
{
    const char *p = s;
    int64_t whole = 0, frac = 0;
    int frac_digits = 0;
    bool too_big = false, zero = true;

    if (!lex_is_digit(*p))
        return SCAN_BAD;
    for (; lex_is_digit(*p); p++) {
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
        if (!lex_is_digit(*p))
            return SCAN_BAD;
        for (; lex_is_digit(*p); p++) {
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
int int_scan(const char *s, int64_t *out)
{
    const char *p = s;
    bool neg = false, too_big = false;
    int64_t v = 0;

    if (*p == '-') {
        neg = true;
        p++;
    }
    if (!lex_is_digit(*p) || (p[0] == '0' && p[1] != '\0'))
        return SCAN_BAD;
    for (; lex_is_digit(*p); p++) {
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

bool lex_is_ident(const char *text, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (!(lex_is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              c == '.' || c == '-'))
            return false;
    }
    return true;
}

/* Edit distance of a (la bytes) and b (lb), neighbours swapped counting one
 * (the optimal string alignment distance); words longer than 63 bytes are
 * never near. */
static size_t edits(const char *a, size_t la, const char *b, size_t lb)
{
    size_t d[64][64];

    if (la >= 64 || lb >= 64)
        return SIZE_MAX;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *lex_nearest(const char *text, size_t len, const char *const *words, size_t n)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;

    for (size_t i = 0; n ? i < n : words[i] != NULL; i++) {
        if (!words[i])
            continue;
        size_t d = edits(text, len, words[i], strlen(words[i]));
        if (d < best_d && d > 0) {
            best_d = d;
            best = words[i];
        }
    }
    return best_d <= limit ? best : NULL;
}
