# it_oversell.sh - the shipped oversell scenario on a real redis-server that
# locklab starts itself: the designs known to break must be caught, the one
# known to hold must sell exactly the stock, and the results directory must
# carry every field docs/results.md promises for a result.
. "$(dirname "$0")/lib.sh"

OUT=$WORK/results
"$LOCKLAB" run "$SRC/scenarios/oversell.yaml" --out "$OUT" --quiet --junit "$WORK/junit-copy.xml"
rc=$?
expect_eq "oversell exits 0 (every expectation met)" "$rc" 0
S=$OUT/latest/summary.json
check "results/latest points at a run with summary.json" test -f "$S"
expect_eq "run is complete" "$(jget "$S" complete)" true

# known to break: no lock, and a lock local to each process
for impl in none local-mutex; do
    r="results.impl=$impl"
    expect_violation "$impl" "$r"
    expect_gt "$impl: more than one holder at once" "$(jget "$S" "$r.safety.max_concurrent_holders")" 1
    expect_gt "$impl: oversold" "$(jget "$S" "$r.safety.oversold")" 0
    expect_gt "$impl: lost updates" "$(jget "$S" "$r.safety.lost_updates")" 0
done

# known to hold
r="results.impl=redis-lua"
expect_safe "redis-lua" "$r"
expect_eq "redis-lua: one holder at most" "$(jget "$S" "$r.safety.max_concurrent_holders")" 1
expect_eq "redis-lua: stock ends at exactly 0" "$(jget "$S" "$r.workload.final_value")" 0
expect_eq "redis-lua: exactly 100 sold" "$(jget "$S" "$r.workload.units_done")" 100
expect_eq "redis-lua: nothing oversold" "$(jget "$S" "$r.safety.oversold")" 0
expect_eq "redis-lua: no lost update" "$(jget "$S" "$r.safety.lost_updates")" 0
expect_gt "redis-lua: handoffs measured" "$(jget "$S" "$r.latency_us.handoff.count")" 0
expect_gt "redis-lua: server operations per acquire counted" "$(jget "$S" "$r.server_ops_per_acquire")" 1

# the MariaDB designs: the three locks and the optimistic version column
for impl in mysql-unique mysql-for-update mysql-get-lock mysql-optimistic; do
    r="results.impl=$impl"
    [ $impl = mysql-optimistic ] || expect_safe "$impl" "$r"
    expect_eq "$impl: stock ends at exactly 0" "$(jget "$S" "$r.workload.final_value")" 0
    expect_eq "$impl: exactly 100 sold" "$(jget "$S" "$r.workload.units_done")" 100
    expect_eq "$impl: no lost update" "$(jget "$S" "$r.safety.lost_updates")" 0
done
# not a lock: buyers overlap by design, and the version check keeps it safe
r="results.impl=mysql-optimistic"
expect_eq "mysql-optimistic: verdict" "$(jget "$S" "$r.verdict")" safe
expect_gt "mysql-optimistic: buyers overlapped" "$(jget "$S" "$r.safety.max_concurrent_holders")" 1
expect_gt "mysql-optimistic: conflicts retried" "$(jget "$S" "$r.optimistic.conflicts")" 0

# every field of the results contract, for every result
for key in run_id started_at host scenario complete results; do
    check "summary has $key" test "$(jget "$S" "$key")" != "<missing>"
done
n=$(jget "$S" results)
# as many as the scenario lists ("  - name" lines under impls:)
listed=$(awk '/^impls:/ { on = 1; next } on && /^  - / { c++; next } { on = 0 } END { print c }' \
    "$SRC/scenarios/oversell.yaml")
expect_gt "the scenario lists implementations" "$listed" 14
expect_eq "one result per implementation" "$n" "$listed"
fields="impl backend clients verdict expect pass elapsed_s throughput_per_s
ops.acquired ops.timeouts ops.errors ops.released ops.release_not_owner
safety.violations safety.max_concurrent_holders safety.overlap_us safety.oversold
safety.lost_updates safety.stale_writes_rejected wakeups_per_release server_ops_per_acquire"
for h in acquire hold release handoff; do
    for p in count min mean p50 p90 p99 p999 max; do fields="$fields latency_us.$h.$p"; done
done
missing=""
for i in $(seq 0 $((n - 1))); do
    for f in $fields; do
        [ "$(jget "$S" "results.$i.$f")" = "<missing>" ] && missing="$missing results.$i.$f"
    done
done
expect_eq "every docs/results.md field present in every result" "${missing:-none}" none

run=$(readlink "$OUT/latest")
for impl in none redis-lua; do
    for h in acquire hold release handoff; do
        check "$impl/oversell.$h.hgrm written" test -s "$OUT/$run/$impl/oversell.$h.hgrm"
    done
done
check "hgrm has HdrHistogram's header" grep -q "Value     Percentile TotalCount 1/(1-Percentile)" "$OUT/$run/redis-lua/oversell.acquire.hgrm"
check "junit.xml has one test case per implementation" test "$(grep -c '<testcase' "$OUT/$run/junit.xml")" -eq "$listed"
check "--junit copy written" cmp -s "$OUT/$run/junit.xml" "$WORK/junit-copy.xml"
check "no temporary file left in the run directory" test -z "$(find "$OUT" -name '*.tmp')"
expect_no_orphans "after oversell"
expect_no_temp_dirs "after oversell"
finish
