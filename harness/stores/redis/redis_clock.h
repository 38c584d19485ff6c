/*
 * redis_clock.h - the harness's side of the clock shim (clockshim.c): find
 * the library, move an embedded Redis's wall clock by rewriting its offset
 * file, and check with the server's own TIME that the jump landed.
 */
#ifndef LOCKLAB_REDIS_CLOCK_H
#define LOCKLAB_REDIS_CLOCK_H

#include <stdint.h>

#include "lab.h"
#include "servers.h"

/* The clock shim library: $LOCKLAB_CLOCK_SHIM, else liblocklab-clockshim.so
 * next to the locklab binary. NULL with err filled when it is not there. */
const char *redis_clock_shim(struct lab_err *err);

/* Set the clock of server s back to the machine's (offset 0). A server
 * that does not run under the shim has nothing to reset: 0. -1 with err
 * filled when the offset file cannot be written. */
int redis_clock_reset(const struct server *s, struct lab_err *err);

/* Move the wall clock of server s by by_ns (added to any jump before) and
 * read the server's TIME before and after: *seen_ns is how far its clock
 * moved beyond the time that passed in between. 0 when it moved by by_ns
 * (within a few milliseconds), -1 with err filled otherwise (no shim, the
 * server did not answer, or its clock did not move as asked: then *seen_ns
 * still says what was seen, 0 when nothing could be read). */
int redis_clock_jump(const struct server *s, int64_t by_ns, int64_t *seen_ns, struct lab_err *err);

#endif
