/*
 * report_html.c - report.html (see report_html.h). Written from the run's
 * own files, summary.json, the steps' .holds.tsv and the SVG plots gnuplot
 * drew, after all are complete, so the page shows exactly what the
 * machine-readable results say; every plot is inlined, nothing is fetched,
 * the page works offline and as a CI artifact. Written atomically, as the
 * other result files (atomic_file.h). The page's skeleton and tables are
 * here; its summary is html_summary.c, the hold timelines html_holds.c.
 */
#include "report_html.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "html_parts.h"
#include "junit.h"

/* The whole of a file, NUL-terminated (free it), or NULL. */
static char *slurp(const char *path, size_t limit)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return NULL;
    char *buf = malloc(limit + 1);
    size_t n = buf ? fread(buf, 1, limit, in) : 0;
    fclose(in);
    if (buf)
        buf[n] = '\0';
    return buf;
}

#define str html_str
#define num html_num

/* Microseconds as the console shows them (us, ms, s). */
static void us(FILE *f, double v)
{
    if (v < 1000)
        fprintf(f, "%.0f&nbsp;us", v);
    else if (v < 1e6)
        fprintf(f, "%.1f&nbsp;ms", v / 1e3);
    else
        fprintf(f, "%.2f&nbsp;s", v / 1e6);
}

/* A verdict cell is coloured by whether it met the expectation, not by
 * the verdict: an expected violation is a success. */
static const char *verdict_class(json_t *r)
{
    return !json_is_string(json_object_get(r, "expect"))  ? "other"
           : json_is_true(json_object_get(r, "pass")) ? "ok"
                                                      : "bad";
}

/* The results table of one scenario. */
static void results_table(FILE *f, json_t *results, const char *scn)
{
    fputs("<table class=\"results\">\n<tr><th>step</th><th>clients</th><th>keys</th>"
          "<th>fencing</th><th>verdict</th><th>expect</th><th>pass</th><th>ops/s</th>"
          "<th>acq p50</th><th>acq p99</th><th>overlaps</th><th>oversold</th><th>lost</th>"
          "<th>faults</th><th>cpu clients / servers</th></tr>\n", f);
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        if (strcmp(str(r, "scenario"), scn) != 0)
            continue;
        json_t *lat = json_object_get(json_object_get(r, "latency_us"), "acquire");
        json_t *saf = json_object_get(r, "safety"), *cpu = json_object_get(r, "cpu");
        const char *v = str(r, "verdict");
        char step[256];
        html_step_name(r, step, sizeof step);
        fputs("<tr><td>", f);
        report_xml_escaped(f, step);
        fprintf(f, "</td><td>%d</td><td>", (int)num(r, "clients"));
        report_xml_escaped(f, str(r, "keys"));
        fputs("</td><td>", f);
        report_xml_escaped(f, str(r, "fencing"));
        fprintf(f, "</td><td class=\"%s\">", verdict_class(r));
        report_xml_escaped(f, v);
        fputs(!json_is_string(json_object_get(r, "expect")) ? ""
              : json_is_true(json_object_get(r, "pass"))    ? " (expected)"
                                                            : " (NOT expected)",
              f);
        fputs("</td><td>", f);
        report_xml_escaped(f, str(r, "expect"));
        fprintf(f, "</td><td class=\"%s\">%s</td><td>%.0f",
                json_is_true(json_object_get(r, "pass")) ? "ok" : "bad",
                json_is_true(json_object_get(r, "pass")) ? "ok" : "FAIL",
                num(r, "throughput_per_s"));
        json_t *arr = json_object_get(r, "arrival");
        if (json_is_object(arr)) /* open loop: the schedule, and how well it was kept */
            fprintf(f, "<br><small>open loop %.0f/s, %.1f %% late</small>", num(arr, "rate_per_s"),
                    100 * num(arr, "late_fraction"));
        fputs("</td><td>", f);
        us(f, num(lat, "p50"));
        fputs("</td><td>", f);
        us(f, num(lat, "p99"));
        fprintf(f, "</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%zu</td><td>%.2f / %.2f%s</td>"
                "</tr>\n",
                num(saf, "violations"), num(saf, "oversold"), num(saf, "lost_updates"),
                json_array_size(json_object_get(r, "faults")), num(cpu, "clients_cores"),
                num(cpu, "servers_cores"),
                json_is_true(json_object_get(cpu, "client_bound")) ? " client-bound" : "");
    }
    fputs("</table>\n", f);
}

