# it_faults.sh - the fault timeline on real servers with real signals: a
# paused holder past its TTL is an overlap (and pausing a lock without a TTL
# invents none), a killed holder's TTL lock is granted again after about the
# TTL, SETNX killed before its EXPIRE blocks the lock for good, a fault that
# cannot land makes the verdict error (never safe), a restarted lock store
# comes back on its port, and an interrupt in the middle of a pause leaves no
# process stopped or alive.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
OUT=$WORK/results

# durations of the records of result R, as "end-start" ms, one per line
durations() {
    local n i
    n=$(jget "$S" "$1.faults")
    for ((i = 0; i < n; i++)); do
        awk -v a="$(jget "$S" "$1.faults.$i.start_ms")" -v b="$(jget "$S" "$1.faults.$i.end_ms")" \
            'BEGIN { printf "%d\n", b - a }'
    done
}

# 1. GC pause: the holder stopped 600 ms inside a 200 ms lease, three times.
cat > "$D/pause.yaml" <<'YAML'
name: pause
impls: [redis-lua, redis-set-del]
clients: 3
run: {max_duration: 4s}
lock: {ttl: 200ms, wait: 10s, retry_interval: 5ms}
workload: {kind: counter, business: 20ms}
faults:
  - {every: 1s, count: 3, action: pause, target: holder, duration: 600ms}
expect: {redis-lua: violation, redis-set-del: violation}
YAML
run_ok "pause" "$D/pause.yaml"
r=results.impl=redis-lua
expect_eq "redis-lua paused past its TTL: verdict" "$(jget "$S" $r.verdict)" violation
expect_gt "the overlap is counted" "$(jget "$S" $r.safety.violations)" 0
expect_eq "three pause records" "$(jget "$S" $r.faults)" 3
for i in 0 1 2; do
    expect_eq "pause $i landed" "$(jget "$S" $r.faults.$i.outcome)" done
    expect_eq "pause $i hit a holder" "$(jget "$S" $r.faults.$i.note)" \
        "inside its critical section; stopped $(jget "$S" $r.faults.$i.in_section_ms | awk '{printf "%.2f", $1}') ms after its grant (point: grant)"
    # point: grant (the default): on a grant the engine saw first at its
    # look (every 1 ms), as the record itself measures it from the grant
    in_range "pause $i landed right after a grant (ms into the section)" \
        "$(jget "$S" $r.faults.$i.in_section_ms)" 0 10
    expect_gt "pause $i names the pid" "$(jget "$S" $r.faults.$i.pid)" 0
done
for d in $(durations $r); do in_range "a pause lasts its duration" "$d" 595 750; done
expect_gt "redis-set-del paused: the lock deleted under its next holder" \
    "$(jget "$S" results.impl=redis-set-del.ops.release_deleted_other)" 0

# ... and the same pauses inside a lease that outlasts them invent nothing,
# and put nothing at stake: not-exercised, never safe; a fourth at a random
# point of the section lands inside its 20 ms business.
sed -e 's/name: pause/name: pause-held/; s/ttl: 200ms/ttl: 5s/' \
    -e 's/expect: .*/expect: {"*": not-exercised}/' \
    -e 's/^faults:$/faults:\n  - {at: 3500ms, action: pause, target: holder, duration: 100ms, point: random}/' \
    "$D/pause.yaml" > "$D/held.yaml"
run_ok "pause-held" "$D/held.yaml"
for impl in redis-lua redis-set-del; do
    r=results.impl=$impl
    expect_eq "$impl paused inside a 5 s lease: verdict" "$(jget "$S" $r.verdict)" not-exercised
    expect_eq "$impl: no overlap" "$(jget "$S" $r.safety.violations)" 0
    expect_eq "$impl: the lock never at stake" "$(jget "$S" $r.at_stake)/$(jget "$S" $r.at_stake_judged)" 0/4
    W=$(jget "$S" $r.faults.0.stake_why)
    check "$impl: the first pause's reason ($W)" \
        grep -qE "^client [0-9]+ left .* before another client|^no other client was granted" <<< "$W"
    expect_eq "$impl: four pauses landed" "$(jget "$S" $r.faults)" 4
    expect_eq "$impl: the random point is said" \
        "$(jget "$S" "$r.faults.3.note" | grep -c '(point: random)$')" 1
    in_range "$impl: ... and lies within the business time (ms)" \
        "$(jget "$S" "$r.faults.3.in_section_ms")" 0 30
    expect_eq "$impl: counter exact despite the pauses" "$(jget "$S" $r.workload.final_value)" \
        "$(jget "$S" $r.ops.acquired)"
done

# 2. A holder killed inside its critical section; SETNX killed before EXPIRE.
cat > "$D/crash.yaml" <<'YAML'
name: crash
impls: [redis-lua, redis-setnx-expire]
clients: 3
run: {max_duration: 3s}
lock: {ttl: 500ms, wait: 10s, retry_interval: 5ms}
workload: {kind: counter, business: 10ms, think: 5ms}
faults:
  - {at: 1s, action: kill, target: holder}
  - {failpoint: redis-setnx-expire/after-setnx, action: kill}
