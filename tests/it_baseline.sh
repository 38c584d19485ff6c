# it_baseline.sh - regression checks against a baseline (locklab baseline
# save / compare / run --baseline). The project's own smoke run
# (tests/baseline/smoke.yaml, 30 rounds, the reference redis-set-del run
# before and after every other design in every round) must match the
# committed baseline (tests/baseline/smoke.json): this is the gate that
# fails the project's build when a change slows a design against its
# reference, or changes a verdict. Then the gate must catch what it is
# for: a 2x slower acquire path and a 2x slower release path of redis-lua
# (the test-only LOCKLAB_TEST_SLOW switches, impls/test_slow.h) each fail
# on throughput, not only on latency, and nothing else moves; a changed verdict; a step that disappeared; a
# bad baseline file or switch is a usage error before anything starts.
# What the gate catches at the smallest is measured by scripts/measure-gate
# (docs/benchmarks.md).
. "$(dirname "$0")/lib.sh"

SMOKE=$SRC/tests/baseline/smoke.yaml
BASE=$SRC/tests/baseline/smoke.json

ROUNDS=30
# One CPU for locklab, its client and the Redis server it starts: a client
# and a server on different cores pay a cross-core wake-up per round trip
# that varies run to run (the reference measured 5,500 to 16,700 cycles/s
# in one 30-round run, its ratios 0.4 to 2.1); on one CPU the round trip is
# a plain context switch and the per-round ratios stay within a few percent.
PIN="taskset -c $(taskset -pc $$ | sed 's/.*: //; s/[-,].*//')"
$PIN "$LOCKLAB" run "$SMOKE" --rounds $ROUNDS --out "$WORK/r" --quiet --no-plot --baseline "$BASE" \
    > "$WORK/gate.txt"
rc=$?
cat "$WORK/gate.txt"
expect_eq "gate: the smoke run matches the committed baseline" "$rc" 0
expect_eq "gate: no figure regressed" "$(grep -c REGRESSED "$WORK/gate.txt")" 0
R=$WORK/r/latest
# per round: ref, redis-lua, ref, redis-get-del, ref, redisson, ref
expect_eq "gate: every round kept, the reference 4 times in each" \
    "$(jget "$R/summary.json" results)" $((ROUNDS * 7))
expect_eq "interleaved: round 1 starts with the reference" "$(jget "$R/summary.json" results.0.impl)" redis-set-del
expect_eq "interleaved: then redis-lua" "$(jget "$R/summary.json" results.1.impl)" redis-lua
expect_eq "interleaved: the reference again" "$(jget "$R/summary.json" results.2.impl)" redis-set-del
expect_eq "interleaved: its second run this round" "$(jget "$R/summary.json" results.2.repeat)" 2
expect_eq "interleaved: the last run of round 1 is the reference's 4th" \
    "$(jget "$R/summary.json" results.6.impl)/$(jget "$R/summary.json" results.6.repeat)" redis-set-del/4
expect_eq "interleaved: round 2 starts with the reference" "$(jget "$R/summary.json" results.7.round)/$(jget "$R/summary.json" results.7.impl)" 2/redis-set-del
check "interleaved: each reference run keeps its own files" \
    test -s "$R/redis-set-del/smoke-ref2.acquire.hgrm" -a -s "$R/redis-set-del/smoke-r2-ref4.acquire.hgrm"
check "gate: baseline-junit.xml written" test -s "$R/baseline-junit.xml"
check "gate: report.html shows the gate's comparison" grep -q "Baseline gate (--baseline)" "$R/report.html"
expect_eq "... with no regression marked" "$(grep -c 'class="bad">.*REGRESSED' "$R/report.html")" 0
expect_eq "gate: one JUnit testcase per compared figure" \
    "$(grep -c '<testcase' "$R/baseline-junit.xml")" \
    "$(sed -n 's/^\([0-9]*\) figures compared.*/\1/p' "$WORK/gate.txt")"

# a 2x slower acquire path (its round trip twice) and a 2x slower release
# path (its script twice) in redis-lua: each fails the gate on throughput.
# Only the reference and redis-lua run (the others' steps are then missing,
# which the comparison says, and which is all it may say of them).
for path in acquire release; do
    LOCKLAB_TEST_SLOW=redis-lua:$path $PIN "$LOCKLAB" run "$SMOKE" --impl redis-set-del,redis-lua \
        --rounds $ROUNDS --out "$WORK/s-$path" --quiet --no-plot --baseline "$BASE" \
        > "$WORK/slow-$path.txt"
    rc=$?
    grep redis-lua "$WORK/slow-$path.txt"
    expect_eq "2x slower $path: exit 1" "$rc" 1
    expect_eq "2x slower $path: redis-lua's throughput regressed" \
        "$(grep -c 'smoke redis-lua 1 per-client off  *throughput .*REGRESSED' "$WORK/slow-$path.txt")" 1
    expect_eq "2x slower $path: the reference kept its verdict" \
        "$(grep -c 'smoke redis-set-del 1 per-client off  *verdict .* ok$' "$WORK/slow-$path.txt")" 1
    expect_eq "2x slower $path: nothing else regressed but the steps left out" \
        "$(grep 'REGRESSED' "$WORK/slow-$path.txt" | grep -v 'redis-lua' | grep -vc 'REGRESSED (missing)')" 0
    check "2x slower $path: report.html marks redis-lua's throughput regressed" \
        grep -q 'class="bad">smoke redis-lua 1 per-client off  *throughput .*REGRESSED' \
        "$WORK/s-$path/latest/report.html"
