/*
 * fault_clock.c - clock-jump: move one server's wall clock by the entry's
 * offset (forward, or back with a leading '-'), as NTP stepping a clock
 * would. A row of the action table (fault_action.h).
 *
 * It goes through the store's table (backend_ops.clock_jump), which
 * checks it against the server's own clock: a jump that did not move it
 * is `failed`, never `done`. Only a role whose store says its clock can
 * move (backend_role_name.clock: Redis, started with the clock shim) is a
 * target; it takes no service away, so no errors are excused by it.
 */
#include "fault_engine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Move srv's clock by the entry's offset, and record what the server's
 * clock did. */
static void jump_clock(struct faults *F, struct fault_record *r, int rec, struct server *srv,
                       int64_t now)
{
    (void)rec, (void)now;
    struct lab_err err = {0};
    const struct backend_ops *be = backend_of(F->ops);
    int rc = -1;
    if (be->clock_jump)
        rc = be->clock_jump(srv, F->s->faults[r->spec].offset_ns, &r->jump_ns, &err);
    else
        lab_err_set(&err, ENOTSUP, "%s cannot move a server's clock", be->title);
    r->end_ns = lab_now_ns();
    r->outcome = rc == 0 ? FAULT_DONE : FAULT_FAILED;
    if (rc == 0)
        fault_note_add(r, "its clock moved %+.3f s", (double)r->jump_ns / 1e9);
    else
        fault_note_add(r, "%.100s", err.msg);
}

/* A server role whose clock can move. */
static const char *jump_check(const struct fault_spec *f, char *buf, size_t n)
{
    if (f->target == TARGET_SERVER && backend_role_find(f->role, strlen(f->role))->clock)
        return NULL;
    snprintf(buf, n, "clock-jump moves the wall clock of a Redis server: target redis or "
                     "redis-node:I, not %s (ZooKeeper times its sessions with the monotonic "
                     "clock: not supported)", f->target_text);
    return buf;
}

const struct fault_action_ops fault_clock_jump = {
    .word = "clock-jump",
    .keys = FA_OFFSET,
    .check = jump_check,
    .hit_server = jump_clock,
};
