/*
 * html_holds.c - the hold timeline of report.html, one per step (one
 * result): a lane per client, every critical section a bar from entry to
 * exit, a mark for every pair of sections that overlapped on one key (the
 * oracle's violations), the sections the fenced store refused and the
 * locks taken early, and the faults of the step as bands with their
 * phases. Jepsen's timeline.html is the model: the picture in which a
 * violation can be seen.
 *
 * The C side writes the step's sections (its <impl>/<files>.holds.tsv,
 * every one up to HOLDS_EMBED of them, else a window of that many around
 * the first sign of trouble, said so on the page) and its faults into the
 * page as JSON; the page's small script draws them as inline SVG, zooms
 * and pans (wheel, drag, buttons), and merges each lane's bars when too
 * many are in view to draw one by one (said so under the picture). Nothing
 * is fetched: the page stays self-contained.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "html_parts.h"
#include "junit.h"
#include "oracle.h"

#define HOLDS_EMBED 40000 /* sections written into the page per step */

struct hrow {
    double e, x;
    long long token;
    int client, key;
    unsigned flags;
};

/* Read a .holds.tsv; NULL when absent. *n rows. */
static struct hrow *holds_read(const char *path, size_t *n)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return NULL;
    size_t cap = 1024;
    struct hrow *v = malloc(cap * sizeof *v);
    char line[256];
    *n = 0;
    while (v && fgets(line, sizeof line, in)) {
        struct hrow r;
        if (line[0] == '#' || sscanf(line, "%lf %lf %d %d %lld %u", &r.e, &r.x, &r.client, &r.key,
                                     &r.token, &r.flags) != 6)
            continue;
        if (*n == cap) {
            struct hrow *w = realloc(v, 2 * cap * sizeof *v);
            if (!w) {
                free(v);
                v = NULL;
                break;
            }
            v = w;
            cap *= 2;
        }
        v[(*n)++] = r;
    }
    fclose(in);
    return v;
}

/* The first section that shows trouble: it overlaps an earlier one on its
 * key, the store refused it, its lock was taken early, or it began after
 * the step's first fault; 0 when none. Rows are in entry order. */
static size_t first_trouble(const struct hrow *v, size_t n, double fault_at)
{
    int keys = 0;
    for (size_t i = 0; i < n; i++)
        keys = v[i].key + 1 > keys ? v[i].key + 1 : keys;
    double *last = calloc((size_t)keys + 1, sizeof *last);
    size_t at = 0;
    for (size_t i = 0; last && i < n; i++) {
        if (v[i].e < last[v[i].key] || (v[i].flags & (ORACLE_REFUSED | ORACLE_LOST_EARLY)) ||
            v[i].e >= fault_at) {
            at = i;
            break;
        }
        if (v[i].x > last[v[i].key])
            last[v[i].key] = v[i].x;
    }
    free(last);
    return at;
}

/* The step's faults that landed, as the script draws them: from, to, a
 * label, and the phases (failover: cut, killed, switched, writable). */
static void faults_data(FILE *f, json_t *r, double *first)
{
    json_t *x;
    size_t k;
    bool any = false;
    *first = 1e30;
    fputs("[", f);
    json_array_foreach(json_object_get(r, "faults"), k, x) {
        if (strcmp(html_str(x, "outcome"), "done") != 0)
            continue;
        double a = html_num(x, "start_ms") / 1e3, b = html_num(x, "end_ms") / 1e3;
        *first = a < *first ? a : *first;
        json_t *label = json_pack("s++", html_str(x, "action"), " ", html_str(x, "target"));
        char *lt = json_dumps(label, JSON_ENCODE_ANY);
        fprintf(f, "%s{\"a\":%.4f,\"b\":%.4f,\"label\":%s,\"ph\":[", any ? "," : "", a, b,
                lt ? lt : "\"\"");
        free(lt);
        json_decref(label);
        any = true;
        const char *name;
        json_t *t;
        bool first_ph = true;
        json_object_foreach(json_object_get(x, "phases_ms"), name, t) {
            json_t *nm = json_string(name);
            char *ns = json_dumps(nm, JSON_ENCODE_ANY);
            fprintf(f, "%s[%.4f,%s]", first_ph ? "" : ",", json_number_value(t) / 1e3, ns);
            free(ns);
            json_decref(nm);
            first_ph = false;
        }
        json_t *back = json_object_get(x, "back_ms");
        if (json_is_number(back))
            fprintf(f, "%s[%.4f,\"store back\"]", first_ph ? "" : ",",
                    json_number_value(back) / 1e3);
        fputs("]}", f);
    }
    fputs("]", f);
}

