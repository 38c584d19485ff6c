# it_postgres.sh - the PostgreSQL designs on a real PostgreSQL that locklab
# starts itself (initdb + postgres, as the user postgres when run as root):
# pg-advisory and pg-for-update keep the counter exact, both are reentrant
# as the server makes them (advisory locks stack in the session; a
# transaction locks its own row again), a holder killed inside its critical
# section loses its lock the moment its session closes and a waiter gets it
# within milliseconds, a paused holder keeps it; the server itself paused
# (the postmaster and every backend) and restarted shows in the fault
# records; pg-for-update grants no nested acquire on a session the restart
# lost; a bad or unreachable --postgres is refused; and no server, backend
# or client is left behind.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
OUT=$WORK/results

# processes whose working directory is under $WORK: PostgreSQL's backends
# rewrite their command line ("postgres: lab postgres ... idle"), but they
# run in the data directory
cwd_orphans() {
    local p left=""
    for p in /proc/[0-9]*; do
        case "$(readlink "$p/cwd" 2>/dev/null)" in
        "$WORK"*) left="$left ${p#/proc/}:$(cat "$p/comm" 2>/dev/null)" ;;
        esac
    done
    echo "$left"
}

# One invocation, one embedded server, seven scenarios (the two that
# restart the server last).
# 1. Mutual exclusion: the stock exact, every release found its lock.
cat > "$D/1-counter.yaml" <<'YAML'
name: pg-counter
impls: [pg-advisory, pg-for-update]
clients: 5
run: {ops_per_client: 20, max_duration: 60s}
lock: {key: pg-counter-lock, wait: 30s}
workload: {kind: stock, stock: 100, business: 1ms}
expect: {"*": safe}
YAML
# 2. Reentrant, three levels deep, as the server makes them.
cat > "$D/2-reentrant.yaml" <<'YAML'
name: pg-reentrant
impls: [pg-advisory, pg-for-update]
clients: 3
run: {ops_per_client: 3, max_duration: 30s}
lock: {key: pg-reentrant-lock, wait: 300ms}
workload: {kind: reentrant, depth: 3, business: 1ms}
expect: {"*": safe}
YAML
# 3. A holder killed inside its critical section, then one paused 600 ms.
cat > "$D/3-crash.yaml" <<'YAML'
name: pg-crash
impls: [pg-advisory, pg-for-update]
clients: 3
run: {max_duration: 2s}
lock: {key: pg-crash-lock, wait: 5s}
workload: {kind: counter, business: 20ms, think: 5ms}
faults:
  - {at: 400ms, action: kill, target: holder}
  - {at: 1000ms, action: pause, target: holder, duration: 600ms}
expect: {"*": not-exercised}
YAML
# 3b. Holders killed at their own failpoint right after the grant: the
#     lock passes within milliseconds, and the oracle must not count the
#     dead holder, gone before its parent reaps it, as a second holder.
cat > "$D/3b-failpoint.yaml" <<'YAML'
name: pg-failpoint
impls: [pg-advisory, pg-for-update]
clients: 4
run: {max_duration: 1500ms}
lock: {key: pg-failpoint-lock, wait: 5s}
workload: {kind: counter, business: 5ms}
faults:
  - {failpoint: pg-advisory/after-grant, action: kill, count: 2}
  - {failpoint: pg-for-update/after-grant, action: kill, count: 2}
expect: {"*": safe}
YAML
# 4. The server paused (postmaster and backends) and restarted.
cat > "$D/4-server.yaml" <<'YAML'
name: pg-server
impls: [pg-advisory, pg-for-update]
clients: 3
run: {max_duration: 2s}
lock: {key: pg-server-lock, wait: 5s}
workload: {kind: counter, business: 1ms}
faults:
  - {at: 300ms, action: pause, target: postgres, duration: 300ms, when: holder}
  - {at: 900ms, action: restart, target: postgres, duration: 200ms}
