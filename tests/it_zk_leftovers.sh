# it_zk_leftovers.sh - a ZooKeeper client killed while holding its lock
# leaves an ephemeral node that lives on until its session times out (10 s
# here). The harness clears the lock's nodes before each run, so the next run
# on the same key is not blocked by a dead client of the previous one.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/a-killed.yaml" <<'YAML'
name: a-killed
impls: [zk-ephemeral]
clients: 1
run: {ops_per_client: 1}
lock: {key: leftover, wait: 1s}
backends: {zookeeper: {session_timeout: 10s}}
workload: {kind: counter, business: 5s}
expect: {"*": any}
YAML
cat > "$D/b-next.yaml" <<'YAML'
name: b-next
impls: [zk-ephemeral, zk-sequential]
clients: 2
run: {ops_per_client: 3}
lock: {key: leftover, wait: 2s}
backends: {zookeeper: {session_timeout: 10s}}
workload: {kind: counter, business: 1ms}
expect: {"*": safe}
YAML

OUT=$WORK/results
"$LOCKLAB" run "$D/a-killed.yaml" "$D/b-next.yaml" --out "$OUT" --quiet --no-plot &
pid=$!
# the client of a-killed is the only child of locklab that stays locklab
victim=""
end=$((SECONDS + 30))
while [ -z "$victim" ] && [ $SECONDS -lt $end ]; do
    for c in $(pgrep -P "$pid"); do
        [ "$(cat /proc/"$c"/comm 2>/dev/null)" = locklab ] && victim=$c
    done
    sleep 0.05
done
check "found the holder to kill" test -n "$victim"
sleep 1 # inside its 5 s critical section
kill -KILL "$victim"
wait "$pid"
expect_eq "the next run is not blocked by the dead holder's node (exit 0)" "$?" 0
S=$OUT/latest/summary.json
expect_eq "a-killed: the crash is reported" "$(jget "$S" results.scenario=a-killed.clients_status.crashed)" 1
# results: 0 = a-killed's zk-ephemeral, 1 and 2 = b-next's two designs
for i in 1 2; do
    impl=$(jget "$S" "results.$i.impl")
    expect_eq "b-next: result $i is b-next" "$(jget "$S" "results.$i.scenario")" b-next
    expect_eq "b-next: $impl safe" "$(jget "$S" "results.$i.verdict")" safe
    expect_eq "b-next: $impl no timeout" "$(jget "$S" "results.$i.ops.timeouts")" 0
done
expect_no_orphans "after a killed ZooKeeper client"
finish
