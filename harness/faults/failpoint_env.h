/*
 * failpoint_env.h - arming failpoints from the environment, as etcd's
 * gofail reads GOFAIL_FAILPOINTS:
 *
 *   LOCKLAB_FAILPOINTS='redis-get-del/before-del=sleep(150ms);redis-lua/before-release=sleep(1s)'
 *
 * (the points themselves: common/failpoint.h).
 */
#ifndef LOCKLAB_FAILPOINT_ENV_H
#define LOCKLAB_FAILPOINT_ENV_H

#include <stdbool.h>

#include "failpoint.h"

#define FAILPOINT_ENV "LOCKLAB_FAILPOINTS"

/* Parse LOCKLAB_FAILPOINTS, check every name against the known points and
 * arm them (call it once, before the clients are forked). 0 (also when unset), or -1 with err naming
 * the bad entry: call it before anything starts, so a typo is a usage
 * error. */
int failpoint_check(struct lab_err *err);

/* Is name ("<impl>/<point>") a point some design has? */
bool failpoint_known(const char *name);

/* Print every known point, one per line (for `locklab list --failpoints`). */
void failpoint_list(void);

#endif
