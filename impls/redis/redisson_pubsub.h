/*
 * redisson_pubsub.h - the pub/sub side of redisson in client groups
 * (redisson_pubsub.c): what one Redisson JVM's PublishSubscribe is, for
 * the logical clients of one event loop. One connection per group, one
 * entry per channel (RedissonLockEntry) whose first member subscribes and
 * last one unsubscribes, and a semaphore: an unlock message wakes the
 * member parked longest, or stays as a permit for the next to wait.
 *
 * A member is a logical client's place in it, embedded in the group
 * driver's state (redisson_drive_group.c) and told what happens through
 * its three hooks: subscribed (its entry's subscription is confirmed),
 * woken (a message or a permit for it: it was parked) and down (the
 * connection went while it waited on the pub/sub: RSN_PS_LOST after the
 * connection was made, RSN_PS_ERROR for an error reply, RSN_PS_FAILED
 * when none could be made). down must not call back into this file: the
 * driver delivers it from the loop.
 */
#ifndef LOCKLAB_REDISSON_PUBSUB_H
#define LOCKLAB_REDISSON_PUBSUB_H

#include <stdbool.h>
#include <stdint.h>

#include "evloop.h"
#include "lock.h"
#include "redisson_machine.h"

enum rsn_ps_event { RSN_PS_NONE, RSN_PS_LOST, RSN_PS_ERROR, RSN_PS_FAILED };

struct rsn_hub;
struct rsn_entry;

struct rsn_member {
    struct rsn_hub *hub;
    const struct lock_env *env;  /* its counters, and the store's servers */
    const struct rsn_sm *m;      /* its machine: the channel, and whether it waits */
    void (*subscribed)(struct rsn_member *me);
    void (*woken)(struct rsn_member *me, int64_t exit_ns, int64_t arrive_ns);
    void (*down)(struct rsn_member *me, enum rsn_ps_event ev, const char *why);
    /* the hub's */
    struct rsn_entry *entry;     /* the entry it waits through, or NULL */
    struct rsn_member *mprev, *mnext, *pprev, *pnext;
    bool parked;
};

/* The hub of loop L (made by its first user, freed with its last). */
struct rsn_hub *rsn_hub_get(struct evloop *L, struct lab_err *err);
void rsn_hub_put(struct rsn_hub *h);
/* The group's random uuid: half of every owner id. */
const char *rsn_hub_token(const struct rsn_hub *h);

/* Join the entry of me->m->channel, unless a member already. 0 or -1. */
int rsn_ps_join(struct rsn_member *me);
/* Is the subscription of me's entry in effect? */
bool rsn_ps_ready(const struct rsn_member *me);
/* Ask for the entry's subscription, unless asked already. */
void rsn_ps_subscribe(struct rsn_member *me);
/* Take a permit left by a message that woke nobody: true with its stamps. */
bool rsn_ps_take_permit(struct rsn_member *me, int64_t *exit_ns, int64_t *arrive_ns);
/* Wait on the entry's semaphore; stop waiting. */
void rsn_ps_park(struct rsn_member *me);
void rsn_ps_unpark(struct rsn_member *me);
/* Leave the entry (its last member unsubscribes). */
void rsn_ps_leave(struct rsn_member *me);

#endif
