/*
 * bare_threads.h - the frame of a blocking bare loop (bare_threads.c): one
 * connection on the main thread for `bench overhead`, or N connections,
 * one thread each and a key each, for `bench ceiling`.
 */
#ifndef LOCKLAB_BARE_THREADS_H
#define LOCKLAB_BARE_THREADS_H

/* A store's loop. open: connect and prepare connection `index` (-1: the
 * only one) on the connection string conn, its key named after index;
 * its state, or NULL after saying why on stderr. cycle: one acquire and
 * release, 0 or -1 after saying why. close: end it. */
struct bare_loop {
    void *(*open)(const char *conn, int index);
    int (*cycle)(void *state);
    void (*close)(void *state);
};

/* main() of a bare loop: argv is CONN SECONDS [CONNECTIONS]. Prints
 * "cycles=N elapsed_ns=E" (every connection's cycles, from when all were
 * open until the last stopped); exit 0, 1 when a cycle failed, 2 on bad
 * arguments, 3 when a connection could not be opened. */
int bare_threads_main(int argc, char **argv, const struct bare_loop *loop);

#endif
