/*
 * report_parts.h - what the files of harness/report/ share with each other
 * and nobody else calls: the writers report.c runs after every result
 * (summary_json.c, hgrm.c) and the few words and number formats that the
 * summary, the JUnit cases and the console table must spell alike.
 */
#ifndef LOCKLAB_REPORT_PARTS_H
#define LOCKLAB_REPORT_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "result.h"
#include "run_dir.h"
#include "stems.h"

/* Rewrite <run dir>/summary.json with every result so far (format:
 * docs/results.md). 0 or -1 with err filled. */
int report_write_summary(const struct report *r, bool complete, struct lab_err *err);

/* Write x's <impl>/<stem>.{acquire,hold,release,handoff}.hgrm and
 * .timeline.tsv under the run directory. 0 or -1 with err filled. */
int report_write_hgrms(const struct report *r, const struct run_result *x, struct lab_err *err);

/* Add the invocation's provenance to summary.json's root object:
 * locklab (version, commit), command_line, exit_code, duration_s, machine,
 * store_versions (docs/results.md). */
void report_provenance_json(const struct report *r, json_t *root);

/* "off", "on" or "unsupported" (asked for, no sound token: ran unfenced). */
const char *report_fencing_name(enum fencing_mode m);

/* An optimistic design's conflicts over the writes it tried (0 for none). */
double report_conflict_rate(const struct run_result *r);

/* Microseconds as a short human string: 850us, 12.3ms, 4.20s. Returns buf. */
const char *report_fmt_us(char *buf, size_t n, int64_t us);

#endif
