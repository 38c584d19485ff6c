/*
 * atomic_file.h - how every result file is written: to <path>.tmp in the
 * same directory, flushed to disk, then renamed over <path>. A reader (a
 * CI job, `locklab plot`, a user's editor) sees the old file or the new
 * one, never half of one, even when the run is killed mid-write; a failed
 * write leaves no .tmp behind. Also the directory maker the run directory
 * and its per-implementation folders use.
 */
#ifndef LOCKLAB_ATOMIC_FILE_H
#define LOCKLAB_ATOMIC_FILE_H

#include <limits.h>
#include <stdio.h>

#include "lab.h"

struct atomic_file {
    FILE *f;                /* write here between open and commit */
    char path[PATH_MAX];    /* the file's final name */
    char tmp[PATH_MAX + 8]; /* path + ".tmp" */
};

/* Open path's temporary file for writing: a->f, or NULL with err filled. */
FILE *atomic_file_open(struct atomic_file *a, const char *path, struct lab_err *err);

/* Flush and sync a->f, close it and rename it over the path. 0, or -1 with
 * err filled and the temporary file removed. */
int atomic_file_commit(struct atomic_file *a, struct lab_err *err);

/* Give up: close a->f and remove the temporary file; path is untouched. */
void atomic_file_abort(struct atomic_file *a);

/* path and every missing parent directory (mode 0755). 0 or -1, errno set. */
int atomic_file_mkdir_p(const char *path);

#endif
