# it_modes_stores.sh - the other half of tests/it_modes.sh: the same
# verdict for a design of each store with one process per client and with
# the clients in groups, under a crash of the holder, a restart of the
# store and a partition:
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
# In a group, a fault aimed at a client (the holder, a failpoint's client)
# hits that client alone: its records name "client N (of group 0, ...)",
# and the others went on (the group's grants continue after a kill).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/modes_lib.sh"

D=$WORK/scn
mkdir -p "$D"
for m in 1 4; do
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

run_ok "both modes, a crash and a restart" "$D"/crash1.yaml "$D"/crash4.yaml \
    "$D"/restart1.yaml "$D"/restart4.yaml
# the partition's hosts are namespaces of their own: a run of their own
cp "$S" "$WORK/modes.json"
run_ok "both modes, a partition" "$D"/part1.yaml "$D"/part4.yaml
SP=$S
S=$WORK/modes.json

same_verdicts "crash redisson - safe" "crash mysql-get-lock - safe" \
    "restart mysql-get-lock - violation" "part mysql-get-lock - not-exercised" \
    "crash redis-lua - safe" "crash zk-sequential - safe" "crash etcd-lease - safe" \
    "crash pg-advisory - safe" "crash redis-setnx-expire - blocked" \
    "restart redis-lua - violation" "restart zk-sequential - safe" \
    "restart etcd-lease - safe" "restart pg-advisory - violation" \
    "part redis-lua - violation" "part zk-sequential - violation" \
    "part etcd-lease - violation" "part pg-advisory - not-exercised"

# the faults landed in both modes, and in the group on one client each
for m in 1 4; do
    # (crash's fault 0 is the failpoint of another design: skipped for redis-lua)
    expect_eq "crash-$m: fault 1 landed" \
        "$(jget "$S" "results.scenario=crash-$m,impl=redis-lua.faults.1.outcome")" done
    expect_eq "crash-$m: the killed client counted as killed by a fault" \
        "$(jget "$S" "results.scenario=crash-$m,impl=redis-lua.clients_status.killed_by_fault")" 1
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
in_group "scenario=crash-4,impl=redis-lua.faults.1" "scenario=crash-4,impl=redis-setnx-expire.faults.0" \
    "scenario=crash-4,impl=zk-sequential.faults.1" "scenario=crash-4,impl=pg-advisory.faults.1" \
    "scenario=crash-4,impl=redisson.faults.1" "scenario=crash-4,impl=mysql-get-lock.faults.1" \
    "scenario=crash-4,impl=etcd-lease.faults.1"
# a kill of one client leaves the others of its group running: granted
# again after the kill (at 1.5 s), once the dead holder's TTL ran out
r="results.scenario=crash-4,impl=redis-lua.faults.1.recovery_ms"
in_range "crash-4: the others of the group were granted after the kill (ms)" \
    "$(jget "$S" $r | cut -d. -f1)" 500 2400
finish
