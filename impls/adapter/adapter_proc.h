/*
 * adapter_proc.h - one adapter child process and its lines (see adapter.h).
 *
 * Starting the child (argv without a shell, in a given directory, with
 * extra environment, dying with its parent), writing a request line,
 * reading a reply line before a deadline while keeping the last line the
 * child wrote on stderr (quoted when it dies) and, when given a file, the
 * first ADAPTER_STDERR_MAX bytes of its stderr there, and ending it: `quit`
 * and a short wait, else SIGKILL; always reaped. Nothing here knows the
 * protocol's words; adapter.c does.
 */
#ifndef LOCKLAB_ADAPTER_PROC_H
#define LOCKLAB_ADAPTER_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lab.h"

#define ADAPTER_LINE_MAX 1024 /* longest line an adapter may write */
#define ADAPTER_END_MAX (ADAPTER_LINE_MAX + 96) /* how a child ended, with its last stderr line */
#define ADAPTER_STDERR_MAX (64 * 1024) /* bytes of a child's stderr kept per client; a file
                                          longer than this was cut (a note ends it) */

struct adapter_proc {
    pid_t pid;                       /* the child, 0 once reaped */
    int to_fd;                       /* its stdin */
    int from_fd;                     /* its stdout */
    int err_fd;                      /* its stderr */
    char out[ADAPTER_LINE_MAX + 1];  /* stdout bytes read, not yet a whole line */
    size_t out_len;
    char err_line[ADAPTER_LINE_MAX + 1]; /* stderr bytes of the line in progress */
    size_t err_len;
    char last_err[ADAPTER_LINE_MAX + 1]; /* the last whole line it wrote on stderr */
    int status;                      /* wait status once reaped */
    char log_path[1280];             /* where its stderr is kept ("": nowhere) */
    int log_fd;                      /* that file, opened at the first byte (-1: not yet) */
    int64_t log_bytes;               /* stderr bytes written there */
};

/* Start argv (argc words) in dir with the extra "NAME=value" entries env
 * (n_env) added to the environment; keep its stderr in log_path (NULL: do
 * not), a file created with its directory and the one above it when the
 * child first writes there, holding at most ADAPTER_STDERR_MAX of its bytes
 * and then a line saying it was cut. 0, or -1 with err filled. */
int adapter_proc_start(struct adapter_proc *p, char *const argv[], const char *dir,
                       char *const env[], int n_env, const char *log_path,
                       struct lab_err *err);

/* Read one line (without its newline) into line (n bytes). 1: a line;
 * 0: deadline_ns (CLOCK_MONOTONIC) passed, or *stop was set; -1: the child
 * closed its stdout (died), or wrote a line longer than ADAPTER_LINE_MAX
 * (then line holds its start and -2 is returned). */
int adapter_proc_read_line(struct adapter_proc *p, char *line, size_t n, int64_t deadline_ns,
                           const volatile int *stop);

/* Write len bytes; 0, or -1 when the child no longer reads. */
int adapter_proc_write(struct adapter_proc *p, const char *buf, size_t len);

/* Kill the child and reap it (and close its pipes); nothing when gone. */
void adapter_proc_kill(struct adapter_proc *p);

/* Wait up to timeout_ns for the child to exit by itself; then kill it.
 * Returns its wait status, or -1 when it had to be killed. */
int adapter_proc_finish(struct adapter_proc *p, int64_t timeout_ns);

/* Describe how the child ended (reaping it if it has): "exited with status
 * 1", "killed by signal 9"; with its last stderr line when there is one. */
void adapter_proc_describe_end(struct adapter_proc *p, char *buf, size_t n);

#endif
