# it_failover.sh - the shipped master-failover scenario on the embedded
# sentinel topology (a master, 2 replicas, 3 sentinels): the failover fault
# cuts replication, waits for a grant the replicas never saw, kills the
# master and follows the sentinels' switch. Single-instance designs lose
# the lock (violation; the watchdog designs' renewals fail on the promoted
# master), redis-wait grants nothing unreplicated (safe: the failover put
# the lock at stake and the design refused the grant it would have lost),
# redlock on 5 masters with one killed keeps it (safe), and so does
# zk-sequential on an ensemble of 3 that loses its leader while a client
# holds the lock; every phase of the fault is recorded, the old master
# rejoins as a replica, and nothing is left running, also when the run is
# interrupted while the failover holds the replicas stopped.
. "$(dirname "$0")/lib.sh"

run_ok "failover" "$SRC/scenarios/failover.yaml"
for impl in redis-lua redis-watchdog redisson; do
    r=results.impl=$impl
    f="$r.faults.action=failover"
    expect_violation "failover $impl" $r
    expect_eq "failover $impl: the failover landed" "$(jget "$S" "$f.outcome")" done
    expect_gt "failover $impl: a grant came after the cut" "$(jget "$S" "$f.phases_ms.granted")" 0
    expect_gt "failover $impl: the master was killed after that grant" \
        "$(awk -v a="$(jget "$S" "$f.phases_ms.killed")" -v b="$(jget "$S" "$f.phases_ms.granted")" 'BEGIN{print a-b}')" 0
    # aimed at the grant: killed right after it (the engine looks every
    # 2 ms), the grant after the replicas' older copy was gone, its holder
    # inside at the kill and still inside when the new master took writes
    in_range "failover $impl: killed right after the grant (ms into its section)" \
        "$(jget "$S" "$f.in_section_ms")" 0 20
    expect_eq "failover $impl: the record names the grant it aimed at" \
        "$(jget "$S" "$f.note" | grep -c "^lost a fresh grant: client $(jget "$S" "$f.client") granted [0-9.]* s after the start, after the cut and the replicas' copy (expired), not replicated; killed [0-9.]* ms into its section;")" 1
    expect_eq "failover $impl: its holder was inside when the new master took writes" \
        "$(jget "$S" "$f.note" | grep -c 'its holder still inside when the new master took writes$')" 1
    in_range "failover $impl: the sentinels switched within seconds of the kill" \
        "$(awk -v a="$(jget "$S" "$f.phases_ms.switched")" -v b="$(jget "$S" "$f.phases_ms.killed")" 'BEGIN{printf "%d", a-b}')" 100 6000
    expect_gt "failover $impl: the old master rejoined" "$(jget "$S" "$f.phases_ms.rejoined")" 0
    expect_eq "failover $impl: not a lab error" "$(jget "$S" "$r.ops.errors")" 0
    expect_eq "failover $impl: topology" "$(jget "$S" "$r.servers.redis.topology")" sentinel
    expect_gt "failover $impl: the late holder's write lost a sale" \
        "$(jget "$S" "$r.safety.lost_updates")" 0
done
# the watchdog does not help: it renews a key the promoted master never had
for impl in redis-watchdog redisson; do
    expect_gt "failover $impl: renewals failed after the switch" \
        "$(jget "$S" "results.impl=$impl.lock_stats.renewal_failures")" 0
done
r=results.impl=redis-wait
expect_safe "failover redis-wait (WAIT 1 replica)" $r
expect_eq "failover redis-wait: the failover landed" "$(jget "$S" "$r.faults.action=failover.outcome")" done
expect_eq "failover redis-wait: it found none to lose because the design refused" \
    "$(jget "$S" "$r.faults.action=failover.note" | grep -c 'found none to lose: the design gave back [1-9][0-9]* grants')" 1
expect_gt "failover redis-wait: grants given back, counted" "$(jget "$S" "$r.lock_stats.unreplicated")" 0
expect_eq "failover redis-wait: the lock at stake, and held" \
    "$(jget "$S" "$r.faults.action=failover.at_stake")/$(jget "$S" "$r.at_stake")" yes/1
r=results.impl=redlock
expect_safe "failover redlock (one of 5 masters killed)" $r
k="$r.faults.target=redis-node:1"
expect_eq "failover redlock: the kill landed" "$(jget "$S" "$k.outcome")" done
expect_eq "failover redlock: the holder sat through it, others asking: at stake" \
    "$(jget "$S" "$k.at_stake")" yes
expect_eq "failover redlock: while a client held the lock" \
    "$(jget "$S" "$k.note" | grep -c 'held the lock')" 1
expect_eq "failover redlock: the failover is not for it" \
    "$(jget "$S" "$r.faults.action=failover.outcome")" skipped
r=results.impl=zk-sequential
k="$r.faults.target=zookeeper-leader"
expect_safe "failover zk-sequential (the ensemble's leader killed)" $r
expect_eq "failover zk-sequential: the kill landed" "$(jget "$S" "$k.outcome")" done
expect_eq "failover zk-sequential: the holder sat through the election: at stake" \
    "$(jget "$S" "$k.at_stake")" yes
expect_eq "failover zk-sequential: while a client held the lock" \
    "$(jget "$S" "$k.note" | grep -c 'held the lock')" 1
