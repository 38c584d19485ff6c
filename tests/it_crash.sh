# it_crash.sh - a client process that dies in the middle of a run is
# reported (count and signal), never dropped; the run still ends, the other
# clients' numbers are kept, and the oracle does not invent a violation out
# of the dead client's unfinished critical section.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/crash.yaml" <<'YAML'
name: crash
impls: [redis-lua]
clients: 4
run: {ops_per_client: 60, max_duration: 60s}
lock: {ttl: 300ms, wait: 10s, retry_interval: 5ms}
workload: {kind: counter, business: 20ms}
expect: {redis-lua: safe}
YAML

OUT=$WORK/results
"$LOCKLAB" run "$D/crash.yaml" --out "$OUT" --quiet &
pid=$!
victim=""
end=$((SECONDS + 30))
while [ -z "$victim" ] && [ $SECONDS -lt $end ]; do
    set -- $(client_pids "$pid")
    [ $# -ge 4 ] && victim=$2
    sleep 0.05
done
check "found a client process to kill" test -n "$victim"
sleep 0.5 # let the clients run into the middle of their loops
kill -KILL "$victim"
wait "$pid"
rc=$?
S=$OUT/latest/summary.json
expect_eq "expectation failed (a crashed client is an error): exit code" "$rc" 1
r=results.impl=redis-lua
expect_eq "verdict" "$(jget "$S" $r.verdict)" error
expect_eq "crashed clients reported" "$(jget "$S" $r.clients_status.crashed)" 1
check "first_error names the signal" grep -q "killed by signal 9" <<<"$(jget "$S" $r.first_error)"
expect_eq "no invented violation" "$(jget "$S" $r.safety.violations)" 0
expect_eq "no invented misdelete (regression: a dead holder is nobody's owner)" "$(jget "$S" $r.ops.release_deleted_other)" 0
expect_gt "the other clients' work was kept" "$(jget "$S" $r.ops.acquired)" 60
expect_eq "run complete" "$(jget "$S" complete)" true
expect_no_orphans "after a client crash"
expect_no_temp_dirs "after a client crash"
finish