expect: {"*": not-exercised}
YAML
# 5. The reentrant workload with the server restarted under a holder that
#    sleeps at after-grant, before its nested acquires: its session, its
#    transaction and its row lock are gone when it asks again. The others
#    take the lock on their new sessions (an honest violation: the restart
#    took the lock from under its holder); its nested acquire must not be
#    granted on a session that holds nothing.
cat > "$D/5-reentrant-restart.yaml" <<'YAML'
name: pg-reentrant-restart
impls: [pg-for-update]
clients: 3
run: {ops_per_client: 100, max_duration: 30s}
lock: {key: pg-reentrant-restart-lock, wait: 5s}
workload: {kind: reentrant, depth: 3, business: 1ms}
faults:
  - {failpoint: pg-for-update/after-grant, action: sleep, duration: 1500ms}
  - {at: 300ms, action: restart, target: postgres, duration: 200ms, when: holder}
expect: {"*": violation}
YAML
# 1b. A sweep past the embedded server's connections: the step within them
#     runs, the one past them is not run and the summary says why.
cat > "$D/1b-limit.yaml" <<'YAML'
name: pg-limit
impls: [pg-advisory]
clients: [1, 291]
run: {max_duration: 300ms}
lock: {key: pg-limit-lock, keys: [per-client]}
workload: {kind: counter}
expect: {"*": safe}
YAML
run_ok "seven scenarios" "$D"/[1-5]*-*.yaml

r=results.scenario=pg-limit
expect_safe "pg-limit: the step within the connections ran" $r
expect_eq "pg-limit: ... at 1 client" "$(jget "$S" $r.clients)" 1
expect_eq "pg-limit: one step not run" "$(jget "$S" skipped)" 1
expect_eq "pg-limit: ... the one at 291 clients" "$(jget "$S" skipped.0.clients)" 291
check "pg-limit: ... because PostgreSQL takes 290 connections as the lab starts it" \
    grep -q "^PostgreSQL as the lab starts it takes at most 290 connections" \
    <<<"$(jget "$S" skipped.0.why)"

for impl in pg-advisory pg-for-update; do
    r=results.impl=$impl,scenario=pg-counter
    expect_safe "$impl" $r
    expect_eq "$impl: sold out exactly" "$(jget "$S" $r.safety.oversold)" 0
    expect_eq "$impl: every release owned" "$(jget "$S" $r.ops.released)" 100
    expect_eq "$impl: ran on the embedded server" "$(jget "$S" $r.servers.postgres.external)" \
        false
done
# pg_stat_statements: lock + unlock per cycle; BEGIN, SELECT, COMMIT (one
# client's SET lock_timeout on top)
in_range "pg-advisory: statements per acquire" \
    "$(jget "$S" results.impl=pg-advisory,scenario=pg-counter.server_ops_per_acquire)" 2 2.2
in_range "pg-for-update: statements per acquire" \
    "$(jget "$S" results.impl=pg-for-update,scenario=pg-counter.server_ops_per_acquire)" 3 3.3

for impl in pg-advisory pg-for-update; do
    expect_nested_granted "$impl" results.impl=$impl,scenario=pg-reentrant 9 3
done
expect_eq "pg-advisory: every nested unlock found its lock" \
    "$(jget "$S" results.impl=pg-advisory,scenario=pg-reentrant.ops.release_not_owner)" 0

for impl in pg-advisory pg-for-update; do
    r=results.impl=$impl,scenario=pg-crash
    # a session lock has no lease a pause could outlast: nothing at stake
    expect_not_exercised "$impl: killed and paused holders" $r
    expect_eq "$impl: the kill hit a holder" \
        "$(jget "$S" $r.faults.0.note | grep -c '^inside its critical section; stopped')" 1
    expect_eq "$impl: killed by the fault, not crashed" \
        "$(jget "$S" $r.clients_status.killed_by_fault)" 1
    # the session ends with the client's socket: the lock passes at once
    in_range "$impl: a waiter got the killed holder's lock (ms)" "$(jget "$S" $r.recovery_ms)" \
        0 300
    expect_eq "$impl: the pause hit a holder" \
        "$(jget "$S" $r.faults.1.note | grep -c '^inside its critical section; stopped')" 1
    # no lease: the paused holder kept it, a waiter waited the pause out
    expect_gt "$impl: a wait outlasted the pause (us)" \
        "$(jget "$S" $r.latency_us.acquire.max)" 550000
done

