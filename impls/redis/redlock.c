/*
 * redlock.c - the Redlock algorithm on N independent Redis masters.
 *
 * What people ship as "the safe Redis lock" when one master is not enough
 * (antirez's Redlock; Redisson's RedissonRedLock in seed 000): N masters
 * with no replication between them. An attempt draws a fresh random token,
 * notes the time, and sends SET key token NX PX ttl to every master at once
 * (the commands are written to all connections before any reply is read).
 * It is granted when a majority (N/2+1) said OK and some validity is left:
 * validity = ttl - elapsed - drift, drift = ttl/100 + 2 ms for the clocks of
 * the masters running at slightly different rates. Otherwise the attempt
 * unlocks every master (Lua compare-and-delete of its token), as the
 * algorithm says and node-redlock does, those it believes it did not lock
 * included: no judgement of which answers to trust. (A master
 * that answered nil cannot hold this attempt's fresh token, so under
 * contention this costs compare-and-deletes that delete nothing.) Then the
 * client sleeps a random delay before the next attempt, so that clients
 * that split the votes between them do not collide again. Every master has
 * short connect and command timeouts: a dead or stopped master is a "no"
 * after 50 ms, not a stalled client, and its connection (unusable after a
 * timeout) is reopened before it is used again; a command that finds its
 * connection closed by the server (the master restarted since) is sent
 * once more on a new one, as clients that reconnect do. Release is
 * compare-and-delete on every master, best-effort: a master that does not
 * answer keeps the key until its TTL, and the release still counts as one.
 *
 * How it breaks, all of it by timing: the validity is checked once, at the
 * grant, and nothing checks it again. A client that pauses (GC, SIGSTOP)
 * or whose critical section outlasts the TTL keeps acting after the keys
 * expired on every master, as with redis-lua. A master whose clock jumps
 * forward (or that restarts without having persisted the key) forgets the
 * key early, and a second client can build a majority with it while the
 * first still holds its own. And there is no fencing token: the resource
 * cannot tell the stale holder's write from the new holder's, so a lapse
 * turns straight into lost updates. One cannot be made up either: an INCR
 * on each master gives N counters that count different grants (a master
 * misses the grants it did not vote for, or forgets its count when it
 * restarts empty), and no majority of them orders two grants the way the
 * lock's own history does. So redlock does not claim LOCK_CAP_FENCING,
 * and a fencing step runs it unfenced and says so.
 *
 * The algorithm, and every decision on a master's answer or silence, is
 * redlock_machine.c's (its header lists them; the arithmetic is
 * redlock_common.c's), in either mode: redlock_drive_block.c and
 * redlock_drive_group.c move the commands. This file is the design's table.
 */
#include "redis_drive.h"

const struct lock_ops lock_redlock = {
    .name = "redlock",
    .backend = "redis",
    .summary = "Redlock: majority of N independent masters within validity; breaks on "
               "clock jumps and pauses, no fencing",
    .caps = LOCK_CAP_TTL | LOCK_CAP_MULTI_MASTER,
    .no_fencing = "tokens from N independent masters are not ordered: each master counts "
                  "only the grants it voted for and forgets them when it restarts empty",
    .open = rl_block_open,
    .acquire = rl_block_acquire,
    .release = rl_block_release,
    .close = rl_block_close,
    .async = &rl_group_ops,
};
