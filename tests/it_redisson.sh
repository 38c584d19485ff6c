# it_redisson.sh - the Redisson RLock design on a real Redis: in watchdog
# mode (lock.watchdog_lease given) a lease shorter than the business time
# is renewed and the lock stays exclusive; with a lease (lock.ttl given:
# lock(leaseTime), no watchdog; redisson used to ignore it) shorter than the
# business time the lease runs out under the holder and the oracle sees two
# holders; and waiters sleep on pub/sub instead of polling, so every release
# wakes the whole herd (more than one notification per release, no polls).
# A waiter whose pub/sub connection is cut re-checks the lock once it has
# subscribed again: a waiter stopped, its connection cut and the lock
# released meanwhile (the unlock message reaches nobody) is granted at
# once when it continues, not at the end of its wait; and with the pub/sub
# connections cut from outside every 10 ms while 6 clients contend on one
# key, no acquire runs out of its wait and none is an error.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/watchdog.yaml" <<'YAML'
name: redisson-watchdog
impls: [redisson]
clients: 8
run: {ops_per_client: 2, max_duration: 60s}
lock: {ttl: 300ms, watchdog_lease: 300ms, wait: 30s}
workload: {kind: counter, business: 700ms}
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

cat > "$D/gap.yaml" <<'YAML'
name: redisson-gap
impls: [redisson]
clients: 2
run: {ops_per_client: 1, max_duration: 60s}
lock: {key: gap-lock, ttl: 10s, wait: 8s}
workload: {kind: counter, business: 1500ms}
expect: {redisson: safe}
YAML
cat > "$D/cuts.yaml" <<'YAML'
name: redisson-cuts
impls: [redisson]
clients: 6
run: {ops_per_client: 600, max_duration: 120s}
lock: {key: cut-lock, ttl: 10s, wait: 10s}
workload: {kind: counter, business: 1ms}
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

# The unlock message lost in a reconnect's gap: the waiter (the client
# with a pub/sub connection, found by its port) is stopped, its connection
# cut, and the holder's release (its only one) published to nobody; the
# waiter continues 1 s later with the lock free and no release to come.
# (A waiter tries once more when its wait ends, so a lost wake-up shows as
# an acquire as long as the wait, not as a timeout.)
run_bg "$D/gap.yaml" 3
sub_port="" end=$((SECONDS + 20))
while [ -z "$sub_port" ] && [ $SECONDS -lt $end ]; do
    sub_port=$(redis-cli -p "$port" CLIENT LIST TYPE pubsub | sed -n 's/.* addr=[0-9.]*:\([0-9]*\) .*/\1/p' | head -1)
    [ -n "$sub_port" ] || sleep 0.02
done
waiter=$(ss -Htnp state established "( sport = :$sub_port )" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\),.*/\1/p' | head -1)
check "gap: found the subscribed waiter's process" test -n "$waiter"
kill -STOP "$waiter" 2>/dev/null
expect_eq "gap: the stopped waiter's pub/sub connection cut" \
    "$(redis-cli -p "$port" CLIENT KILL TYPE pubsub)" 1
end=$((SECONDS + 10))
while [ "$(redis-cli -p "$port" EXISTS gap-lock)" != 0 ] && [ $SECONDS -lt $end ]; do sleep 0.02; done
expect_eq "gap: the holder released while the waiter was away" \
    "$(redis-cli -p "$port" EXISTS gap-lock)" 0
sleep 1 # the waiter stays away 1 s more (the release's publish went with its DEL)
kill -CONT "$waiter" 2>/dev/null
wait "$pid"
expect_eq "gap: exit code" "$?" 0
S=$WORK/results/latest/summary.json
expect_exact "gap" $r 2
expect_eq "gap: the waiter did not run out of its wait" "$(jget "$S" $r.ops.timeouts)" 0
# its wait: the holder's 1.5 s, the 1 s stopped, the reconnect; without the
# re-check it sleeps to the end of its 8 s wait (then finds the lock free)
in_range "gap: the waiter was granted when it continued, not after its wait (longest acquire, us)" \
    "$(jget "$S" $r.latency_us.acquire.max)" 0 6000000

# Cuts from outside, every 10 ms for the whole run (each kills every
# subscribed waiter's connection), on a hot key.
run_bg "$D/cuts.yaml" 7
cuts=0 killed=0
while kill -0 "$pid" 2>/dev/null; do
    n=$(redis-cli -p "$port" CLIENT KILL TYPE pubsub 2>/dev/null)
    [ "$n" -gt 0 ] 2>/dev/null && cuts=$((cuts + 1)) killed=$((killed + n))
    sleep 0.01
done
wait "$pid"
expect_eq "cuts: exit code" "$?" 0
S=$WORK/results/latest/summary.json
expect_gt "cuts: pub/sub connections cut ($killed connections)" "$cuts" 100
expect_exact "cuts" $r 3600
expect_eq "cuts: no acquire waited out its wait" "$(jget "$S" $r.ops.timeouts)" 0
expect_eq "cuts: no acquire error" "$(jget "$S" $r.ops.errors)" 0

expect_no_orphans "after the redisson runs"
finish
