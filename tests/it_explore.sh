# it_explore.sh - `locklab explore` finds a break nobody scripted, shrinks
# it, and writes a repro file that breaks again under `locklab run`.
#
# redis-set-del under a 150 ms TTL with pauses of its holder drawn from
# [400ms, 700ms]: every pause outlives the TTL, so a second client gets in
# while the paused one still holds (and its late DEL takes the second's
# lock), a violation the file's expect: safe does not allow, whatever the
# shrinking keeps (a range reaching down to the TTL would let a one-run
# shrink drift to a pause that breaks it one time in three). The budget
# (15 s) bounds the shrinking; the repro's rate is measured over 3 runs. Then a
# bad explore: section and a file with a faults: list of its own are
# refused with file:line:column, exit 2, and `locklab run` refuses an
# explore file. About 30 s.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/explore.yaml" <<'YAML'
name: explore-pause
impls: [redis-set-del]
clients: 2
run: {max_duration: 1200ms, ops_per_client: 100}
lock: {key: xp-lock, ttl: 150ms, wait: 100ms, retry_interval: 5ms}
workload: {kind: counter, business: 10ms}
explore:
  actions: [pause]
  targets: [holder]
  at: [100ms, 500ms]
  duration: [400ms, 700ms]
  faults: [1, 2]
expect: {"*": safe}
YAML

OUT=$("$LOCKLAB" explore "$D/explore.yaml" --seed 11 --trials 4 --budget 15s -k 1 -n 3 \
      --out "$WORK/results" 2>&1)
RC=$?
echo "$OUT"
expect_eq "explore: exit code (a design broke)" "$RC" 1
RUN=$(ls -d "$WORK"/results/*-explore-explore-pause 2>/dev/null | head -1)
check "explore: the run folder" test -d "$RUN"
check "explore: a progress line per trial names the seed's schedule" \
    grep -q 'trial 1/4 *redis-set-del *pause holder@' <<<"$OUT"
check "explore: the break is found" grep -q 'BREAKS: expected safe' <<<"$OUT"
check "explore: ... in a trial that put the lock at stake" \
    grep -q 'violation, at stake  BREAKS: expected safe' <<<"$OUT"
R=$RUN/repro-redis-set-del.yaml
check "explore: repro-redis-set-del.yaml written" test -s "$R"
check "explore: its header has the seed and the trial" grep -q '^# from: .*seed 11, trial' "$R"
check "explore: ... and the reproduction rate (2 or 3 of 3)" grep -q '^# reproduced: [23] of 3 runs' "$R"
entries=$(grep -c '^  - {' "$R")
in_range "explore: the shrunk schedule's entries" "$entries" 1 2
check "explore: the report lists the trials" grep -q '^| 1 | redis-set-del | pause holder@' \
    "$RUN/report.txt"
check "explore: the report says what broke" grep -q 'redis-set-del: broke in trial' \
    "$RUN/report.txt"

# the same seed draws the same first schedule
OUT2=$("$LOCKLAB" explore "$D/explore.yaml" --seed 11 --trials 1 -k 1 -n 1 \
       --out "$WORK/results2" 2>&1)
first() { sed -n 's/^trial 1\/[0-9]* *redis-set-del *\(.*[^ ]\)  [a-z-]*, \(not \)\{0,1\}at stake .*/\1/p' \
          <<<"$1" | head -1; }
check "explore: the first trial's schedule is read ($(first "$OUT"))" test -n "$(first "$OUT")"
expect_eq "explore: seed 11 draws the same first schedule" "$(first "$OUT2" | sed 's|1/1|1/4|')" \
    "$(first "$OUT")"

# the repro breaks again under locklab run: its expectation is what broke
"$LOCKLAB" run "$R" --out "$WORK/rerun" --quiet --no-plot >/dev/null 2>&1
expect_eq "run repro: exit code (it breaks again, as its expectation says)" "$?" 0
S=$WORK/rerun/latest/summary.json
expect_eq "run repro: verdict" "$(jget "$S" "results.impl=redis-set-del.verdict")" violation

# bad input: exit 2 with file:line:column, nothing started
sed 's/actions: \[pause\]/actions: [pause, frobnicate]/' "$D/explore.yaml" > "$D/bad.yaml"
ERR=$("$LOCKLAB" explore "$D/bad.yaml" --out "$WORK/bad" 2>&1)
expect_eq "bad action: exit code" "$?" 2
check "bad action: file:line:column" grep -q "bad.yaml:8:20: explore.actions: unknown action 'frobnicate'" <<<"$ERR"
{ cat "$D/explore.yaml"; echo 'faults: []'; } > "$D/own.yaml"
ERR=$("$LOCKLAB" explore "$D/own.yaml" --out "$WORK/bad" 2>&1)
expect_eq "own faults: exit code" "$?" 2
check "own faults: file:line:column" grep -q "own.yaml:14:1: an explore file has no faults:" <<<"$ERR"
ERR=$("$LOCKLAB" run "$D/explore.yaml" --out "$WORK/bad" 2>&1)
expect_eq "run on an explore file: exit code" "$?" 2
check "run on an explore file: says so" grep -q "explore.yaml:8:3: an explore file: run it with \`locklab explore\`" <<<"$ERR"
check "nothing started for bad input" test ! -e "$WORK/bad"
finish
