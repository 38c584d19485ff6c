# it_fault_scenarios.sh - the shipped crash-holder scenario meets its
# expectations on real servers: TTL designs recover after about the TTL,
# the ZooKeeper designs after about the session timeout, GET_LOCK as soon
# as the server sees the socket close, SETNX killed before EXPIRE blocks
# the lock. (gc-pause: it_gc_pause.sh.)
. "$(dirname "$0")/lib.sh"

# crash-holder on a subset, for CI's time: it_postgres checks a killed
# holder on the PostgreSQL designs. The gc-pause scenario has its own test
# (it_gc_pause).
RZ_CRASH=redis-lua,redis-watchdog,redisson,zk-ephemeral,zk-sequential,redis-setnx-expire
RZ_CRASH=$RZ_CRASH,mysql-unique,mysql-get-lock
run_ok "crash-holder" "$SRC/scenarios/crash-holder.yaml" --impl $RZ_CRASH
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
r=results.impl=mysql-unique
expect_safe "crash-holder mysql-unique" $r
in_range "crash-holder mysql-unique: recovery about the 1 s lease" "$(jget "$S" $r.recovery_ms)" 900 1400
# the server ends a killed client's session (and its lock) at once
r=results.impl=mysql-get-lock
expect_safe "crash-holder mysql-get-lock" $r
in_range "crash-holder mysql-get-lock: recovery as the server sees the socket close" \
    "$(jget "$S" $r.recovery_ms)" 0 500
expect_eq "crash-holder redis-setnx-expire: verdict" \
    "$(jget "$S" results.impl=redis-setnx-expire.verdict)" blocked
expect_no_orphans "after the fault scenarios"
finish
