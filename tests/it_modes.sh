# it_modes.sh - a verdict is the design's, not the client mode's: the same
# fault scenarios run with one process per client and with the clients in
# groups (run.clients_per_process: 4, or 2 where hosts split the clients),
# nothing else changed, and each design gets the same verdict, the one it
# is known for, in both; a design of each store in each scenario:
#  - failover (sentinel topology, a grant lost with the master): redis-lua
#    violation (the group driver follows the sentinels to the new master);
#  - gc-pause (the holder paused past its TTL): redis-lua, zk-sequential
#    and etcd-lease violation, and fenced for the first two (only they: for
#    the others, whether the pause lands before the holder's write, fenced,
#    or after it, an overlap with nothing to refuse, is still luck),
#    redlock and redisson violation, pg-advisory and
#    mysql-get-lock not-exercised (no lease: the others wait, the pause
#    cannot cost the session its lock, so it put nothing at stake);
#  - crash-holder (the holder killed, and redis-setnx-expire killed at its
#    after-setnx failpoint): redis-lua, redisson, zk-sequential, etcd-lease,
#    pg-advisory and mysql-get-lock safe, redis-setnx-expire blocked;
#  - restart of the store under a holder in a 4.5 s section (longer than
#    the slowest store's return, ZooKeeper's about 2.3 s, so that the holder
#    is still inside when every store serves again: at stake in every run,
#    where a 2.5 s section left it 0.01 s before ZooKeeper came back in one
#    mode and read not-exercised; a TTL of 6 s, longer than the section,
#    so that only the restart can cost the lock): redis-lua
#    (back empty), pg-advisory and mysql-get-lock (the sessions end with
#    the server) violation; zk-sequential and etcd-lease safe (their data, the session
#    and the lease, survive the restart);
#  - partition (the holder's host cut from the stores for 3 s, inside a
#    2.5 s section; hosts of two clients each, so a group is a host):
#    redis-lua, zk-sequential and etcd-lease violation, pg-advisory and
#    mysql-get-lock not-exercised (the session outlives a cut of 3 s: the
#    lock was never at stake);
#  - a pause of 1 s at redis-lua's after-grant failpoint (TTL 300 ms):
#    violation, and the pause ends after its duration, not at the engine's
#    next due entry (a record a client publishes wakes the engine).
# In a group, a fault aimed at a client (the holder, a failpoint's client)
# hits that client alone: its records name "client N (of group 0, ...)",
# and the others went on (the group's grants continue after a kill).
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
    cat > "$D/crash$m.yaml" <<YAML
name: crash-$m
impls: [redis-lua, redis-setnx-expire, redisson, zk-sequential, etcd-lease, pg-advisory,
        mysql-get-lock]
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
impls: [redis-lua, zk-sequential, etcd-lease, pg-advisory, mysql-get-lock]
clients: 4
run: {max_duration: 6s, clients_per_process: $m}
backends:
  zookeeper: {session_timeout: 1500ms, force_sync: false}
lock: {key: rs-lock, ttl: 6s, wait: 10s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 4500ms}
faults:
  - {at: 300ms, action: restart, target: redis, duration: 100ms, when: holder}
  - {at: 300ms, action: restart, target: zookeeper, duration: 100ms, when: holder}
  - {at: 300ms, action: restart, target: etcd, duration: 100ms, when: holder}
  - {at: 300ms, action: restart, target: postgres, duration: 100ms, when: holder}
  - {at: 300ms, action: restart, target: mysql, duration: 100ms, when: holder}
expect: {"*": violation, zk-sequential: safe, etcd-lease: safe}
YAML
    p=$(( m == 1 ? 1 : 2 ))
    cat > "$D/part$m.yaml" <<YAML
name: part-$m
impls: [redis-lua, zk-sequential, etcd-lease, pg-advisory, mysql-get-lock]
clients: 4
run: {max_duration: 4500ms, clients_per_process: $p}
backends:
  zookeeper: {session_timeout: 1s, force_sync: false}
hosts:
  a: [client:0, client:1]
  b: [client:2, client:3]
  store: [redis, zookeeper, etcd, postgres, mysql]
lock: {key: part-lock, ttl: 1s, etcd_keepalive: true, wait: 10s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 2500ms}
faults:
  - {at: 0s, when: holder, window: 3s, action: partition, isolate: holder, duration: 3s}
expect: {"*": violation, pg-advisory: not-exercised, mysql-get-lock: not-exercised}
YAML
done

run_ok "both modes, five fault scenarios and a failpoint" "$D"/failover1.yaml "$D"/failover4.yaml \
    "$D"/gc1.yaml "$D"/gc4.yaml "$D"/gcf1.yaml "$D"/gcf4.yaml "$D"/crash1.yaml "$D"/crash4.yaml \
    "$D"/restart1.yaml "$D"/restart4.yaml "$D"/fp1.yaml "$D"/fp4.yaml
