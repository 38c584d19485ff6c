/*
 * stop.c - SIGINT/SIGTERM handling (see stop.h). The handler only sets a
 * flag or, the second time, calls async-signal-safe kill() and _exit().
 */
#include "stop.h"

#include <signal.h>
#include <unistd.h>

#include "lab.h"
#include "runner.h"
#include "servers.h"

volatile int lab_stop;

static volatile sig_atomic_t signals_seen;

static void on_signal(int sig)
{
    signals_seen++;
    if (signals_seen >= 2) {
        /* "now": kill every client and server at once; the main thread then
         * finds them dead, writes what it has and removes the temporary
         * directories. A third signal does not wait even for that. */
        runner_kill_all_now();
        servers_kill_all_now();
        if (signals_seen >= 3)
            _exit(LAB_EXIT_INTERRUPTED);
    }
    lab_stop = sig;
}

void stop_install(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}
