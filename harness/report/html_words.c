/*
 * html_words.c - how report.html reads summary.json and puts a result in
 * words: the name of its step (so fenced and unfenced steps, and one
 * sweep step from another, never read alike) and its verdict explained
 * ("violation: 82 overlaps, 4 lost updates").
 */
#include <string.h>

#include "html_parts.h"

const char *html_str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

double html_num(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

void html_step_name(json_t *r, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "%s", html_str(r, "impl"));
    if (json_is_true(json_object_get(r, "sweep")) && len < n)
        len += (size_t)snprintf(buf + len, n - len, ", %d clients, %s", (int)html_num(r, "clients"),
                                strcmp(html_str(r, "keys"), "hot") ? "key per client"
                                                                   : "one hot key");
    const char *fencing = html_str(r, "fencing");
    if (len < n && strcmp(fencing, "off") != 0)
        len += (size_t)snprintf(buf + len, n - len, ", %s",
                                strcmp(fencing, "on") ? "fencing asked, unsupported" : "fenced");
    else if (len < n)
        len += (size_t)snprintf(buf + len, n - len, ", unfenced");
    if (len < n && html_num(r, "round") > 0)
        len += (size_t)snprintf(buf + len, n - len, ", round %d", (int)html_num(r, "round"));
    if (len < n && html_num(r, "repeat") > 1)
        snprintf(buf + len, n - len, ", reference run %d", (int)html_num(r, "repeat"));
}

/* Append ", <v> <what>" (singular when v is 1) when v > 0. */
static void count(char *buf, size_t n, size_t *len, double v, const char *one, const char *many)
{
    if (v <= 0 || *len >= n)
        return;
    *len += (size_t)snprintf(buf + *len, n - *len, "%s%.0f %s", buf[*len - 1] == ':' ? " " : ", ",
                             v, v == 1 ? one : many);
}

/* Under an overlap: the lock's outcome and the resource's, what the stale
 * holders did after the later grants, and the stale-holder window
 * (summary.json's safety.lock, resource, stale_pairs, stale_window). */
static void stale_words(json_t *saf, char *buf, size_t n, size_t *len)
{
    json_t *pairs = json_object_get(saf, "stale_pairs"), *win = json_object_get(saf, "stale_window");
    if (strcmp(html_str(saf, "lock"), "overlapped") != 0 || *len >= n)
        return;
    *len += (size_t)snprintf(buf + *len, n - *len, "; lock overlapped, resource %s",
                             html_str(saf, "resource"));
    if (html_num(win, "holders") <= 0 || *len >= n)
        return;
    *len += (size_t)snprintf(buf + *len, n - *len, "; per overlapping pair, the stale holder after the later grant:");
    count(buf, n, len, html_num(pairs, "through"), "access let through unchecked",
          "accesses let through unchecked");
    count(buf, n, len, html_num(pairs, "ordered"), "let in by the fence in token order",
          "let in by the fence in token order");
    count(buf, n, len, html_num(pairs, "refused"), "refused by the fence",
          "refused by the fence");
    count(buf, n, len, html_num(pairs, "noticed"), "noticed its loss", "noticed its loss");
    count(buf, n, len, html_num(pairs, "chance"), "untouched by chance", "untouched by chance");
    if (*len < n)
        *len += (size_t)snprintf(buf + *len, n - *len,
                                 "; stale-holder window p50 %.1f ms, max %.1f ms",
                                 html_num(win, "p50_ms"), html_num(win, "max_ms"));
}

void html_verdict_words(json_t *r, char *buf, size_t n)
{
    json_t *saf = json_object_get(r, "safety"), *ops = json_object_get(r, "ops");
    size_t len = (size_t)snprintf(buf, n, "%s:", html_str(r, "verdict"));
    size_t bare = len;
    count(buf, n, &len, html_num(saf, "violations"), "overlap", "overlaps");
    double us = html_num(saf, "overlap_us");
    if (us > 0 && len < n)
        len += (size_t)snprintf(buf + len, n - len, " (%.3f s with two holders or more)", us / 1e6);
    count(buf, n, &len, html_num(saf, "oversold"), "unit oversold", "units oversold");
    count(buf, n, &len, html_num(saf, "lost_updates"), "lost update", "lost updates");
    count(buf, n, &len, html_num(saf, "stale_writes_rejected"), "stale write refused",
          "stale writes refused");
    count(buf, n, &len, html_num(saf, "stale_reads_rejected"), "stale read refused",
          "stale reads refused");
    count(buf, n, &len, html_num(saf, "rightful_refused"), "rightful holder refused",
          "rightful holders refused");
    count(buf, n, &len, html_num(ops, "release_deleted_other"), "lock deleted under its holder",
          "locks deleted under their holders");
    count(buf, n, &len, html_num(ops, "timeouts"), "timeout", "timeouts");
    count(buf, n, &len, html_num(ops, "errors"), "error", "errors");
    json_t *st = json_object_get(r, "clients_status");
    count(buf, n, &len, html_num(st, "crashed"), "client crashed", "clients crashed");
    if (json_is_object(json_object_get(r, "unavailable")) && len < n)
        len += (size_t)snprintf(buf + len, n - len, "%sno grant after the last server fault",
                                len == bare ? " " : ", ");
    if (len == bare && len < n)
        len += (size_t)snprintf(buf + len, n - len, " no overlap, nothing lost");
    stale_words(saf, buf, n, &len);
    /* faults that could put the lock at stake (at_stake.h): how often they did */
    double judged = html_num(r, "at_stake_judged"), stakes = html_num(r, "at_stake");
    if (judged > 0 && len < n)
        snprintf(buf + len, n - len, stakes > 0 ? "; the lock at stake %.0f time%s"
                                                : "; the lock never at stake (%.0f fault%s could)",
                 stakes > 0 ? stakes : judged, (stakes > 0 ? stakes : judged) == 1 ? "" : "s");
}