# the partition's hosts are namespaces of their own: a run of their own
cp "$S" "$WORK/modes.json"
run_ok "both modes, a partition" "$D"/part1.yaml "$D"/part4.yaml
SP=$S
S=$WORK/modes.json

# verdict SCENARIO IMPL [FENCING]: the verdict of one result
verdict() {
    local sel="scenario=$1,impl=$2"
    [ -n "${3:-}" ] && sel="$sel,fencing=$3"
    case $1 in part-*) jget "$SP" "results.$sel.verdict" ;; *) jget "$S" "results.$sel.verdict" ;; esac
}
for row in "failover redis-lua - violation" "gc redis-lua - violation" "gcf redis-lua - fenced" \
           "gc redlock - violation" "gc zk-sequential - violation" \
           "gcf zk-sequential - fenced" "gc etcd-lease - violation" \
           "gc pg-advisory - not-exercised" "gc mysql-get-lock - not-exercised" "gc redisson - violation" \
           "crash redisson - safe" "crash mysql-get-lock - safe" \
           "restart mysql-get-lock - violation" "part mysql-get-lock - not-exercised" \
           "crash redis-lua - safe" "crash zk-sequential - safe" "crash etcd-lease - safe" \
           "crash pg-advisory - safe" "crash redis-setnx-expire - blocked" \
           "restart redis-lua - violation" "restart zk-sequential - safe" \
           "restart etcd-lease - safe" "restart pg-advisory - violation" \
           "fp redis-lua - violation" \
           "part redis-lua - violation" "part zk-sequential - violation" \
           "part etcd-lease - violation" "part pg-advisory - not-exercised"; do
    set -- $row
    f=$3
    [ "$f" = - ] && f=
    expect_eq "$1, $2 ${f:+(fencing $f) }one process per client" "$(verdict "$1-1" "$2" $f)" "$4"
    expect_eq "$1, $2 ${f:+(fencing $f) }in one group" "$(verdict "$1-4" "$2" $f)" "$4"
done

# the faults landed in both modes, and in the group on one client each
for m in 1 4; do
    # (crash's fault 0 is the failpoint of another design: skipped for redis-lua)
    for sel in "scenario=gc-$m,impl=redis-lua:0" "scenario=crash-$m,impl=redis-lua:1"; do
        for k in ${sel#*:}; do
            expect_eq "${sel%:*}: fault $k landed" \
                "$(jget "$S" "results.${sel%:*}.faults.$k.outcome")" done
        done
    done
    expect_eq "crash-$m: the killed client counted as killed by a fault" \
        "$(jget "$S" "results.scenario=crash-$m,impl=redis-lua.clients_status.killed_by_fault")" 1
    expect_eq "failover-$m: the fault landed" \
        "$(jget "$S" "results.scenario=failover-$m,impl=redis-lua.faults.0.outcome")" done
    for row in redis-lua:redis zk-sequential:zookeeper etcd-lease:etcd pg-advisory:postgres \
               mysql-get-lock:mysql; do
        impl=${row%:*}
        r="results.scenario=restart-$m,impl=$impl.faults"
        got=none # (the records stand in the order the faults fired)
        for k in 0 1 2 3 4; do
            [ "$(jget "$S" "$r.$k.target")" = "${row#*:}" ] && got=$(jget "$S" "$r.$k.outcome")
        done
        expect_eq "restart-$m, $impl: its store's restart landed" "$got" done
        expect_gt "restart-$m, $impl: the lock at stake (its holder inside when the store came back)" \
            "$(jget "$S" "results.scenario=restart-$m,impl=$impl.at_stake")" 0
        expect_eq "part-$m, $impl: the partition landed" \
            "$(jget "$SP" "results.scenario=part-$m,impl=$impl.faults.0.outcome")" done
    done
done
for m in 1 4; do
    r="results.scenario=fp-$m,impl=redis-lua.faults.0"
    in_range "fp-$m: the failpoint's pause lasted its 1 s" \
        "$(( $(jget "$S" $r.end_ms | cut -d. -f1) - $(jget "$S" $r.start_ms | cut -d. -f1) ))" 950 1250
done
for sel in "scenario=gc-4,impl=redis-lua.faults.0" "scenario=fp-4,impl=redis-lua.faults.0" \
           "scenario=crash-4,impl=redis-lua.faults.1" \
           "scenario=crash-4,impl=redis-setnx-expire.faults.0" \
           "scenario=gc-4,impl=zk-sequential.faults.0" \
           "scenario=crash-4,impl=zk-sequential.faults.1" \
           "scenario=crash-4,impl=pg-advisory.faults.1" \
           "scenario=gc-4,impl=etcd-lease.faults.0" \
           "scenario=gc-4,impl=redisson.faults.0" \
           "scenario=crash-4,impl=redisson.faults.1" \
           "scenario=gc-4,impl=mysql-get-lock.faults.0" \
           "scenario=crash-4,impl=mysql-get-lock.faults.1" \
           "scenario=crash-4,impl=etcd-lease.faults.1" \
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