void html_holds(FILE *f, json_t *r, const char *run_dir)
{
    char path[1400], step[256];
    snprintf(path, sizeof path, "%s/%s/%s.holds.tsv", run_dir, html_str(r, "impl"),
             html_str(r, "files"));
    html_step_name(r, step, sizeof step);
    size_t n = 0;
    struct hrow *v = holds_read(path, &n);
    json_t *holds = json_object_get(r, "holds"), *saf = json_object_get(r, "safety");
    double total = html_num(holds, "total");
    int clients = (int)html_num(r, "clients");
    fputs("<figure class=\"holds\" id=\"holds-", f); /* a link to one step: #holds-<impl>-<files> */
    report_xml_escaped(f, html_str(r, "impl"));
    fputc('-', f);
    report_xml_escaped(f, html_str(r, "files"));
    fprintf(f, "\" data-clients=\"%d\" data-violations=\"%.0f\">\n<figcaption>Hold timeline: ",
            clients, html_num(saf, "violations"));
    report_xml_escaped(f, step);
    fputs("</figcaption>\n", f);
    if (!v) {
        fputs("<p class=\"holds-note\">No hold data: this run directory has no ", f);
        report_xml_escaped(f, path);
        fputs(" (written by locklab run since the hold timeline exists).</p>\n</figure>\n", f);
        return;
    }
    size_t from = 0, count = n;
    fputs("<p class=\"holds-note\">", f);
    fprintf(f, "%zu critical sections", n);
    if (total > (double)n)
        fprintf(f, " (the run had %.0f; %s keeps the first %zu)", total, "holds.tsv", n);
    /* the faults' times are needed before the rows are chosen */
    char *fbuf = NULL;
    size_t flen = 0;
    FILE *fm = open_memstream(&fbuf, &flen);
    double fault_at = 1e30;
    if (fm) {
        faults_data(fm, r, &fault_at);
        fclose(fm);
    }
    if (n > HOLDS_EMBED) {
        size_t at = first_trouble(v, n, fault_at);
        from = at > HOLDS_EMBED / 4 ? at - HOLDS_EMBED / 4 : 0;
        if (from + HOLDS_EMBED > n)
            from = n - HOLDS_EMBED;
        count = HOLDS_EMBED;
        fprintf(f, "; too many to put in the page: it holds a window of %d of them, %.3f s to "
                "%.3f s, around %s; the rest are in ", HOLDS_EMBED, v[from].e,
                v[from + count - 1].e, at ? "the first sign of trouble" : "the start");
        report_xml_escaped(f, html_str(r, "impl"));
        fputc('/', f);
        report_xml_escaped(f, html_str(r, "files"));
        fputs(".holds.tsv", f);
    }
    fprintf(f, ". Overlapping pairs the oracle counted (summary.json): %.0f.</p>\n",
            html_num(saf, "violations"));
    fputs("<div class=\"holds-ctl\"><button data-z=\"in\">zoom in</button><button data-z=\"out\">"
          "zoom out</button><button data-z=\"all\">whole step</button> <span class=\"holds-view\">"
          "</span></div>\n<svg class=\"holds-svg\" xmlns=\"http://www.w3.org/2000/svg\"></svg>\n"
          "<noscript>The hold timeline is drawn by the page's script.</noscript>\n"
          "<script type=\"application/json\" class=\"holds-data\">", f);
    double t_end = html_num(r, "elapsed_s");
    for (size_t i = from; i < from + count; i++)
        t_end = v[i].x > t_end ? v[i].x : t_end;
    fprintf(f, "{\"clients\":%d,\"t0\":%.7f,\"t1\":%.7f,\"faults\":%s,\"h\":[", clients,
            from ? v[from].e : 0.0, from + count < n ? v[from + count - 1].x : t_end,
            fbuf ? fbuf : "[]");
    free(fbuf);
    for (size_t i = from; i < from + count; i++)
        fprintf(f, "%s%.9f,%.9f,%d,%d,%lld,%u", i > from ? "," : "", v[i].e, v[i].x, v[i].client,
                v[i].key, v[i].token, v[i].flags);
    fputs("]}</script>\n<p class=\"holds-legend\"><span class=\"k hold\"></span>critical section "
          "<span class=\"k refused\"></span>refused by the fenced store (stale token) "
          "<span class=\"k lost\"></span>lock taken from it early "
          "<span class=\"k died\"></span>holder died <span class=\"k overlap\"></span>two "
          "holders at once (one mark per overlapping pair, spanning both lanes) "
          "<span class=\"k fault\"></span>fault, with its phases on top. Hover for client, "
          "token, entry and exit; wheel or buttons to zoom, drag to pan, double-click for the "
          "whole step.</p>\n</figure>\n", f);
    free(v);
}
