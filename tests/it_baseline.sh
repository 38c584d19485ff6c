# it_baseline.sh - regression checks against a baseline (locklab baseline
# save / compare / run --baseline). The project's own smoke run
# (tests/baseline/smoke.yaml, 5 rounds) must match the committed baseline
# (tests/baseline/smoke.json): this is the gate that fails the project's
# build when a change slows a design against its reference, or changes a
# verdict. Then the comparison must catch what it is for: a real slowdown
# (one extra round trip per acquire in redis-lua, behind the test-only
# LOCKLAB_TEST_SLOW switch), a changed verdict, a step that disappeared;
# and a bad baseline file is a usage error before anything starts.
. "$(dirname "$0")/lib.sh"

SMOKE=$SRC/tests/baseline/smoke.yaml
BASE=$SRC/tests/baseline/smoke.json

"$LOCKLAB" run "$SMOKE" --rounds 5 --out "$WORK/r" --quiet --no-plot --baseline "$BASE" > "$WORK/gate.txt"
rc=$?
cat "$WORK/gate.txt"
expect_eq "gate: the smoke run matches the committed baseline" "$rc" 0
R=$WORK/r/latest
expect_eq "gate: every round kept" "$(jget "$R/summary.json" results)" 40
check "gate: baseline-junit.xml written" test -s "$R/baseline-junit.xml"
expect_eq "gate: one JUnit testcase per compared figure" \
    "$(grep -c '<testcase' "$R/baseline-junit.xml")" \
    "$(sed -n 's/^\([0-9]*\) figures compared.*/\1/p' "$WORK/gate.txt")"

# a verdict that changed (the baseline says violation where the run is safe)
sed '0,/"verdict": "safe"/s//"verdict": "violation"/' "$BASE" > "$WORK/verdict.json"
"$LOCKLAB" compare "$WORK/verdict.json" "$R" --junit "$WORK/v.xml" > "$WORK/v.txt"
expect_eq "verdict changed: exit 1" "$?" 1
expect_eq "verdict changed: the verdict line regressed" \
    "$(grep -c 'verdict  *violation  *safe .*REGRESSED' "$WORK/v.txt")" 1
expect_eq "verdict changed: one JUnit failure" "$(grep -c '<failure' "$WORK/v.xml")" 1

# a step the run no longer has
sed 's/"clients": 4,/"clients": 8,/' "$BASE" > "$WORK/missing.json"
"$LOCKLAB" compare "$WORK/missing.json" "$R" > "$WORK/m.txt"
expect_eq "missing step: exit 1" "$?" 1
expect_gt "missing step: said" "$(grep -c 'REGRESSED (missing)' "$WORK/m.txt")" 0

# a real slowdown: one more round trip per redis-lua acquire
LOCKLAB_TEST_SLOW=redis-lua "$LOCKLAB" run "$SMOKE" --rounds 3 --out "$WORK/s" --quiet --no-plot \
    --baseline "$BASE" > "$WORK/slow.txt"
rc=$?
grep redis-lua "$WORK/slow.txt"
expect_eq "slowdown: exit 1" "$rc" 1
expect_eq "slowdown: redis-lua's acquire p50 at 1 client regressed" \
    "$(grep -c 'smoke redis-lua 1 per-client off  *acquire_p50 .*REGRESSED' "$WORK/slow.txt")" 1
expect_eq "slowdown: its reference did not move" \
    "$(grep 'REGRESSED' "$WORK/slow.txt" | grep -vc 'redis-lua')" 0

# bad input: exit 2, nothing started
echo '{"not": "a baseline"}' > "$WORK/bad.json"
"$LOCKLAB" run "$SMOKE" --out "$WORK/b" --quiet --no-plot --baseline "$WORK/bad.json" 2> "$WORK/bad.txt"
expect_eq "bad baseline: exit 2" "$?" 2
expect_eq "bad baseline: said why" "$(grep -c 'not a locklab baseline' "$WORK/bad.txt")" 1
check "bad baseline: no run started" test ! -e "$WORK/b"
"$LOCKLAB" baseline save "$R" "$WORK/x.json" --reference zk-sequential 2> "$WORK/ref.txt"
expect_eq "save without the reference's results: exit 2" "$?" 2
expect_eq "save: said why" "$(grep -c 'reference design has no result' "$WORK/ref.txt")" 1
expect_no_orphans "after the baseline runs"
finish
