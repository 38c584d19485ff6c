/*
 * clockshim.h - what the clock shim (clockshim.c, a library preloaded into
 * an embedded redis-server) and the harness that moves its clock
 * (redis_clock.c) agree on: the environment variable naming the offset
 * file, the file's name in the server's directory, and its layout.
 *
 * The file holds one int64_t at offset 0, in native byte order: how many
 * nanoseconds the server's wall clock (CLOCK_REALTIME, gettimeofday, time)
 * is ahead of the machine's, negative for behind. The shim maps it and
 * reads it on every call; the harness rewrites it in place (never
 * truncating it: a mapped file that shrinks kills its reader with SIGBUS).
 */
#ifndef LOCKLAB_CLOCKSHIM_H
#define LOCKLAB_CLOCKSHIM_H

#define CLOCKSHIM_ENV "LOCKLAB_CLOCK_FILE" /* the offset file's path */
#define CLOCKSHIM_FILE "clock-offset"      /* its name in the server's directory */
#define CLOCKSHIM_LIB "liblocklab-clockshim.so" /* next to the locklab binary */

#endif
