/*
 * html_parts.h - what the files that write report.html share: reading
 * summary.json's values, and the two parts beside the page's skeleton
 * (report_html.c): the summary at its top (html_summary.c) and the hold
 * timeline of every step (html_holds.c).
 */
#ifndef LOCKLAB_HTML_PARTS_H
#define LOCKLAB_HTML_PARTS_H

#include <jansson.h>
#include <stdio.h>

/* A string member of o ("" when absent) and a number member (0). */
const char *html_str(json_t *o, const char *key);
double html_num(json_t *o, const char *key);

/* A result's step for people: "redis-lua", "redis-lua, fenced",
 * "redis-lua, 16 clients, one hot key, fenced" (clients and keys for a
 * sweep's step), "... round 2" (--rounds), "... reference run 2". */
void html_step_name(json_t *r, char *buf, size_t n);

/* The verdict in words: "violation: 82 overlaps, 4 lost updates". */
void html_verdict_words(json_t *r, char *buf, size_t n);

/* The summary at the top of the page (html_summary.c). */
void html_summary(FILE *f, json_t *sum, const char *run_dir);

/* The hold timelines' CSS (inside the page's <style>) and their script
 * (a <script> element, at the end of the body), once per page
 * (html_holds_script.c). */
void html_holds_style(FILE *f);
void html_holds_script(FILE *f);

/* The hold timeline of result r (its <impl>/<files>.holds.tsv under
 * run_dir): one lane per client, each critical section a bar, overlaps,
 * refusals and faults marked; drawn by the page's script. */
void html_holds(FILE *f, json_t *r, const char *run_dir);

#endif
