# it_fault_scenarios.sh - the shipped fault scenarios meet their
# expectations on real servers: gc-pause (every design loses the lock to a
# frozen holder) and crash-holder (TTL designs recover after about the TTL,
# the ZooKeeper designs after about the session timeout, SETNX killed before
# EXPIRE blocks the lock).
. "$(dirname "$0")/lib.sh"

run_ok "gc-pause" "$SRC/scenarios/gc-pause.yaml"
for impl in redis-lua redis-watchdog redisson redlock zk-sequential; do
    r=results.impl=$impl
    expect_eq "gc-pause $impl: verdict" "$(jget "$S" $r.verdict)" violation
    expect_eq "gc-pause $impl: four pauses landed" \
        "$(jget "$S" "$r.faults.outcome=done.action")" pause
    expect_gt "gc-pause $impl: the overlap is counted" "$(jget "$S" $r.safety.violations)" 0
done

run_ok "crash-holder" "$SRC/scenarios/crash-holder.yaml"
for impl in redis-lua redis-watchdog redisson; do
    r=results.impl=$impl
    expect_safe "crash-holder $impl" $r
    in_range "crash-holder $impl: recovery about the 1 s TTL" "$(jget "$S" $r.recovery_ms)" 900 1400
done
for impl in zk-ephemeral zk-sequential; do
    r=results.impl=$impl
    expect_safe "crash-holder $impl" $r
    in_range "crash-holder $impl: recovery about the 1.5 s session timeout" \
        "$(jget "$S" $r.recovery_ms)" 1300 2600
done
expect_eq "crash-holder redis-setnx-expire: verdict" \
    "$(jget "$S" results.impl=redis-setnx-expire.verdict)" blocked
expect_no_orphans "after the fault scenarios"
finish
