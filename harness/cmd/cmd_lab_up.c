/*
 * cmd_lab_up.c - the lab brought up for a command that runs scenarios
 * (run, explore) and taken down again: the hosts first (the servers start
 * on them), the slow links' proxy in their path, then the servers the
 * planned backends need; down in the reverse order.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>

#include "lab.h"
#include "net.h"
#include "stop.h"

int lab_up(struct scenario *const *scns, int n, struct backends *b)
{
    struct lab_err err = {0};
    if (net_up(scns, n, &err) != 0 || net_delay_up(scns, n, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        net_delay_down();
        net_down();
        return err.code == EINVAL ? LAB_EXIT_USAGE : LAB_EXIT_ENV;
    }
    if (backends_start(b, &lab_stop, &err) != 0) {
        fprintf(stderr, "locklab: %s\n", err.msg);
        net_delay_down();
        net_down();
        return lab_stop ? LAB_EXIT_INTERRUPTED : LAB_EXIT_ENV;
    }
    return LAB_EXIT_OK;
}

void lab_down(struct backends *b)
{
    backends_stop(b);
    net_delay_down();
    net_down();
}