in_range "failover zk-sequential: a new leader within seconds" \
    "$(jget "$S" "$k.leader_back_ms" | cut -d. -f1)" 1 6000
expect_gt "failover zk-sequential: grants went on after the election" \
    "$(jget "$S" "$r.workload.units_done")" 2
expect_eq "failover zk-sequential: not a lab error" "$(jget "$S" "$r.ops.errors")" 0
expect_eq "failover zk-sequential: ensemble" "$(jget "$S" "$r.servers.zookeeper.ensemble")" 3
expect_eq "failover zk-sequential: the failover is not for it" \
    "$(jget "$S" "$r.faults.action=failover.outcome")" skipped
expect_no_orphans "after the failover scenario"

# A failover must tell a lost grant from none to lose. Without `window`
# it waits the lease plus the business time (and 1 s) for a fresh grant:
# one replica, 5 s lease, 4 s business (a 1 s window found nothing here
# and the run said safe), the grant comes and is lost; the business
# outlasts the sentinels' switch (2.2-2.4 s after the kill) by over 1 s.
# The lock held at the cut (granted at 0) keeps the replicas' copy to 5 s;
# the second grant (about 4 s) comes before that, so the kill aims at the
# third (about 8 s), the switch about 2.3 s later, and that grant's holder
# works on past it while another is granted on the new master: the run
# ends at 12 s.
D=$WORK/scn
mkdir -p "$D"
cat > "$D/nowindow.yaml" <<'YAML'
name: nowindow
impls: [redis-lua]
clients: 3
run: {max_duration: 12s}
backends: {redis: {topology: sentinel, replicas: 1}}
lock: {ttl: 5s, wait: 20s, retry_interval: 10ms}
workload: {kind: stock, business: 4s}
faults:
  - {at: 1s, action: failover, target: redis-master}
YAML
# One client holding the lock through the whole window: nobody can be
# granted after the cut, the failover finds none to lose, and the run did
# not test what it claims: the record is skipped and the verdict error.
# The failover still kills the master: the switch is over about 3.8 s in.
# Both files run in one locklab run, on one sentinel topology started once
# (the second on the one the first failed over).
cat > "$D/nothing.yaml" <<'YAML'
name: nothing
impls: [redis-lua]
clients: 1
run: {max_duration: 5s}
backends: {redis: {topology: sentinel, replicas: 1}}
lock: {ttl: 20s, wait: 2s, retry_interval: 10ms}
workload: {kind: stock, business: 8s}
faults:
  - {at: 500ms, action: failover, target: redis-master, window: 1s}
expect: {redis-lua: error}
YAML
run_ok "failover without a window, and with nothing to lose" "$D/nowindow.yaml" "$D/nothing.yaml" \
    2>/dev/null
expect_eq "both scenarios ran" "$(jget "$S" results)" 2
r=results.scenario=nowindow
f=$r.faults.action=failover
expect_eq "no window: the failover lost a fresh grant" \
    "$(jget "$S" "$f.note" | grep -c '^lost a fresh grant')" 1
expect_violation "no window: redis-lua" $r
r=results.scenario=nothing
f=$r.faults.action=failover
expect_eq "nothing to lose: recorded skipped" "$(jget "$S" "$f.outcome")" skipped
expect_eq "nothing to lose: said why" \
    "$(jget "$S" "$f.note" | grep -c '^found none to lose: no fresh grant reached the master')" 1
expect_eq "nothing to lose: never safe" "$(jget "$S" $r.verdict)" error
expect_no_orphans "after the short failovers"

# Ctrl-C in the middle of a failover, while its replicas are stopped (the
# cut, seen in /proc): locklab exits 130 and leaves no process behind, the
# stopped replicas included.
cat > "$D/cut.yaml" <<'YAML'
name: cut
impls: [redis-lua]
clients: 2
run: {max_duration: 30s}
backends: {redis: {topology: sentinel, replicas: 2}}
lock: {ttl: 20s, wait: 30s, retry_interval: 10ms}
workload: {kind: stock, business: 15s}
faults:
  - {at: 300ms, action: failover, target: redis-master, window: 25s}
YAML
# stopped_replica PID: a redis-server child of locklab PID is stopped (T)
stopped_replica() {
    local c
    for c in $(pgrep -P "$1"); do
        [ "$(cat /proc/"$c"/comm 2>/dev/null)" = redis-server ] &&
            [ "$(awk '{print $3}' /proc/"$c"/stat 2>/dev/null)" = T ] && return 0
    done
    return 1
}
setsid "$LOCKLAB" run "$D/cut.yaml" --out "$WORK/results-cut" --quiet --no-plot &
pid=$!
end=$((SECONDS + 60))
until stopped_replica "$pid" || [ $SECONDS -ge $end ]; do sleep 0.05; done
check "cut: a replica was seen stopped" stopped_replica "$pid"
kill -INT -- "-$pid"
wait "$pid"
expect_eq "cut: interrupted: exit code" "$?" 130
S=$WORK/results-cut/latest/summary.json
expect_eq "cut: the failover's record says it was interrupted" \
    "$(jget "$S" results.0.faults.action=failover.outcome)" failed
expect_no_orphans "after an interrupted failover"
finish
