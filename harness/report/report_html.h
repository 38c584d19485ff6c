/*
 * report_html.h - report.html: one self-contained page per run (inline SVG
 * plots, the results tables, the faults, the scenario files, the server
 * versions), readable offline, for people reviewing a run.
 */
#ifndef LOCKLAB_REPORT_HTML_H
#define LOCKLAB_REPORT_HTML_H

#include "lab.h"

/* Write run_dir/report.html from run_dir/summary.json and the *.svg plots
 * beside it; scenario files named in the summary are read as found from
 * the current directory (their text is shown, or that they were not
 * found). 0, or -1 with err filled. */
int report_html_write(const char *run_dir, struct lab_err *err);

#endif
