# it_failover.sh - the shipped master-failover scenario on the embedded
# sentinel topology (a master, 2 replicas, 3 sentinels): the failover fault
# cuts replication, waits for a grant the replicas never saw, kills the
# master and follows the sentinels' switch. Single-instance designs lose
# the lock (violation), redis-wait grants nothing unreplicated (safe), redlock on 5 masters with one killed keeps it
# (safe); every phase of the fault is recorded, the old master rejoins as a
# replica, and nothing is left running.
. "$(dirname "$0")/lib.sh"

run_ok "failover" "$SRC/scenarios/failover.yaml"
for impl in redis-lua redis-watchdog redisson; do
    r=results.impl=$impl
    f="$r.faults.action=failover"
    expect_violation "failover $impl" $r
    expect_eq "failover $impl: the failover landed" "$(jget "$S" "$f.outcome")" done
    expect_gt "failover $impl: a grant came after the cut" "$(jget "$S" "$f.phases_ms.granted")" 0
    expect_gt "failover $impl: the master was killed after that grant" \
        "$(awk -v a="$(jget "$S" "$f.phases_ms.killed")" -v b="$(jget "$S" "$f.phases_ms.granted")" 'BEGIN{print a-b+1}')" 0
    in_range "failover $impl: the sentinels switched within seconds of the kill" \
        "$(awk -v a="$(jget "$S" "$f.phases_ms.switched")" -v b="$(jget "$S" "$f.phases_ms.killed")" 'BEGIN{printf "%d", a-b}')" 100 6000
    expect_gt "failover $impl: the old master rejoined" "$(jget "$S" "$f.phases_ms.rejoined")" 0
    expect_eq "failover $impl: not a lab error" "$(jget "$S" "$r.ops.errors")" 0
    expect_eq "failover $impl: topology" "$(jget "$S" "$r.servers.redis.topology")" sentinel
done
r=results.impl=redis-wait
expect_safe "failover redis-wait (WAIT 1 replica)" $r
expect_eq "failover redis-wait: the failover landed" "$(jget "$S" "$r.faults.action=failover.outcome")" done
expect_eq "failover redis-wait: no grant went unreplicated" \
    "$(jget "$S" "$r.faults.action=failover.note" | grep -c 'no unreplicated grant')" 1
r=results.impl=redlock
expect_safe "failover redlock (one of 5 masters killed)" $r
expect_eq "failover redlock: the kill landed" "$(jget "$S" "$r.faults.action=kill.outcome")" done
expect_eq "failover redlock: the failover is not for it" \
    "$(jget "$S" "$r.faults.action=failover.outcome")" skipped
expect_no_orphans "after the failover scenario"
finish
