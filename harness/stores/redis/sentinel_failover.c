/*
 * sentinel_failover.c - the deterministic failover of the sentinel
 * topology (action failover; see sentinel.h and backend.h).
 *
 * Redis replicates asynchronously, so a lock granted by the master and
 * not yet copied to any replica is lost when a replica is promoted: the
 * story of Redisson issue 775. Left to chance that window is a few
 * microseconds wide; the lab makes it certain, step by step, each step
 * taken on observed state:
 *   1. cut: stop every replica (SIGSTOP, confirmed) and close the master's
 *      replication links (CLIENT KILL TYPE replica), so that nothing
 *      written from now on can reach a replica: a write already in a
 *      stopped replica's socket buffer would otherwise survive;
 *   2. granted: wait until a client is inside a critical section it was
 *      granted after the cut and after the lock the replicas hold from
 *      before the cut, if any, expired (the fault engine says so, with the
 *      grant's time in fo->granted_ns), or the entry's window closes
 *      (recorded: no such grant came);
 *   3. killed: at once, SIGKILL the master, continue the replicas: the
 *      holder of that grant is a few milliseconds into its section;
 *   4. switched: the sentinels name another master;
 *   5. writable: that master takes a write;
 *   6. rejoined: the old master is started again as a replica of the new
 *      one, so the topology is whole for what comes next.
 */
#include "sentinel.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "redis_admin.h"

#define GIVE_UP_NS (30000000000LL) /* from the kill: a failover that never ends */

enum { PH_START = 0, PH_CUT, PH_KILLED, PH_SWITCHED, PH_DONE };

/* Continue every replica (all but the master of fo). */
static void continue_replicas(const struct sentinel_group *g, const struct failover *fo)
{
    for (int i = 0; i < g->n_redis; i++)
        if (i != fo->master && g->redis[i].pid > 0)
            kill(g->redis[i].pid, SIGCONT);
}

/* On the master, in one transaction: close the replication links and
 * read the lock key's PTTL (-2 none, -1 no expiry). 0, or -1 with err. */
static int kill_links_and_look(const struct server *m, const char *key, long long *pttl,
                               struct lab_err *err)
{
    redisContext *c = redis_conn_open("Redis", m->host, m->port, 1000, err);
    if (!c)
        return -1;
    redisAppendCommand(c, "MULTI");
    redisAppendCommand(c, "CLIENT KILL TYPE replica");
    redisAppendCommand(c, "PTTL %s", key);
    redisAppendCommand(c, "EXEC");
    redisReply *r = NULL;
    int rc = -1;
    for (int i = 0; i < 4; i++) {
        if (r)
            freeReplyObject(r);
        if (redisGetReply(c, (void **)&r) != REDIS_OK)
            r = NULL;
    }
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_INTEGER) {
        *pttl = r->element[1]->integer;
        rc = 0;
    } else {
        lab_err_set(err, EIO, "MULTI/CLIENT KILL/PTTL/EXEC on port %d failed", m->port);
    }
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return rc;
}

/* Cut the replication: stop the replicas, then in one transaction close
 * the master's links to them and read the lock key's time to live. What
 * the master sent before reaches the replicas when they continue; nothing
 * after. A lock held at the cut stays in the replicas' copy until its TTL
 * runs out there (expiry times are absolute): the master is killed only
 * once that copy is gone, so that the promoted replica has the lock free. */
static int cut(struct sentinel_group *g, struct failover *fo, int64_t now, struct lab_err *err)
{
    fo->master = sentinel_master(g, err);
    if (fo->master < 0)
        return -1;
    for (int i = 0; i < g->n_redis; i++) {
        if (i == fo->master)
            continue;
        if (g->redis[i].pid <= 0 || !lab_stop_confirmed(g->redis[i].pid, LAB_STOP_CONFIRM_NS)) {
            continue_replicas(g, fo);
            lab_err_set(err, ESRCH, "%s could not be stopped", g->redis[i].role);
            return -1;
        }
    }
    long long pttl;
    if (kill_links_and_look(&g->redis[fo->master], fo->key, &pttl, err) != 0) {
        continue_replicas(g, fo);
        return -1;
    }
    fo->master_pid = g->redis[fo->master].pid;
    fo->cut_ns = now;
    fo->copy_gone_ns = pttl == -2 ? now : pttl == -1 ? INT64_MAX : now + pttl * 1000000LL;
    fo->phase = PH_CUT;
    return 0;
}

/* Kill the master (granted: right after the grant the engine aims at, in
 * fo->granted_ns; else the window closed with none) and continue the
 * replicas. */
static void kill_master(struct sentinel_group *g, struct failover *fo, bool granted)
{
    if (!granted)
        fo->granted_ns = 0; /* (else the engine's: when the grant it aims at came) */
    servers_kill(&g->redis[fo->master]);
    continue_replicas(g, fo);
    fo->killed_ns = lab_now_ns();
    fo->phase = PH_KILLED;
}

/* Start the old master again as a replica of the new one. */
static int rejoin(struct sentinel_group *g, struct failover *fo, struct lab_err *err)
{
    struct server *old = &g->redis[fo->master];
    const struct server *master = &g->redis[fo->new_master];
    char extra[sizeof old->extra];
    snprintf(extra, sizeof extra, SENTINEL_REDIS_ARGS " --replicaof %s %d", master->host,
             master->port);
    memcpy(old->extra, extra, sizeof extra);
    if (servers_restart(old, err) != 0)
        return -1;
    fo->rejoined_ns = lab_now_ns();
    fo->phase = PH_DONE;
    return 0;
}

int sentinel_failover_step(struct sentinel_group *g, struct failover *fo, bool granted,
                           bool window_over, int64_t now, struct lab_err *err)
{
    switch (fo->phase) {
    case PH_START:
        return cut(g, fo, now, err) == 0 ? 0 : -1;
    case PH_CUT:
        granted = granted && fo->granted_ns >= fo->copy_gone_ns && fo->granted_ns > fo->cut_ns;
        if (granted || window_over)
            kill_master(g, fo, granted);
        return 0;
    case PH_KILLED: {
        int m = sentinel_master(g, NULL);
        if (m >= 0 && m != fo->master) {
            fo->new_master = m;
            fo->switched_ns = now;
            fo->phase = PH_SWITCHED;
        }
        break;
    }
    case PH_SWITCHED: {
        const struct server *m = &g->redis[fo->new_master];
        redisReply *r = redis_admin_command(m->host, m->port, 1000, "SET locklab:failover-probe 1",
                                            NULL);
        if (r) {
            freeReplyObject(r);
            fo->writable_ns = lab_now_ns();
            return rejoin(g, fo, err) == 0 ? 1 : -1;
        }
        break;
    }
    default:
        return 1;
    }
    if (now - fo->killed_ns > GIVE_UP_NS) {
        lab_err_set(err, ETIMEDOUT, "no failover within %lld s of the master's kill",
                    GIVE_UP_NS / 1000000000LL);
        return -1;
    }
    return 0;
}

void sentinel_failover_abort(struct sentinel_group *g, struct failover *fo)
{
    if (fo->phase == PH_START || fo->phase == PH_DONE)
        return;
    continue_replicas(g, fo);
    if (fo->phase == PH_CUT)
        return; /* the master was never killed: replication resumes */
    struct lab_err e = {0};
    int m = sentinel_master(g, NULL);
    if (m >= 0 && m != fo->master) {
        fo->new_master = m;
        rejoin(g, fo, &e);
    } else {
        servers_restart(&g->redis[fo->master], &e); /* no switch: back as the master */
    }
    fo->phase = PH_DONE;
}