done
expect_eq "2x slower acquire: its acquire p50 regressed too" \
    "$(grep -c 'smoke redis-lua 1 per-client off  *acquire_p50 .*REGRESSED' "$WORK/slow-acquire.txt")" 1

# a baseline saved over several runs: one figure over all their rounds
"$LOCKLAB" baseline save "$R" "$WORK/s-acquire/latest" "$WORK/two.json" --reference redis-set-del \
    > /dev/null
expect_eq "save over two runs: exit 0" "$?" 0
expect_eq "save over two runs: both run ids kept" \
    "$(jget "$WORK/two.json" run_id | tr ',' '\n' | grep -c .)" 2
"$LOCKLAB" baseline save "$R" "$WORK/one.json" --reference redis-set-del > /dev/null
"$LOCKLAB" baseline save "$WORK/s-acquire/latest" "$WORK/slow.json" --reference redis-set-del > /dev/null
lua=results.impl=redis-lua.throughput
expect_eq "save over two runs: redis-lua's throughput between the two runs' own" \
    "$(awk -v a="$(jget "$WORK/one.json" $lua)" -v b="$(jget "$WORK/slow.json" $lua)" \
        -v m="$(jget "$WORK/two.json" $lua)" 'BEGIN { print (m <= a && m >= b && a > b) }')" 1

# the switch is test-only and checked before anything starts
LOCKLAB_TEST_SLOW=redis-lua "$LOCKLAB" run "$SMOKE" --out "$WORK/t" --quiet --no-plot 2> "$WORK/t.txt"
expect_eq "bad LOCKLAB_TEST_SLOW: exit 2" "$?" 2
expect_eq "bad LOCKLAB_TEST_SLOW: said why" "$(grep -c 'LOCKLAB_TEST_SLOW.*test-only' "$WORK/t.txt")" 1
check "bad LOCKLAB_TEST_SLOW: no run started" test ! -e "$WORK/t"

# a verdict that changed (the baseline says violation where the run is safe)
sed '0,/"verdict": "safe"/s//"verdict": "violation"/' "$BASE" > "$WORK/verdict.json"
"$LOCKLAB" compare "$WORK/verdict.json" "$R" --junit "$WORK/v.xml" > "$WORK/v.txt"
expect_eq "verdict changed: exit 1" "$?" 1
expect_eq "verdict changed: the verdict line regressed" \
    "$(grep -c 'verdict  *violation  *safe .*REGRESSED' "$WORK/v.txt")" 1
expect_eq "verdict changed: one JUnit failure" "$(grep -c '<failure' "$WORK/v.xml")" 1

# a step the run no longer has
sed '0,/"clients": 1,/s//"clients": 8,/' "$BASE" > "$WORK/missing.json"
"$LOCKLAB" compare "$WORK/missing.json" "$R" > "$WORK/m.txt"
expect_eq "missing step: exit 1" "$?" 1
expect_gt "missing step: said" "$(grep -c 'REGRESSED (missing)' "$WORK/m.txt")" 0

# bad input: exit 2, nothing started
echo '{"not": "a baseline"}' > "$WORK/bad.json"
"$LOCKLAB" run "$SMOKE" --out "$WORK/b" --quiet --no-plot --baseline "$WORK/bad.json" 2> "$WORK/bad.txt"
expect_eq "bad baseline: exit 2" "$?" 2
expect_eq "bad baseline: said why" "$(grep -c 'not a locklab baseline' "$WORK/bad.txt")" 1
check "bad baseline: no run started" test ! -e "$WORK/b"
"$LOCKLAB" run "$SMOKE" --reference zk-sequential --out "$WORK/z" --quiet --no-plot 2> "$WORK/z.txt"
expect_eq "a reference no scenario runs: exit 2" "$?" 2
expect_eq "a reference no scenario runs: said why" "$(grep -c "reference design 'zk-sequential' is in no scenario" "$WORK/z.txt")" 1
check "a reference no scenario runs: no run started" test ! -e "$WORK/z"
"$LOCKLAB" baseline save "$R" "$WORK/x.json" --reference zk-sequential 2> "$WORK/ref.txt"
expect_eq "save without the reference's results: exit 2" "$?" 2
expect_eq "save: said why" "$(grep -c 'reference design has no result' "$WORK/ref.txt")" 1
expect_no_orphans "after the baseline runs"
finish
