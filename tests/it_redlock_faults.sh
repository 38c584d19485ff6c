# it_redlock_faults.sh - Kleppmann's faults against RedLock on real
# masters: the three shipped scenarios in one invocation (the same masters
# serve them all, so persistence is switched on and off between runs and a
# jumped clock is set back), with their expectations and fault records: a
# restart that lands while a client holds the lock, a clock jump whose
# record shows the server's clock moved +30 s. A clock jump of the lock
# store breaks redis-lua the same way. A jump that cannot move the clock
# (the shim replaced by a library that does nothing) is `failed` and the
# verdict `error`, never `safe`; a missing shim is an environment error;
# `when: holder` with no holder in its window is `skipped`; one master of
# 5 paused past the run's end leaves the lock available (`safe`, not
# `unavailable`). Bad entries are
# refused with file:line:column before anything starts. No process is
# left after any of it.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
OUT=$WORK/results

# 1. The shipped scenarios.
run_ok "redlock-faults" "$SRC/scenarios/redlock-faults.yaml" \
    "$SRC/scenarios/redlock-faults-aof.yaml" "$SRC/scenarios/redlock-faults-clock.yaml"

r=results.scenario=redlock-faults
expect_violation "restarted empty + clock jump" $r
expect_gt "... the stock lost an update" "$(jget "$S" $r.safety.lost_updates)" 0
expect_eq "... persistence none" "$(jget "$S" $r.servers.redis.persistence)" none
f=$r.faults.action=restart
expect_eq "restart landed" "$(jget "$S" $f.outcome)" done
check "... while a client held the lock" \
    grep -Eq '^while client [01] held the lock(; all serving after [0-9.]+ s)?$' <<<"$(jget "$S" $f.note)"
check "... on master 0, back with a new pid" \
    grep -Eq '^redis-node:0 \(pid [0-9]+\) -> pid [0-9]+$' <<<"$(jget "$S" $f.hit)"
f=$r.faults.action=clock-jump
expect_eq "clock jump landed" "$(jget "$S" $f.outcome)" done
in_range "... the server's clock was seen to move +30 s (ms)" "$(jget "$S" $f.clock_jump_ms)" \
    29980 30020
check "... and the note says so" \
    grep -Eq '^while client [01] held the lock; its clock moved \+(29\.9|30\.0)[0-9]* s$' \
    <<<"$(jget "$S" $f.note)"

r=results.scenario=redlock-faults-aof
expect_safe "the same restart with aof-always" $r
expect_eq "... both units sold, none lost" "$(jget "$S" $r.workload.units_done)" 2
expect_eq "... persistence aof-always" "$(jget "$S" $r.servers.redis.persistence)" aof-always
expect_eq "... the restart landed" "$(jget "$S" $r.faults.0.outcome)" done
expect_eq "... one fault only" "$(jget "$S" $r.faults)" 1

r=results.scenario=redlock-faults-clock
expect_violation "clocks of two masters +30 s" $r
for i in 1 2; do
    f="$r.faults.target=redis-node:$i"
    expect_eq "master $i's jump landed" "$(jget "$S" "$f.outcome")" done
    in_range "... seen +30 s (ms)" "$(jget "$S" "$f.clock_jump_ms")" 29980 30020
done
expect_no_orphans "after the shipped scenarios"

# 2. The lock store's clock: redis-lua's key expires under its holder.
cat > "$D/store.yaml" <<'YAML'
name: store-clock
impls: [redis-lua]
clients: 2
run: {ops_per_client: 1, max_duration: 10s}
lock: {ttl: 10s, wait: 5s, retry_interval: 20ms}
workload: {kind: stock, stock: 2, business: 1s}
faults:
  - {at: 200ms, when: holder, action: clock-jump, target: redis, offset: 30s}
expect: {redis-lua: violation}
YAML
run_ok "store-clock" "$D/store.yaml"
expect_violation "redis-lua, lock store +30 s" results.0
expect_eq "... the jump landed" "$(jget "$S" results.0.faults.0.outcome)" done

# 3. A jump that does not move the clock is failed, and the verdict error.
LOCKLAB_CLOCK_SHIM=/dev/null "$LOCKLAB" run "$D/store.yaml" --out "$OUT" --quiet --no-plot \
    >/dev/null 2>&1
