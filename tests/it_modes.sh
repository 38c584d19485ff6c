# it_modes.sh - a verdict is the design's, not the client mode's: the same
# fault scenarios run with one process per client and with all 4 clients in
# one group (run.clients_per_process: 4), nothing else changed, and each
# design gets the same verdict, the one it is known for, in both:
#  - failover (sentinel topology, a grant lost with the master): redis-lua
#    violation (the group driver follows the sentinels to the new master);
#  - gc-pause (the holder paused past its TTL, fencing off and on):
#    redis-lua and zk-sequential violation / fenced,
#    redis-set-del and redlock violation, pg-advisory safe (no lease: the
#    others wait);
#  - crash-holder (the holder killed, and redis-setnx-expire killed at its
#    after-setnx failpoint): redis-lua, zk-sequential and pg-advisory safe,
#    redis-setnx-expire blocked;
#  - restart of the store, empty, under a holder: redis-lua violation;
#  - a pause of 1 s at redis-lua's after-grant failpoint (TTL 300 ms):
#    violation, and the pause ends after its duration, not at the engine's
#    next due entry (a record a client publishes wakes the engine).
# In the group, a fault aimed at a client (the holder, a failpoint's client)
# hits that client alone for the Redis, ZooKeeper and PostgreSQL designs: its records
# name "client N (of group 0, ...)", and the others went on (the group's
# grants continue after a kill). Not yet the etcd and MariaDB designs,
# whose group drivers share state between clients (etcd: libcurl's
# connection pool; MariaDB: the turns to connect): a fault there still hits
# the group's process, and a paused group has no rival to take the lock
# (etcd-lease: safe in a group).
. "$(dirname "$0")/lib.sh"

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
impls: [redis-lua, redis-set-del, redlock, zk-sequential, pg-advisory]
clients: 4
run: {max_duration: 3500ms, clients_per_process: $m}
backends:
  redis: {masters: 3}
  zookeeper: {session_timeout: 800ms, force_sync: false}
lock: {key: gc-lock, ttl: 500ms, wait: 20s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 50ms, fencing: [false, true]}
faults:
  - {at: 1s, action: pause, target: holder, duration: 1500ms}
expect:
  "*": {unfenced: violation, fenced: fenced}
  redis-set-del: violation
  redlock: violation
  pg-advisory: safe
YAML
    cat > "$D/crash$m.yaml" <<YAML
name: crash-$m
impls: [redis-lua, redis-setnx-expire, zk-sequential, pg-advisory]
clients: 4
run: {max_duration: 4s, clients_per_process: $m}
backends:
  zookeeper: {session_timeout: 1500ms, force_sync: false}
lock: {key: crash-lock, ttl: 1s, wait: 4s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 20ms, think: 10ms}
faults:
  - {failpoint: redis-setnx-expire/after-setnx, action: kill}
  - {at: 1500ms, action: kill, target: holder}
expect:
  "*": safe
  redis-setnx-expire: blocked
YAML
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
    cat > "$D/restart$m.yaml" <<YAML
name: restart-$m
impls: [redis-lua]
clients: 4
run: {max_duration: 4s, clients_per_process: $m}
lock: {key: rs-lock, ttl: 2s, wait: 10s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 400ms}
faults:
  - {at: 500ms, action: restart, target: redis, duration: 100ms, when: holder}
expect: {"*": violation}
YAML
done

run_ok "both modes, four fault scenarios" "$D"/failover1.yaml "$D"/failover4.yaml \
    "$D"/gc1.yaml "$D"/gc4.yaml "$D"/crash1.yaml "$D"/crash4.yaml \
    "$D"/restart1.yaml "$D"/restart4.yaml "$D"/fp1.yaml "$D"/fp4.yaml

# verdict SCENARIO IMPL [FENCING]: the verdict of one result
verdict() {
    local sel="scenario=$1,impl=$2"
    [ -n "${3:-}" ] && sel="$sel,fencing=$3"
    jget "$S" "results.$sel.verdict"
}
for row in "failover redis-lua - violation" "gc redis-lua off violation" "gc redis-lua on fenced" \
           "gc redis-set-del - violation" "gc redlock - violation" "gc zk-sequential off violation" \
           "gc zk-sequential on fenced" "gc pg-advisory - safe" \
           "crash redis-lua - safe" "crash zk-sequential - safe" "crash pg-advisory - safe" \
           "crash redis-setnx-expire - blocked" "restart redis-lua - violation" \
           "fp redis-lua - violation"; do
    set -- $row
    f=$3
    [ "$f" = - ] && f=
    expect_eq "$1, $2 ${f:+(fencing $f) }one process per client" "$(verdict "$1-1" "$2" $f)" "$4"
    expect_eq "$1, $2 ${f:+(fencing $f) }in one group" "$(verdict "$1-4" "$2" $f)" "$4"
done

# the faults landed in both modes, and in the group on one client each
for m in 1 4; do
    # (crash's fault 0 is the failpoint of another design: skipped for redis-lua)
    for sel in "scenario=gc-$m,impl=redis-lua,fencing=off:0" "scenario=crash-$m,impl=redis-lua:1"; do
        for k in ${sel#*:}; do
            expect_eq "${sel%:*}: fault $k landed" \
                "$(jget "$S" "results.${sel%:*}.faults.$k.outcome")" done
        done
    done
    expect_eq "crash-$m: the killed client counted as killed by a fault" \
        "$(jget "$S" "results.scenario=crash-$m,impl=redis-lua.clients_status.killed_by_fault")" 1
    expect_eq "failover-$m: the fault landed" \
        "$(jget "$S" "results.scenario=failover-$m,impl=redis-lua.faults.0.outcome")" done
    expect_eq "restart-$m: the fault landed" \
        "$(jget "$S" "results.scenario=restart-$m,impl=redis-lua.faults.0.outcome")" done
done
for m in 1 4; do
    r="results.scenario=fp-$m,impl=redis-lua.faults.0"
    in_range "fp-$m: the failpoint's pause lasted its 1 s" \
        "$(( $(jget "$S" $r.end_ms | cut -d. -f1) - $(jget "$S" $r.start_ms | cut -d. -f1) ))" 950 1250
done
for sel in "scenario=gc-4,impl=redis-lua,fencing=off.faults.0" "scenario=fp-4,impl=redis-lua.faults.0" \
           "scenario=crash-4,impl=redis-lua.faults.1" \
           "scenario=crash-4,impl=redis-setnx-expire.faults.0" \
           "scenario=gc-4,impl=zk-sequential,fencing=off.faults.0" \
           "scenario=crash-4,impl=zk-sequential.faults.1" \
           "scenario=crash-4,impl=pg-advisory.faults.1" \
           "scenario=gc-4,impl=pg-advisory.faults.0"; do
    hit=$(jget "$S" "results.$sel.hit")
    check "$sel hit one client of the group ($hit)" \
        grep -qx 'client [0-3] (of group 0, pid [0-9]*)' <<< "$hit"
done
# a kill of one client leaves the others of its group running: granted
# again after the kill (at 1.5 s), once the dead holder's TTL ran out
r="results.scenario=crash-4,impl=redis-lua.faults.1.recovery_ms"
in_range "crash-4: the others of the group were granted after the kill (ms)" \
    "$(jget "$S" $r | cut -d. -f1)" 500 2400
finish
