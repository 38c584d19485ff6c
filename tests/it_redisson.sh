# it_redisson.sh - the Redisson RLock design on a real Redis: in watchdog
# mode (lock.watchdog_lease given) a lease shorter than the business time
# is renewed and the lock stays exclusive; with a lease (lock.ttl given:
# lock(leaseTime), no watchdog; redisson used to ignore it) shorter than the
# business time the lease runs out under the holder and the oracle sees two
# holders; and waiters sleep on pub/sub instead of polling, so every release
# wakes the whole herd (more than one notification per release, no polls).
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/watchdog.yaml" <<'YAML'
name: redisson-watchdog
impls: [redisson]
clients: 8
run: {ops_per_client: 2, max_duration: 60s}
lock: {ttl: 100ms, watchdog_lease: 100ms, wait: 20s}
workload: {kind: counter, business: 300ms}
expect: {redisson: safe}
YAML
cat > "$D/lease.yaml" <<'YAML'
name: redisson-lease
impls: [redisson]
clients: 4
run: {ops_per_client: 3, max_duration: 60s}
lock: {ttl: 50ms, wait: 20s}
workload: {kind: counter, business: 300ms}
expect: {redisson: violation}
YAML
cat > "$D/herd.yaml" <<'YAML'
name: redisson-herd
impls: [redisson]
clients: 8
run: {ops_per_client: 10, max_duration: 60s}
lock: {key: herd-lock, ttl: 10s, wait: 20s}
workload: {kind: counter, business: 5ms}
expect: {redisson: safe}
YAML

OUT=$WORK/results
r=results.impl=redisson

run_ok "watchdog" "$D/watchdog.yaml"
acquired=$(jget "$S" $r.ops.acquired)
expect_eq "watchdog: every acquire granted" "$acquired" 16
expect_exact "watchdog" $r "$acquired"
expect_gt "watchdog: the lease was renewed" "$(jget "$S" $r.lock_stats.renewals)" 0

run_ok "ttl as the lease" "$D/lease.yaml"
expect_violation "ttl as the lease" $r
expect_gt "ttl as the lease: releases found the lease gone" "$(jget "$S" $r.ops.release_not_owner)" 0
expect_eq "ttl as the lease: no watchdog" "$(jget "$S" $r.lock_stats.renewals)" 0

run_ok "herd" "$D/herd.yaml"
expect_safe "herd" $r 80
expect_gt "herd: pub/sub messages received" "$(jget "$S" $r.lock_stats.notifications)" 0
expect_eq "herd: waiters never poll" "$(jget "$S" $r.lock_stats.polls)" 0
expect_gt "herd: a release wakes more than one waiter" "$(jget "$S" $r.wakeups_per_release)" 1
expect_gt "herd: handoffs measured" "$(jget "$S" $r.latency_us.handoff.count)" 0

expect_no_orphans "after the redisson runs"
finish