/* Whether a fault put the lock at stake: yes or no with its reason and
 * window (at_stake.h), or n/a. */
static void stake_cell(FILE *f, json_t *x)
{
    const char *v = str(x, "at_stake");
    report_xml_escaped(f, v[0] ? v : "n/a");
    if (!strcmp(v, "yes") || !strcmp(v, "no")) {
        fputs(": ", f);
        report_xml_escaped(f, str(x, "stake_why"));
    }
    json_t *from = json_object_get(x, "stake_from_ms"), *to = json_object_get(x, "stake_to_ms");
    if (json_is_number(from) && json_is_number(to))
        fprintf(f, " (%.3f-%.3f s, %d waiting)", json_number_value(from) / 1e3,
                json_number_value(to) / 1e3, (int)num(x, "stake_waiters"));
}

/* Every fault record of one scenario's results. */
static void faults_table(FILE *f, json_t *results, const char *scn)
{
    bool any = false;
    size_t i, k;
    json_t *r, *x;
    json_array_foreach(results, i, r) {
        if (strcmp(str(r, "scenario"), scn) != 0)
            continue;
        json_array_foreach(json_object_get(r, "faults"), k, x) {
            if (!any)
                fputs("<h3>Faults</h3>\n<table class=\"faults\">\n<tr><th>step</th><th>action"
                      "</th><th>target</th><th>outcome</th><th>from (s)</th><th>to (s)</th>"
                      "<th>store back (s)</th><th>recovery (ms)</th><th>at stake</th><th>hit</th>"
                      "<th>note</th>"
                      "</tr>\n", f);
            any = true;
            char step[256];
            html_step_name(r, step, sizeof step);
            fputs("<tr><td>", f);
            report_xml_escaped(f, step);
            fputs("</td><td>", f);
            report_xml_escaped(f, str(x, "action"));
            fputs("</td><td>", f);
            report_xml_escaped(f, str(x, "target"));
            fprintf(f, "</td><td>%s</td><td>%.3f</td><td>%.3f</td><td>",
                    !strcmp(str(x, "outcome"), "done") ? "done" : str(x, "outcome"),
                    num(x, "start_ms") / 1e3, num(x, "end_ms") / 1e3);
            /* a server fault: when its store served again, the first grant after */
            json_t *back = json_object_get(x, "back_ms"), *rec = json_object_get(x, "recovery_ms");
            if (json_is_number(back))
                fprintf(f, "%.3f", json_number_value(back) / 1e3);
            else
                fputs(json_object_get(x, "grace_ms") ? "never" : "", f);
            fputs("</td><td>", f);
            if (json_is_number(rec))
                fprintf(f, "%.1f", json_number_value(rec));
            else if (json_object_get(x, "grace_ms") || json_object_get(x, "recovery_ms"))
                fputs("no grant", f);
            fputs("</td><td>", f);
            stake_cell(f, x);
            fputs("</td><td>", f);
            report_xml_escaped(f, str(x, "hit"));
            fputs("</td><td>", f);
            report_xml_escaped(f, str(x, "note"));
            fputs("</td></tr>\n", f);
        }
    }
    if (any)
        fputs("</table>\n", f);
}

/* Links to the stderr each adapter client kept (summary.json's
 * adapter_stderr), one line per result that has any. */
static void stderr_links(FILE *f, json_t *results, const char *scn)
{
    bool any = false;
    size_t i, k;
    json_t *r, *x;
    json_array_foreach(results, i, r) {
        json_t *kept = json_object_get(r, "adapter_stderr");
        if (strcmp(str(r, "scenario"), scn) != 0 || json_array_size(kept) == 0)
            continue;
        if (!any)
            fputs("<h3>Adapter stderr</h3>\n<ul class=\"stderr\">\n", f);
        any = true;
        fputs("<li>", f);
        report_xml_escaped(f, str(r, "impl"));
        fprintf(f, " (%d clients, ", (int)num(r, "clients"));
        report_xml_escaped(f, str(r, "files"));
        fputs("):", f);
        json_array_foreach(kept, k, x) {
            fputs(" <a href=\"", f);
            report_xml_escaped(f, str(x, "file"));
            fprintf(f, "\">client %d</a> (%.0f&nbsp;bytes%s)", (int)num(x, "client"),
                    num(x, "bytes"), json_is_true(json_object_get(x, "truncated")) ? ", cut" : "");
        }
        fputs("</li>\n", f);
    }
    if (any)
        fputs("</ul>\n", f);
}