for impl in pg-advisory pg-for-update; do
    r=results.impl=$impl,scenario=pg-failpoint
    expect_safe "$impl: killed at after-grant" $r
    expect_eq "$impl: two clients killed at the failpoint" \
        "$(jget "$S" $r.clients_status.killed_by_fault)" 2
    in_range "$impl: a waiter got the lock of one killed at the failpoint (ms)" \
        "$(jget "$S" $r.recovery_ms)" 0 300
done

for impl in pg-advisory pg-for-update; do
    r=results.impl=$impl,scenario=pg-server
    # 1 ms sections: nobody held through the pause or the restart
    expect_not_exercised "$impl: server paused and restarted" $r
    expect_eq "$impl: the pause landed" "$(jget "$S" $r.faults.0.outcome)" done
    check "$impl: the pause stopped every backend with the postmaster" \
        grep -Eq '^while client [0-9] held the lock; with ([1-9][0-9]*) of its \1 child processes(; all serving after [0-9.]+ s)?$' \
        <<<"$(jget "$S" $r.faults.0.note)"
    expect_eq "$impl: the restart landed" "$(jget "$S" $r.faults.1.outcome)" done
    check "$impl: the restart names the old and the new postmaster" \
        grep -Eq '^postgres \(pid [0-9]+\) -> pid [0-9]+$' <<<"$(jget "$S" $r.faults.1.hit)"
    expect_gt "$impl: clients got the lock again after the restart" \
        "$(jget "$S" $r.ops.acquired)" 50
done

r=results.impl=pg-for-update,scenario=pg-reentrant-restart
expect_eq "reentrant restart: the holder slept at after-grant" "$(jget "$S" $r.faults.0.outcome)" done
expect_eq "reentrant restart: the restart hit it there" \
    "$(jget "$S" $r.faults.1.note | grep -c "^while client $(jget "$S" $r.faults.0.client) held the lock")" 1
expect_violation "reentrant restart: the others took the lock the restart freed" $r
acquired=$(jget "$S" $r.ops.acquired)
expect_gt "reentrant restart: outer acquires before and after the restart" "$acquired" 50
# every chain of 3 granted but the sleeper's, whose first nested acquire
# found its session lost and failed (before the fix: granted, 3 per outer)
expect_eq "reentrant restart: no nested grant on the lost session" \
    "$(jget "$S" $r.ops.nested_acquired)" $((acquired * 3 - 3))
expect_eq "reentrant restart: only the sleeper's outer release found nothing held" \
    "$(jget "$S" $r.ops.release_not_owner)" 1
expect_eq "reentrant restart: no nested timeout" "$(jget "$S" $r.ops.nested_timeouts)" 0

# 6. External servers: a malformed --postgres is bad usage, an unreachable
#    one an environment failure; neither runs anything.
"$LOCKLAB" run "$D/1-counter.yaml" --postgres "host=127.0.0.1 port" --out "$OUT" --quiet \
    --no-plot >/dev/null 2>&1
expect_eq "malformed --postgres: exit code" "$?" 2
"$LOCKLAB" run "$D/1-counter.yaml" --postgres 127.0.0.1:1 --out "$OUT" --quiet --no-plot \
    >/dev/null 2>&1
expect_eq "unreachable --postgres: exit code" "$?" 3
# a scenario whose every step is past the embedded server's connections
# is refused before anything starts
sed -e 's/^clients: .*/clients: 291/' "$D/1b-limit.yaml" > "$WORK/limit-only.yaml"
"$LOCKLAB" run "$WORK/limit-only.yaml" --out "$OUT" --quiet --no-plot > /dev/null \
    2> "$WORK/limit.err"
expect_eq "291 clients on the embedded PostgreSQL: exit code" "$?" 2
check "... says the limit at the file" \
    grep -q "limit-only.yaml: pg-advisory at 291 clients: PostgreSQL .* 290 connections" \
    "$WORK/limit.err"

expect_no_orphans "after the PostgreSQL runs"
left=$(cwd_orphans)
if [ -z "$left" ]; then pass "no PostgreSQL backend left"; else fail "backends left:$left"; fi
expect_no_temp_dirs "after the PostgreSQL runs"
finish
