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
 * woken (a message for it: it was parked) and down (the connection went
 * while it waited on the pub/sub: RSN_PS_LOST after the connection was
 * made, RSN_PS_ERROR for an error reply, RSN_PS_FAILED when none could be
 * made).
 *
 * The hub is the group's, nobody's on the loop (its socket and search are
 * armed with no owner current, so no client's pause or kill holds them);
 * a member is its logical client's (the owner current at rsn_ps_init).
 * The hooks are called from the loop, never from inside the hub: each
 * event is handed over through the member's own zero timer, first armed
 * as its owner, so a held (paused) client gets it only once released and
 * acts on nothing while held. A later event replaces one not yet handed
 * over. A message that wakes a held member stays its: as a Java
 * Semaphore's release unparks only its longest waiter, which takes the
 * permit when it next runs, the other waiters wait on to their own
 * wake-up (the holder's PTTL, or the budget) and try again then.
 */
#ifndef LOCKLAB_REDISSON_PUBSUB_H
#define LOCKLAB_REDISSON_PUBSUB_H

#include <stdbool.h>
#include <stdint.h>

#include "evloop.h"
#include "lock.h"
#include "redisson_machine.h"

enum rsn_ps_event { RSN_PS_LOST, RSN_PS_ERROR, RSN_PS_FAILED };

struct rsn_hub;
struct rsn_entry;

struct rsn_member {
    struct rsn_hub *hub;
    const struct lock_env *env;  /* its counters, and the store's servers */
    const struct rsn_sm *m;      /* its machine: the channel, and whether it waits */
    struct ev_owner *owner;      /* its logical client's (rsn_ps_init) */
    void (*subscribed)(struct rsn_member *me);
    void (*woken)(struct rsn_member *me, int64_t exit_ns, int64_t arrive_ns);
    void (*down)(struct rsn_member *me, enum rsn_ps_event ev, const char *why);
    /* the hub's */
    struct rsn_entry *entry;     /* the entry it waits through, or NULL */
    struct rsn_member *mprev, *mnext, *pprev, *pnext;
    bool parked;
    struct ev_timer later;       /* hands the event below over, as owner */
    int hand;                    /* the event not yet handed over, 0: none */
    enum rsn_ps_event ev;
    int64_t exit_ns, arrive_ns;
    char why[200];
};

/* The hub of loop L (made by its first user, freed with its last). */
struct rsn_hub *rsn_hub_get(struct evloop *L, struct lab_err *err);
void rsn_hub_put(struct rsn_hub *h);
/* The group's random uuid: half of every owner id. */
const char *rsn_hub_token(const struct rsn_hub *h);

/* Make me its logical client's: the loop's current owner (from its open). */
void rsn_ps_init(struct rsn_member *me);
/* Join the entry of me->m->channel, unless a member already. 0 or -1. */
int rsn_ps_join(struct rsn_member *me);
/* Is the subscription of me's entry in effect? */
bool rsn_ps_ready(const struct rsn_member *me);
/* Ask for the entry's subscription, unless asked already. */
void rsn_ps_subscribe(struct rsn_member *me);
/* Take a permit left by a message that woke nobody: true with its stamps. */
bool rsn_ps_take_permit(struct rsn_member *me, int64_t *exit_ns, int64_t *arrive_ns);
/* Wait on the entry's semaphore; stop waiting (an event not yet handed
 * over is dropped: the member acts on its own clock instead). */
void rsn_ps_park(struct rsn_member *me);
void rsn_ps_unpark(struct rsn_member *me);
/* Leave the entry (its last member unsubscribes); also a killed client's
 * leaving: the JVM's PublishSubscribe outlives its thread. */
void rsn_ps_leave(struct rsn_member *me);

#endif
