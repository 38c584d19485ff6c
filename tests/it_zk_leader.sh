# it_zk_leader.sh - a ZooKeeper ensemble of 3 loses its leader and keeps
# every lock (tests/scenarios/faults/zk-leader.yaml): zk-sequential and
# zk-ephemeral, each with the leader of the moment killed, started again
# (it rejoins), paused for a second, and a follower killed. The engine finds
# the leader and the followers from each server's srvr at the moment a
# fault fires and records when a leader served again. Every design stays
# without overlap (not-exercised: a 5 ms section never sits through an
# election, so no fault put the lock at stake) with its stock exact and no release that found its node gone (the
# sessions outlived the election), and no lock operation failed, not even
# one the fault would excuse (fault_errors). In the same invocation a
# single server (its own ensemble of 1) runs standalone: a leader target is
# skipped with the reason, and the verdict is error.
. "$(dirname "$0")/lib.sh"

F=$SRC/tests/scenarios/faults
run_ok "zk-leader" "$F/zk-leader.yaml" "$F/zk-standalone.yaml"

# "zookeeper:I (pid P) -> pid Q": the server a record hit, by its own name
server_of() { sed -n 's/^\(zookeeper:[0-2]\) (pid [0-9]*).*$/\1/p' <<<"$1"; }

for impl in zk-sequential zk-ephemeral; do
    r="results.impl=$impl,scenario=zk-leader"
    expect_eq "$impl: verdict" "$(jget "$S" "$r.verdict")" not-exercised
    expect_eq "$impl: no overlap" "$(jget "$S" "$r.safety.violations")" 0
    expect_eq "$impl: no lost update" "$(jget "$S" "$r.safety.lost_updates")" 0
    expect_eq "$impl: nothing oversold" "$(jget "$S" "$r.safety.oversold")" 0
    sold=$(jget "$S" "$r.workload.units_done")
    expect_eq "$impl: stock exact" "$(jget "$S" "$r.workload.final_value")" $((100000 - sold))
    expect_gt "$impl: clients sold through the faults" "$sold" 50
    expect_eq "$impl: every release found its node (no lock lost)" \
        "$(jget "$S" "$r.ops.release_not_owner")" 0
    expect_eq "$impl: no error" "$(jget "$S" "$r.ops.errors")/$(jget "$S" "$r.ops.release_errors")" 0/0
    # docs/faults.md, "A ZooKeeper ensemble losing its leader": the designs wait out the election
    # within their wait budget, so nothing fails even while a server is down
    expect_eq "$impl: no fault error" "$(jget "$S" "$r.fault_errors")" 0
    expect_eq "$impl: clients were given all three addresses" \
        "$(jget "$S" "$r.servers.zookeeper.addresses")" 3
    expect_eq "$impl: four faults" "$(jget "$S" "$r.faults")" 4
    for i in 0 1 2 3; do
        expect_eq "$impl: fault $i done" "$(jget "$S" "$r.faults.$i.outcome")" done
    done

    # 0: the leader killed; another server leads within the session timeout
    hit=$(jget "$S" "$r.faults.0.hit")
    killed=$(server_of "$hit")
    check "$impl: the kill names the server and its new pid ($hit)" \
        grep -Eq '^zookeeper:[0-2] \(pid [0-9]+\) -> pid [0-9]+$' <<<"$hit"
    check "$impl: the killed server was the leader" \
        grep -q "it was the leader" <<<"$(jget "$S" "$r.faults.0.note")"
    leader=$(jget "$S" "$r.faults.0.leader")
    check "$impl: a new leader ($leader), not the killed $killed" \
        test -n "$killed" -a "$leader" != "$killed" -a "$leader" != "<missing>"
    in_range "$impl: re-elected within the session timeout (ms)" \
        "$(jget "$S" "$r.faults.0.leader_back_ms")" 50 6000
    check "$impl: the kill's band lasts until the election" awk -v a="$(jget "$S" "$r.faults.0.start_ms")" \
        -v b="$(jget "$S" "$r.faults.0.leader_back_ms")" -v e="$(jget "$S" "$r.faults.0.end_ms")" \
        'BEGIN { exit !(e + 0.01 >= a + b) }'

    # 1: started again on its port and data: it rejoins as a follower
    expect_eq "$impl: start brings back the server the kill took" \
        "$(server_of "$(jget "$S" "$r.faults.1.hit")")" "$killed"
    expect_eq "$impl: ... under the same leader" "$(jget "$S" "$r.faults.1.leader")" "$leader"
    expect_gt "$impl: ... and it took time to rejoin (ms)" \
        "$(awk -v a="$(jget "$S" "$r.faults.1.start_ms")" -v b="$(jget "$S" "$r.faults.1.end_ms")" \
            'BEGIN { print b - a }')" 100

    # 2: the leader of the moment paused: no leader until it is continued
    check "$impl: the pause hit the leader" \
        grep -q "it was the leader" <<<"$(jget "$S" "$r.faults.2.note")"
    in_range "$impl: no leader while it was stopped (ms)" \
        "$(jget "$S" "$r.faults.2.leader_back_ms")" 990 3000

    # 3: a follower killed: the leader stays, no election
    follower=$(server_of "$(jget "$S" "$r.faults.3.hit")")
    check "$impl: the follower killed ($follower) is not the leader" \
        test -n "$follower" -a "$follower" != "$(jget "$S" "$r.faults.3.leader")"
    expect_eq "$impl: no election after a follower's kill" \
        "$(jget "$S" "$r.faults.3.leader_back_ms")" null
done

r="results.scenario=zk-standalone"
expect_eq "standalone: its own ensemble of 1" "$(jget "$S" "$r.servers.zookeeper.ensemble")" 1
expect_eq "standalone: the leader target is skipped" "$(jget "$S" "$r.faults.0.outcome")" skipped
check "standalone: ... saying why" grep -q "standalone" <<<"$(jget "$S" "$r.faults.0.note")"
expect_eq "standalone: a fault that never landed: verdict" "$(jget "$S" "$r.verdict")" error
expect_no_orphans "after the leader faults"
finish
