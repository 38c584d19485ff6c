/*
 * redisson_pubsub.h - the pub/sub side of redisson in either mode
 * (redisson_pubsub.c): what one Redisson JVM's PublishSubscribe is, for
 * the clients of one event loop: a client group's (one JVM for the
 * group), or a lone client process's own loop (its JVM). One connection
 * per hub, made at the first SUBSCRIBE (Redisson's PublishSubscribe takes
 * a pub/sub connection when a listener first subscribes), one entry per
 * channel (RedissonLockEntry) whose first member subscribes and last one
 * unsubscribes, and a semaphore: an unlock message wakes the member parked
 * longest, or stays as a permit for the next to wait.
 *
 * A member is a client's place in it, embedded in its driver's state. The
 * machine's SUBSCRIBE and WAIT go to rsn_ps_act; what the pub/sub does
 * later (the subscription confirmed, a message for a parked member, the
 * connection gone while it waited) is fed to the member's machine by the
 * hub, which hands the machine's next act to the member's next hook.
 *
 * The hub is nobody's on the loop (its socket and search are armed with
 * no owner current, so no client's pause or kill holds them); a member is
 * its client's (the owner current at rsn_ps_init). next is called from
 * the loop, never from inside the hub: each event is handed over through
 * the member's own zero timer, first armed as its owner, so a held
 * (paused) client gets it only once released and acts on nothing while
 * held. A later event replaces one not yet handed over, and one that
 * finds the machine no longer waiting for it is dropped. A message that
 * wakes a held member stays its: as a Java Semaphore's release unparks
 * only its longest waiter, which takes the permit when it next runs, the
 * other waiters wait on to their own wake-up (the holder's PTTL, or the
 * budget) and try again then.
 */
#ifndef LOCKLAB_REDISSON_PUBSUB_H
#define LOCKLAB_REDISSON_PUBSUB_H

#include <stdbool.h>
#include <stdint.h>

#include "evloop.h"
#include "lock.h"
#include "redisson_machine.h"

struct rsn_hub;
struct rsn_entry;

struct rsn_member {
    struct rsn_hub *hub;
    const struct lock_env *env;  /* its counters, and the store's servers */
    struct rsn_sm *m;            /* its machine, fed the pub/sub's events */
    void (*next)(struct rsn_member *me, enum rsn_act act); /* the machine's next act */
    /* the hub's */
    struct ev_owner *owner;      /* its client's */
    struct rsn_entry *entry;     /* the entry it waits through, or NULL */
    struct rsn_member *mprev, *mnext; /* its entry's members */
    uint64_t parked;             /* its place in the entry's semaphore queue, 0: none */
    struct ev_timer later;       /* hands the event below over, as owner */
    int hand;                    /* the event not yet handed over, 0: none */
    int ev;                      /* a lost connection: how */
    int64_t exit_ns, arrive_ns;
    char why[200];
    /* the master its command connection uses (rsn_ps_master), port 0: not known */
    char master_host[64];
    int master_port;
};

/* The hub of loop L (made by its first user, freed with its last). */
struct rsn_hub *rsn_hub_get(struct evloop *L, struct lab_err *err);
void rsn_hub_put(struct rsn_hub *h);
/* The hub's random uuid: the JVM's, half of every owner id. */
const char *rsn_hub_token(const struct rsn_hub *h);

/* me, in hub h, for machine m of env: its client's (the loop's current
 * owner) from now on. */
void rsn_ps_init(struct rsn_member *me, struct rsn_hub *h, const struct lock_env *env,
                 struct rsn_sm *m, void (*next)(struct rsn_member *me, enum rsn_act act));
/* The master me's command connection uses, told before each SUBSCRIBE or
 * WAIT: with sentinels, a new pub/sub connection goes there, as
 * Redisson's goes to the master its connection manager knows, without
 * asking the sentinels again (a client cut off from them with its master
 * still subscribes); the sentinels are asked only when no member knows. */
void rsn_ps_master(struct rsn_member *me, const char *host, int port);
/* The machine's SUBSCRIBE or WAIT (*act): true with *act the next act
 * when it is known at once (subscribed already, a permit, the
 * subscription gone); false: me waits for next(), or for m->wake_at,
 * when its driver calls rsn_ps_unpark and feeds rsn_sm_timer. */
bool rsn_ps_act(struct rsn_member *me, enum rsn_act *act, int64_t now);
/* Stop waiting: its own clock came first (an event not yet handed over
 * is dropped). */
void rsn_ps_unpark(struct rsn_member *me);
/* Leave the entry after an acquire (its last member unsubscribes); also a
 * killed client's leaving: the JVM's PublishSubscribe outlives a thread. */
void rsn_ps_leave(struct rsn_member *me);

#endif
