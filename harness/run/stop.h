/*
 * stop.h - how locklab reacts to SIGINT and SIGTERM.
 *
 * The first signal sets lab_stop: the runner stops the clients, the results
 * measured so far are written and marked incomplete, servers are stopped,
 * and locklab exits with LAB_EXIT_INTERRUPTED. A second signal means "now":
 * every client and server is killed at once (locklab still writes what it
 * has and removes its temporary directory); a third exits on the spot.
 */
#ifndef LOCKLAB_STOP_H
#define LOCKLAB_STOP_H

extern volatile int lab_stop; /* non-zero once SIGINT or SIGTERM arrived */

/* Install the handlers (idempotent). */
void stop_install(void);

#endif