expect: {redis-lua: safe, redis-setnx-expire: blocked}
YAML
run_ok "crash" "$D/crash.yaml"
r=results.impl=redis-lua
expect_safe "redis-lua after a killed holder" $r
expect_eq "the kill is not a crash" "$(jget "$S" $r.clients_status.killed_by_fault)" 1
expect_eq "... and no client crashed" "$(jget "$S" $r.clients_status.crashed)" 0
in_range "recovery is about the TTL" "$(jget "$S" $r.recovery_ms)" 450 800
expect_eq "the other design's failpoint is skipped here" \
    "$(jget "$S" "$r.faults.target=redis-setnx-expire/after-setnx.outcome")" skipped
r=results.impl=redis-setnx-expire
expect_eq "killed between SETNX and EXPIRE: verdict" "$(jget "$S" $r.verdict)" blocked
expect_eq "... nobody got the lock again" "$(jget "$S" $r.ops.acquired)" 0
expect_eq "the failpoint fired once" \
    "$(jget "$S" "$r.faults.target=redis-setnx-expire/after-setnx.outcome")" done

# 3. A fault that cannot land is never a safe verdict.
cat > "$D/miss.yaml" <<'YAML'
name: miss
impls: [redis-lua]
clients: 2
run: {max_duration: 1500ms}
lock: {ttl: 1s}
faults:
  - {at: 500ms, action: kill, target: "client:5"}
expect: {redis-lua: safe}
YAML
"$LOCKLAB" run "$D/miss.yaml" --out "$OUT" --quiet --no-plot >/dev/null 2>&1
expect_eq "a missed fault fails the expectation: exit code" "$?" 1
S=$OUT/latest/summary.json
expect_eq "missed fault: verdict" "$(jget "$S" results.0.verdict)" error
expect_eq "missed fault: recorded skipped" "$(jget "$S" results.0.faults.0.outcome)" skipped

# 4. The lock store restarted (empty) comes back on its port; the next
#    design of the scenario runs on it.
cat > "$D/restart.yaml" <<'YAML'
name: restart
impls: [redis-lua, redis-set-del]
clients: 2
run: {max_duration: 2s}
lock: {ttl: 1s, wait: 5s, retry_interval: 5ms}
workload: {kind: counter, business: 1ms}
faults:
  - {at: 500ms, action: restart, target: redis, duration: 300ms}
expect: {"*": any}
YAML
run_ok "restart" "$D/restart.yaml"
for impl in redis-lua redis-set-del; do
    r=results.impl=$impl
    expect_eq "$impl: the restart landed" "$(jget "$S" $r.faults.0.outcome)" done
    check "$impl: the record names the old and the new pid" \
        grep -Eq '^redis \(pid [0-9]+\) -> pid [0-9]+$' <<<"$(jget "$S" $r.faults.0.hit)"
    for d in $(durations $r); do in_range "$impl: down for its duration" "$d" 300 700; done
    expect_gt "$impl: clients got the lock after the restart" "$(jget "$S" $r.ops.acquired)" 10
done

# 5. SIGINT in the middle of a 20 s pause: nothing stays stopped or alive.
cat > "$D/long.yaml" <<'YAML'
name: long
impls: [redis-lua]
clients: 2
run: {max_duration: 60s}
lock: {ttl: 100ms, wait: 30s}
workload: {kind: counter, business: 50ms}
faults:
  - {at: 300ms, action: pause, target: holder, duration: 20s}
YAML
"$LOCKLAB" run "$D/long.yaml" --out "$OUT" --quiet --no-plot >/dev/null 2>&1 &
pid=$!
stopped=""
end=$((SECONDS + 30))
while [ -z "$stopped" ] && [ $SECONDS -lt $end ]; do
    for c in $(client_pids "$pid"); do
        [ "$(awk '{print $3}' /proc/"$c"/stat 2>/dev/null)" = T ] && stopped=$c
    done
    sleep 0.02
done
check "a client is stopped by the pause" test -n "$stopped"
kill -INT "$pid"
wait "$pid"
expect_eq "interrupted run: exit code" "$?" 130
check "the paused client is gone" test ! -e /proc/"$stopped"
left=$(ps -eo stat=,args= | awk -v w="$WORK" '$1 ~ /^T/ && index($0, w)')
expect_eq "no process left stopped" "$left" ""
expect_no_orphans "after an interrupt during a pause"

# 6. Bad fault entries: file:line:column, exit 2, nothing started.
bad() { expect_bad_fault "$@"; }
bad "unknown action" "{at: 1s, action: freeze, target: holder}" "unknown action 'freeze'"
bad "no target" "{at: 1s, action: kill}" "target is missing"
bad "kill with a duration" "{at: 1s, action: kill, target: holder, duration: 1s}" "kill takes no duration"
bad "pause without one" "{at: 1s, action: pause, target: holder}" "pause needs a duration"
bad "unknown target" "{at: 1s, action: kill, target: redis-node}" "unknown target 'redis-node'"
bad "restart of a client" "{at: 1s, action: restart, target: holder, duration: 1s}" "restart applies to a server"
bad "unknown failpoint" "{failpoint: redis-lua/nowhere, action: kill}" "no failpoint 'redis-lua/nowhere'"
bad "at and every" "{at: 1s, every: 1s, action: kill, target: holder}" "exactly one of at, every or failpoint"
expect_no_orphans "after bad input"
finish
