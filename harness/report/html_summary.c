/*
 * html_summary.c - the top of report.html: what was run and what came of
 * it, from summary.json alone. The command line as typed, locklab's
 * version and commit, the exit code and what it means, how long it took,
 * every expectation met or not with its verdict in words (and the first
 * error, whole), the steps not
 * run and why, the machine
 * (cores, load, any client-bound result), every store's server version as
 * found through PATH, and the baseline gate's comparison when the run had
 * one (RUN_DIR/baseline.txt).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "html_parts.h"
#include "junit.h"
#include "report.h"

/* One line per result that had an expectation: met or not, in words. */
static void expectations(FILE *f, json_t *results)
{
    int met = 0, all = 0;
    json_t *r;
    size_t i;
    json_array_foreach(results, i, r) {
        if (!json_is_string(json_object_get(r, "expect")))
            continue;
        all++;
        met += json_is_true(json_object_get(r, "pass"));
    }
    fprintf(f, "<p class=\"expect-total %s\"><b>%d of %d expectations met</b>%s</p>\n",
            met == all ? "ok" : "bad", met, all,
            all == 0 ? " (the scenarios expected nothing)" : "");
    fputs("<table class=\"expectations\">\n<tr><th>scenario</th><th>step</th><th>expected</th>"
          "<th>verdict</th><th>in words</th></tr>\n", f);
    json_array_foreach(results, i, r) {
        char step[256], words[1024];
        html_step_name(r, step, sizeof step);
        html_verdict_words(r, words, sizeof words);
        bool has = json_is_string(json_object_get(r, "expect"));
        bool pass = json_is_true(json_object_get(r, "pass"));
        fputs("<tr><td>", f);
        report_xml_escaped(f, html_str(r, "scenario"));
        fputs("</td><td>", f);
        report_xml_escaped(f, step);
        fputs("</td><td>", f);
        report_xml_escaped(f, has ? html_str(r, "expect") : "(nothing)");
        fprintf(f, "</td><td class=\"%s\">", !has ? "other" : pass ? "ok" : "bad");
        report_xml_escaped(f, html_str(r, "verdict"));
        fprintf(f, " &mdash; %s</td><td>", !has ? "not judged" : pass ? "met" : "NOT MET");
        report_xml_escaped(f, words);
        if (json_is_string(json_object_get(r, "first_error"))) { /* whole, as summary.json has it */
            fputs("<div class=\"first-error\">first error: ", f);
            report_xml_escaped(f, html_str(r, "first_error"));
            fputs("</div>", f);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* Every store's server version (summary.json's store_versions). */
static void stores(FILE *f, json_t *sum)
{
    json_t *v = json_object_get(sum, "store_versions"), *x;
    size_t i;
    fputs("<table class=\"stores\">\n<tr><th>store</th><th>server version (found through PATH)"
          "</th><th>used by this run</th></tr>\n", f);
    json_array_foreach(v, i, x) {
        fputs("<tr><td>", f);
        report_xml_escaped(f, html_str(x, "title"));
        fputs("</td><td class=\"version\">", f);
        report_xml_escaped(f, json_is_string(json_object_get(x, "version"))
                                  ? html_str(x, "version")
                                  : "not installed");
        fprintf(f, "</td><td>%s</td></tr>\n", json_is_true(json_object_get(x, "used")) ? "yes" : "");
    }
    fputs("</table>\n", f);
}

/* The steps not run, and why (summary.json's skipped: a design at more
 * clients than its store takes connections). */
static void skipped(FILE *f, json_t *sum)
{
    json_t *v = json_object_get(sum, "skipped"), *x;
    size_t i;
    if (json_array_size(v) == 0)
        return;
    fputs("<p class=\"skipped\"><b>Not run:</b></p>\n<ul class=\"skipped\">\n", f);
    json_array_foreach(v, i, x) {
        fputs("<li>", f);
        report_xml_escaped(f, html_str(x, "scenario"));
        fputs(" ", f);
        report_xml_escaped(f, html_str(x, "impl"));
        fprintf(f, " at %d clients, ", (int)html_num(x, "clients"));
        report_xml_escaped(f, html_str(x, "keys"));
        fputs(" keys: ", f);
        report_xml_escaped(f, html_str(x, "why"));
        fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
}

static void baseline(FILE *f, const char *run_dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/baseline.txt", run_dir);
    FILE *in = fopen(path, "r");
    if (!in)
        return;
    fputs("<h3>Baseline gate (--baseline)</h3>\n<pre class=\"baseline\">", f);
    char line[1024];
    while (fgets(line, sizeof line, in)) {
        bool bad = strstr(line, "REGRESSED") != NULL;
        if (bad)
            fputs("<span class=\"bad\">", f);
        report_xml_escaped(f, line);
        if (bad)
            fputs("</span>", f);
    }
    fclose(in);
    fputs("</pre>\n", f);
}

void html_summary(FILE *f, json_t *sum, const char *run_dir)
{
    json_t *results = json_object_get(sum, "results");
    json_t *cmd = json_object_get(sum, "command_line"), *ll = json_object_get(sum, "locklab");
    json_t *m = json_object_get(sum, "machine"), *code = json_object_get(sum, "exit_code");
    fputs("<section class=\"summary\">\n<h2>Summary</h2>\n<table class=\"facts\">\n"
          "<tr><th>command</th><td><code>", f);
    report_xml_escaped(f, json_is_object(cmd) ? html_str(cmd, "text") : "(not recorded)");
    fputs("</code></td></tr>\n<tr><th>exit code</th><td>", f);
    if (json_is_integer(code))
        fprintf(f, "%d: %s", (int)json_integer_value(code),
                report_exit_meaning((int)json_integer_value(code)));
    else
        fputs("(not recorded: the run did not finish)", f);
    fputs("</td></tr>\n<tr><th>duration</th><td>", f);
    if (json_is_number(json_object_get(sum, "duration_s")))
        fprintf(f, "%.1f s, started ", html_num(sum, "duration_s"));
    report_xml_escaped(f, html_str(sum, "started_at"));
    fputs("</td></tr>\n<tr><th>locklab</th><td>", f);
    report_xml_escaped(f, html_str(ll, "version"));
    fputs(", commit ", f);
    report_xml_escaped(f, html_str(ll, "commit"));
    fputs("</td></tr>\n<tr><th>machine</th><td>", f);
    report_xml_escaped(f, html_str(sum, "host"));
    fprintf(f, ", %d cores", (int)html_num(m, "cores"));
    json_t *load = json_object_get(m, "load");
    if (json_array_size(load) == 3)
        fprintf(f, ", load %.2f %.2f %.2f (1, 5, 15 min, at the end)",
                json_number_value(json_array_get(load, 0)),
                json_number_value(json_array_get(load, 1)),
                json_number_value(json_array_get(load, 2)));
    fputs(json_is_true(json_object_get(m, "client_bound"))
              ? "; <b>some results were client-bound</b>: their speed measured this machine, "
                "not the lock service (marked in the tables)"
              : "; no result was client-bound",
          f);
    fputs("</td></tr>\n<tr><th>designs</th><td>", f);
    json_t *sc;
    size_t i;
    json_array_foreach(json_object_get(sum, "scenarios"), i, sc) {
        fputs(i ? "; " : "", f);
        report_xml_escaped(f, html_str(sc, "name"));
        fputs(": ", f);
        json_t *im;
        size_t k;
        json_array_foreach(json_object_get(sc, "impls"), k, im) {
            fputs(k ? ", " : "", f);
            report_xml_escaped(f, json_string_value(im));
        }
    }
    fputs(" (as run: <code>--impl</code> replaces the scenario file's list)</td></tr>\n"
          "</table>\n", f);
    expectations(f, results);
    skipped(f, sum);
    stores(f, sum);
    baseline(f, run_dir);
    fputs("</section>\n", f);
}
