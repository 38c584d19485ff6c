# it_ci_recipe.sh - docs/ci.md's recipe for users' CI works as written: the
# example scenarios under docs/ci/ (a team's own Lua scripts as
# redis-script) meet their expectations with exit 0, a JUnit file with a
# testcase per result and the HTML report; a changed verdict (the same
# file expecting safe under the pause) exits 1 and the JUnit file says
# which testcase failed.
. "$(dirname "$0")/lib.sh"

"$LOCKLAB" run "$SRC/docs/ci/my-lock.yaml" "$SRC/docs/ci/my-lock-pause.yaml" \
    --out "$WORK/results" --junit "$WORK/junit.xml" --quiet --no-plot
expect_eq "recipe: exit code when every expectation holds" "$?" 0
S=$WORK/results/latest/summary.json
expect_eq "recipe: the team's scripts are safe without faults" \
    "$(jget "$S" results.scenario=my-lock,impl=redis-script.verdict)" safe
expect_eq "recipe: and break under a pause past their TTL, as expected" \
    "$(jget "$S" results.scenario=my-lock-pause,impl=redis-script.verdict)" violation
expect_eq "recipe: a JUnit testcase per result" "$(grep -c '<testcase' "$WORK/junit.xml")" 3
expect_eq "recipe: no failure in the JUnit file" "$(grep -c '<failure' "$WORK/junit.xml")" 0
check "recipe: report.html kept for the artifacts" test -s "$WORK/results/latest/report.html"

# a verdict that changed: the pause file expecting safe
sed 's/expect: {redis-script: violation}/expect: {redis-script: safe}/' \
    "$SRC/docs/ci/my-lock-pause.yaml" > "$WORK/changed.yaml"
"$LOCKLAB" run "$WORK/changed.yaml" --out "$WORK/results2" --junit "$WORK/junit2.xml" \
    --quiet --no-plot
expect_eq "recipe: exit code when a verdict is not the expected one" "$?" 1
expect_eq "recipe: the JUnit file names the failed testcase" "$(grep -c '<failure' "$WORK/junit2.xml")" 1
expect_no_orphans "after the recipe"
finish
