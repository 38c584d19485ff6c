/*
 * report_stderr.h - an adapter child's stderr in the results: where each
 * client keeps it during a step (report_stderr_dir, handed to the clients
 * as lock_env.log_dir), and what a result says of it in summary.json.
 */
#ifndef LOCKLAB_REPORT_STDERR_H
#define LOCKLAB_REPORT_STDERR_H

#include <jansson.h>
#include <stddef.h>

#include "runner.h"

/* <run_dir>/<impl>/<tag>.adapter-stderr: the directory client N's
 * client-N.txt goes in (created by the first client whose child writes). */
void report_stderr_dir(char *buf, size_t n, const char *run_dir, const char *impl,
                       const char *tag);

/* For an adapter's result x whose files are tag: one object per client that
 * kept stderr under run_dir, {client, file (relative to run_dir), bytes,
 * truncated}, in client order (an empty array when none wrote any); NULL
 * for a built-in design. */
json_t *report_stderr_json(const char *run_dir, const struct run_result *x, const char *tag);

#endif