expect_eq "no working shim: the expectation fails (exit code)" "$?" 1
S=$OUT/latest/summary.json
expect_eq "... verdict error" "$(jget "$S" results.0.verdict)" error
expect_eq "... the jump recorded failed" "$(jget "$S" results.0.faults.0.outcome)" failed
check "... saying why" grep -q "without the clock shim" <<<"$(jget "$S" results.0.faults.0.note)"
LOCKLAB_CLOCK_SHIM=$WORK/nowhere.so "$LOCKLAB" run "$D/store.yaml" --out "$OUT" --quiet \
    --no-plot >/dev/null 2>&1
expect_eq "no shim at all: environment error (exit code)" "$?" 3
expect_no_orphans "after the failed jumps"

# 4. when: holder with no holder in the window: skipped, and the run error.
cat > "$D/noholder.yaml" <<'YAML'
name: no-holder
impls: [redis-lua]
clients: 1
run: {ops_per_client: 2, max_duration: 5s}
lock: {ttl: 10s}
workload: {kind: counter, think: 1500ms}
faults:
  - {at: 300ms, when: holder, window: 400ms, action: restart, target: redis, duration: 100ms}
expect: {redis-lua: error}
YAML
# 4b. One master of 5 paused past the run's end: the other 4 grant on, and
#     the lock was available (before, the master never serving again made
#     it `unavailable`).
cat > "$D/paused.yaml" <<'YAML'
name: master-paused
impls: [redlock]
clients: 4
backends: {redis: {topology: single, masters: 5}}
run: {max_duration: 1500ms}
lock: {key: master-paused-lock, ttl: 2s, wait: 5s, retry_interval: 10ms}
workload: {kind: counter, business: 5ms}
faults:
  - {at: 300ms, action: pause, target: redis-node:1, duration: 5s}
expect: {"*": not-exercised}
YAML
run_ok "no-holder, a master paused" "$D/noholder.yaml" "$D/paused.yaml"
expect_eq "no holder: skipped" "$(jget "$S" results.0.faults.0.outcome)" skipped
expect_eq "... saying why" "$(jget "$S" results.0.faults.0.note)" \
    "no client was inside its critical section within 400 ms"
r=results.scenario=master-paused
# 5 ms sections: the pause put no lock at stake (not-exercised, not safe)
expect_eq "a master paused past the end, the majority granting: verdict" \
    "$(jget "$S" $r.verdict)" not-exercised
expect_eq "... no overlap" "$(jget "$S" $r.safety.violations)" 0
expect_eq "... the pause landed" "$(jget "$S" $r.faults.0.outcome)" done
expect_gt "... grants after it (each attempt waits out the paused master's 50 ms)" \
    "$(jget "$S" $r.ops.acquired)" 20

# 5. Bad entries: file:line:column, exit 2, nothing started.
expect_bad_fault "jump on ZooKeeper" "{at: 1s, action: clock-jump, target: zookeeper, offset: 30s}" \
    "clock-jump moves the wall clock of a Redis server"
expect_bad_fault "jump on a client" "{at: 1s, action: clock-jump, target: holder, offset: 30s}" \
    "target redis or redis-node:I, not holder"
expect_bad_fault "jump without offset" "{at: 1s, action: clock-jump, target: redis}" \
    "clock-jump needs an offset"
expect_bad_fault "jump of 0" "{at: 1s, action: clock-jump, target: redis, offset: 0s}" \
    "offset must be a duration such as 30s"
expect_bad_fault "jump with a duration" "{at: 1s, action: clock-jump, target: redis, offset: 1s, duration: 1s}" \
    "clock-jump takes no duration"
expect_bad_fault "offset on a kill" "{at: 1s, action: kill, target: redis, offset: 1s}" \
    "offset goes with clock-jump, not kill"
expect_bad_fault "when on a client" "{at: 1s, when: holder, action: kill, target: random-client}" \
    "when: holder holds back a server fault"
expect_bad_fault "when: always" "{at: 1s, when: always, action: kill, target: redis}" \
    "unknown value 'always' (valid: holder"
printf 'name: bad\nimpls: [redlock]\nbackends: {redis: {persistence: sometimes}}\n' > "$D/bad.yaml"
msg=$("$LOCKLAB" run "$D/bad.yaml" --out "$OUT" 2>&1)
expect_eq "unknown persistence: exit code" "$?" 2
check "... message" grep -q "bad.yaml:3:33: unknown value 'sometimes' for backends.redis.persistence" \
    <<<"$msg"
expect_no_orphans "after bad input"
finish
