# it_modes.sh - a verdict is the design's, not the client mode's: the same
# fault scenarios run with one process per client and with the clients in
# groups (run.clients_per_process: 4), nothing else changed, and each
# design gets the same verdict, the one it is known for, in both. Here the
# failover, the gc-pause and a failpoint's pause; the crash, the restart
# and the partition are tests/it_modes_stores.sh's (two tests, so that
# ctest runs them side by side):
#  - failover (sentinel topology, a grant lost with the master): redis-lua
#    violation (the group driver follows the sentinels to the new master);
#  - gc-pause (the holder paused past its TTL): redis-lua, zk-sequential
#    and etcd-lease violation, and fenced for the first two (only they: for
#    the others, whether the pause lands before the holder's write, fenced,
#    or after it, an overlap with nothing to refuse, is still luck),
#    redlock and redisson violation, pg-advisory and
#    mysql-get-lock not-exercised (no lease: the others wait, the pause
#    cannot cost the session its lock, so it put nothing at stake);
#  - a pause of 1 s at redis-lua's after-grant failpoint (TTL 300 ms):
#    violation, and the pause ends after its duration, not at the engine's
#    next due entry (a record a client publishes wakes the engine).
# In a group, a fault aimed at a client (the holder, a failpoint's client)
# hits that client alone: its records name "client N (of group 0, ...)",
# and the others went on (the group's grants continue after a kill).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/modes_lib.sh"

D=$WORK/scn
mkdir -p "$D"
for m in 1 4; do
    cat > "$D/failover$m.yaml" <<YAML
name: failover-$m
impls: [redis-lua]
clients: 4
run: {max_duration: 14s, clients_per_process: $m}
backends:
  redis: {topology: sentinel, replicas: 1}
lock: {key: fo-lock, ttl: 5s, wait: 20s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 4500ms}
faults:
  - {at: 1s, action: failover, target: redis-master, window: 10s}
expect: {"*": violation}
YAML
    cat > "$D/gc$m.yaml" <<YAML
name: gc-$m
impls: [redis-lua, redlock, redisson, zk-sequential, etcd-lease, pg-advisory, mysql-get-lock]
clients: 4
run: {max_duration: 3500ms, clients_per_process: $m}
backends:
  redis: {masters: 3}
  zookeeper: {session_timeout: 800ms, force_sync: false}
lock: {key: gc-lock, ttl: 500ms, wait: 20s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 50ms, fencing: false}
faults:
  - {at: 1s, action: pause, target: holder, duration: 1500ms}
expect: {"*": violation, pg-advisory: not-exercised, mysql-get-lock: not-exercised}
YAML
    sed -e "s/^name: gc-$m/name: gcf-$m/" -e 's/^impls: .*/impls: [redis-lua, zk-sequential]/' \
        -e 's/fencing: false}/fencing: true}/' -e 's/^expect: .*/expect: {"*": fenced}/' \
        "$D/gc$m.yaml" > "$D/gcf$m.yaml"
    cat > "$D/fp$m.yaml" <<YAML
name: fp-$m
impls: [redis-lua]
clients: 4
run: {max_duration: 2500ms, clients_per_process: $m}
lock: {key: fp-lock, ttl: 300ms, wait: 5s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 20ms}
faults:
  - {failpoint: redis-lua/after-grant, action: pause, duration: 1s, count: 1}
expect: {"*": violation}
YAML
done

run_ok "both modes, a failover, a gc-pause and a failpoint" "$D"/failover1.yaml \
    "$D"/failover4.yaml "$D"/gc1.yaml "$D"/gc4.yaml "$D"/gcf1.yaml "$D"/gcf4.yaml \
    "$D"/fp1.yaml "$D"/fp4.yaml

same_verdicts "failover redis-lua - violation" "gc redis-lua - violation" \
    "gcf redis-lua - fenced" "gc redlock - violation" "gc zk-sequential - violation" \
    "gcf zk-sequential - fenced" "gc etcd-lease - violation" \
    "gc pg-advisory - not-exercised" "gc mysql-get-lock - not-exercised" \
    "gc redisson - violation" "fp redis-lua - violation"

# the faults landed in both modes, and in the group on one client each
for m in 1 4; do
    expect_eq "gc-$m: fault 0 landed" "$(jget "$S" "results.scenario=gc-$m,impl=redis-lua.faults.0.outcome")" done
    expect_eq "failover-$m: the fault landed" \
        "$(jget "$S" "results.scenario=failover-$m,impl=redis-lua.faults.0.outcome")" done
    r="results.scenario=fp-$m,impl=redis-lua.faults.0"
    in_range "fp-$m: the failpoint's pause lasted its 1 s" \
        "$(( $(jget "$S" $r.end_ms | cut -d. -f1) - $(jget "$S" $r.start_ms | cut -d. -f1) ))" 950 1250
done
in_group "scenario=gc-4,impl=redis-lua.faults.0" "scenario=fp-4,impl=redis-lua.faults.0" \
    "scenario=gc-4,impl=zk-sequential.faults.0" "scenario=gc-4,impl=etcd-lease.faults.0" \
    "scenario=gc-4,impl=redisson.faults.0" "scenario=gc-4,impl=mysql-get-lock.faults.0" \
    "scenario=gc-4,impl=pg-advisory.faults.0"
finish
