/*
 * fault.h - the words of a scenario's fault timeline: the names of the
 * actions and outcomes, the target words, and notes on a fault's record,
 * for the fault loader, the engine that injects them (faults.c) and the
 * reports. The entry as read (fault_spec.h) is part of the scenario; what
 * a run records of a fault (fault_record.h) is part of its result.
 *
 * A fault entry is closed vocabulary, as Jepsen's nemeses are: when (`at`
 * a time after the start barrier, or `every` a period, `count` times), an
 * action (a row of fault_action.h's table: pause, kill, restart, stop,
 * start, failover, clock-jump) and a target
 * (holder, client:N, random-client, or a server role such as redis,
 * redis-node:I, zookeeper; a server fault may wait for a holder: `when:
 * holder`); or a failpoint inside a design where the client that reaches
 * it is hit (kill, pause, sleep). Nothing in it ever runs a command.
 */
#ifndef LOCKLAB_FAULT_H
#define LOCKLAB_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "fault_record.h"
#include "fault_spec.h"

/* The action's word (its row's, fault_actions.c). */
const char *fault_action_name(enum fault_action a);
const char *fault_outcome_name(enum fault_outcome o);

/* Append to r's note (printf-style), after a "; " when it has one. */
__attribute__((format(printf, 2, 3)))
void fault_note_add(struct fault_record *r, const char *fmt, ...);

/* Parse a target word: holder, client:N, random-client, or ROLE[:I] for a
 * server role (the roles are the stores' own, backend_ops.role_names: a
 * name no store lists, or an index where its role takes none, is refused;
 * the engine matches the role to a run's servers). 0, or -1 when it is
 * none of these. */
int fault_target_parse(const char *text, struct fault_spec *f);

/* The server targets for messages: "redis, redis-node:I, zookeeper[:I], ...". */
const char *fault_server_targets(void);

#endif
