# it_crash.sh - a client process that dies in the middle of a run is
# reported (count and signal), never dropped; the run still ends, the other
# clients' numbers are kept, and the oracle does not invent a violation out
# of the dead client's unfinished critical section. And a holder killed
# by a fault when no client is left alive to ask for its lock is no
# `blocked`: nobody could have been granted it.
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
wait_store "$pid" 4 client_pids # the lock store's $port and the four clients
victim=$(client_pids "$pid" | sed -n 2p)
check "found a client process to kill" test -n "$victim"
# into the middle of the loops: a client holds the lock (its key is there)
held() { [ "$(redis-cli -p "$port" EXISTS locklab 2>/dev/null)" = 1 ]; }
check "the clients are inside their loops (a lock key held) before the kill" wait_for 20 held
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

# both clients killed while holding, one after the other: the first's lock
# passes to the second; nobody is left to take the second's (before, the
# run read `blocked`, "a killed holder's lock was never granted again")
cat > "$D/all-killed.yaml" <<'YAML'
name: all-killed
impls: [redis-lua]
clients: 2
run: {max_duration: 2500ms}
lock: {ttl: 300ms, wait: 5s, retry_interval: 5ms}
workload: {kind: counter, business: 20ms}
faults:
  - {at: 500ms, action: kill, target: holder}
  - {at: 1200ms, action: kill, target: holder}
expect: {redis-lua: safe}
YAML
run_ok "every client killed" "$D/all-killed.yaml"
expect_eq "every client killed: both kills landed" \
    "$(jget "$S" $r.faults.0.outcome)/$(jget "$S" $r.faults.1.outcome)" done/done
expect_eq "... the two clients killed by a fault" "$(jget "$S" $r.clients_status.killed_by_fault)" 2
check "... the first kill's lock went to the other client" \
    awk -v v="$(jget "$S" $r.faults.0.recovery_ms)" 'BEGIN { exit !(v + 0 > 0) }'
expect_eq "... verdict: not blocked with nobody left to ask" "$(jget "$S" $r.verdict)" safe
expect_no_orphans "after a client crash"
expect_no_temp_dirs "after a client crash"
finish