/* The hold timeline of every step of one scenario. */
static void holds(FILE *f, json_t *results, const char *scn, const char *run_dir)
{
    size_t i;
    json_t *r;
    fputs("<h3>Who held the lock when</h3>\n", f);
    json_array_foreach(results, i, r)
        if (strcmp(str(r, "scenario"), scn) == 0)
            html_holds(f, r, run_dir);
}

/* The scenario's SVG plots, inlined (their XML prolog dropped). */
static void plots(FILE *f, const char *run_dir, const char *scn)
{
    static const char *const kinds[] = {"timeline", "latency", "throughput", "wakeups"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s-%s.svg", run_dir, scn, kinds[k]);
        char *svg = slurp(path, 8 << 20);
        if (!svg)
            continue;
        const char *start = strstr(svg, "<svg");
        if (start)
            fprintf(f, "<figure class=\"plot\" id=\"%s-%s\">\n%s\n</figure>\n", scn, kinds[k],
                    start);
        free(svg);
    }
}

static void scenario_file(FILE *f, const char *file)
{
    char *text = slurp(file, 1 << 20);
    fputs("<details><summary>scenario file: ", f);
    report_xml_escaped(f, file);
    fputs("</summary>\n<pre>", f);
    report_xml_escaped(f, text ? text : "(not found from this directory)");
    fputs("</pre></details>\n", f);
    free(text);
}

static const char *const style =
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
    "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right;font-size:0.9em}"
    "td:first-child,th:first-child{text-align:left}"
    ".ok{background:#dff0d8}.bad{background:#f2dede}.other{background:#fcf8e3}"
    "figure.plot svg{max-width:100%;height:auto}pre{background:#f6f6f6;padding:1em}"
    "table.facts th,table.facts td,table.expectations td,table.expectations th,table.stores td,"
    "table.stores th{text-align:left}"
    "p.expect-total{padding:4px 8px;display:inline-block}"
    "div.first-error{font-family:monospace;white-space:pre-wrap;word-break:break-all}";

int report_html_write(const char *run_dir, struct lab_err *err)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/summary.json", run_dir);
    json_error_t jerr;
    json_t *sum = json_load_file(path, 0, &jerr);
    if (!sum) {
        lab_err_set(err, EINVAL, "%s: %s", path, jerr.text);
        return -1;
    }
    snprintf(path, sizeof path, "%s/report.html", run_dir);
    struct atomic_file a;
    FILE *f = atomic_file_open(&a, path, err);
    if (!f) {
        json_decref(sum);
        return -1;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>locklab ", f);
    report_xml_escaped(f, str(sum, "run_id"));
    fprintf(f, "</title>\n<style>%s", style);
    html_holds_style(f);
    fputs("</style></head><body>\n<h1>locklab run ", f);
    report_xml_escaped(f, str(sum, "run_id"));
    fputs("</h1>\n<p>started ", f);
    report_xml_escaped(f, str(sum, "started_at"));
    fputs(" on ", f);
    report_xml_escaped(f, str(sum, "host"));
    fprintf(f, "%s</p>\n", json_is_true(json_object_get(sum, "complete"))
                               ? ""
                               : " &mdash; <b>incomplete</b>: interrupted, partial numbers");
    json_t *results = json_object_get(sum, "results"), *sc;
    size_t i;
    html_summary(f, sum, run_dir);
    json_array_foreach(json_object_get(sum, "scenarios"), i, sc) {
        const char *name = str(sc, "name");
        fputs("<section class=\"scenario\">\n<h2>", f);
        report_xml_escaped(f, name);
        fputs("</h2>\n<p>", f);
        report_xml_escaped(f, str(sc, "description"));
        fputs("</p>\n", f);
        results_table(f, results, name);
        faults_table(f, results, name);
        stderr_links(f, results, name);
        holds(f, results, name, run_dir);
        plots(f, run_dir, name);
        scenario_file(f, str(sc, "file"));
        fputs("</section>\n", f);
    }
    fputs("<p>Every figure comes from summary.json beside this file (format: docs/results.md)."
          "</p>\n", f);
    html_holds_script(f);
    fputs("</body></html>\n", f);
    json_decref(sum);
    return atomic_file_commit(&a, err);
}
