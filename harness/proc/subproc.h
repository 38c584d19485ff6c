/*
 * subproc.h - run a helper program and capture what it prints.
 *
 * locklab runs two kinds of helper programs: gnuplot for the plots and the
 * bare client loops of the overhead benchmark. Both are run the same way:
 * fork and exec (never a shell), stdin from /dev/null, stdout and stderr
 * into a buffer, a death signal so the helper dies with locklab, and the
 * wait status back.
 */
#ifndef LOCKLAB_SUBPROC_H
#define LOCKLAB_SUBPROC_H

#include <stddef.h>
#include <sys/types.h>

/* Run argv[0] (a path) with argv; capture stdout and stderr into out
 * (outlen bytes, NUL-terminated, truncated when longer). Returns the wait
 * status, or -1 when the process could not be started. */
int subproc_capture(char *const argv[], char *out, size_t outlen);

/* The path of a file that ships with this executable (a bare loop, the
 * clock shim) into out (n bytes): <prefix>/libexec/locklab/<name> beside an
 * installed <prefix>/bin/locklab, else next to the executable (the build
 * tree). 0 when access(out, mode) allows it, -1 otherwise (out is still
 * filled when the executable's path is known). */
int subproc_sibling(const char *name, int mode, char *out, size_t n);

/* Fork a helper process of locklab's own that dies with it (a death
 * signal, SIGKILL of locklab included), in a process group of its own (a
 * terminal's Ctrl-C reaches locklab, which decides) with SIGINT ignored.
 * In the child: returns 0, and *ready_fd is the pipe on which it must
 * write one int when set up: 0 (ready) or an errno (it failed; then it
 * exits). In locklab: the child's pid once it wrote 0, or -1 with *why the
 * errno (the fork's or the child's; the child is reaped). */
pid_t subproc_tied(int *ready_fd, int *why);

#endif
