# it_sigint.sh - interrupting a run: Ctrl-C (SIGINT to the whole process
# group, as a terminal sends it) and SIGTERM to locklab alone. locklab must
# exit within 2 s with code 130, leave no server or client process, and
# write what it had measured, marked incomplete.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/quick.yaml" <<'YAML'
name: quick
impls: [none]
clients: 4
run: {ops_per_client: 5}
workload: {kind: counter, business: 1ms}
expect: {none: violation}
YAML
cat > "$D/long.yaml" <<'YAML'
name: long
impls: [redis-lua]
clients: 8
run: {max_duration: 60s}
lock: {ttl: 10s, retry_interval: 5ms}
workload: {kind: counter, business: 5ms}
YAML

# wait_for DESCRIPTION SECONDS COMMAND...: poll until COMMAND succeeds
wait_for() {
    local desc=$1 limit=$2
    shift 2
    local end=$((SECONDS + limit))
    until "$@"; do
        if [ $SECONDS -ge $end ]; then fail "timed out waiting for $desc"; return 1; fi
        sleep 0.05
    done
}
summary_exists() { ls "$1"/*/summary.json >/dev/null 2>&1; }
clients_running() { [ "$(pgrep -P "$1" | wc -l)" -ge "$2" ]; }
# acquired_so_far OUT: the long run's clients have been granted the lock
ms_now() { date +%s%3N; }

interrupt_case() {
    local label=$1 how=$2
    local out=$WORK/results-$label
    setsid "$LOCKLAB" run "$D/quick.yaml" "$D/long.yaml" --out "$out" --quiet &
    local pid=$!
    wait_for "$label: first scenario written" 30 summary_exists "$out"
    # 8 clients of the long scenario plus its lock store
    wait_for "$label: long scenario's clients running" 30 clients_running "$pid" 9
    sleep 1 # let the long scenario measure something before the interrupt
    local t0
    t0=$(ms_now)
    case $how in
    group) kill -INT -- "-$pid" ;;
    twice) kill -INT -- "-$pid"; sleep 0.05; kill -INT -- "-$pid" ;;
    *) kill -TERM "$pid" ;;
    esac
    wait "$pid"
    local rc=$? t1
    t1=$(ms_now)
    expect_eq "$label: exit code" "$rc" 130
    if [ $((t1 - t0)) -le 2000 ]; then pass "$label: exited in $((t1 - t0)) ms"; else fail "$label: took $((t1 - t0)) ms to exit"; fi
    local S=$out/latest/summary.json
    check "$label: summary.json written" test -f "$S"
    expect_eq "$label: run marked incomplete" "$(jget "$S" complete)" false
    expect_eq "$label: both scenarios reported" "$(jget "$S" results)" 2
    expect_eq "$label: finished scenario is complete" "$(jget "$S" results.impl=none.complete)" true
    expect_eq "$label: finished scenario's verdict kept" "$(jget "$S" results.impl=none.verdict)" violation
    expect_eq "$label: interrupted scenario marked incomplete" "$(jget "$S" results.impl=redis-lua.complete)" false
    expect_gt "$label: interrupted scenario kept its measurements" "$(jget "$S" results.impl=redis-lua.ops.acquired)" 0
    expect_eq "$label: interrupted scenario still safe" "$(jget "$S" results.impl=redis-lua.safety.violations)" 0
    expect_eq "$label: clients stopped by the interrupt are not crashes" "$(jget "$S" results.impl=redis-lua.clients_status.crashed)" 0
    check "$label: no temporary file in results" test -z "$(find "$out" -name '*.tmp')"
    expect_no_orphans "$label"
    expect_no_temp_dirs "$label"
}

interrupt_case ctrl-c group
interrupt_case sigterm parent
# a second Ctrl-C kills everything at once, and still cleans up and reports
interrupt_case ctrl-c-twice twice
finish
