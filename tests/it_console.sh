# it_console.sh - what a person at a terminal reads: the closing line, the
# progress on a terminal, `locklab list` and `run --help`.
#
# The closing line (`N expectations met, M unmet; exit C: ...`) counts
# what report.html's summary counts and names the real exit code, met and
# unmet alike. The CPU figures of the table are report.html's, to the
# hundredth. On a terminal (util-linux `script` gives the run one) stderr
# says scenario i of n, step j of m with the design, elapsed / planned, an
# ETA, and each fault as it fires and ends; without a terminal nothing of
# it, unless LOCKLAB_PROGRESS=1. `locklab list` aligns its columns, wraps
# long capability lists, shows the scenarios by path from here (or from
# their install directory) with their planned duration; `run --help` puts
# every option's help in one column. About 20 s, embedded Redis only.
. "$(dirname "$0")/lib.sh"

cat > "$WORK/pause.yaml" <<'EOF'
name: console-pause
impls: [redis-lua]
clients: 3
run: {max_duration: 2500ms}
lock: {key: k, ttl: 300ms, wait: 1s, retry_interval: 5ms}
workload: {kind: stock, stock: 100000, business: 20ms, fencing: [false, true]}
faults:
  - {at: 1200ms, action: pause, target: holder, duration: 600ms}
expect:
  "*": {unfenced: violation, fenced: fenced}
EOF
# an expectation that fails: none is no lock
cat > "$WORK/unmet.yaml" <<'EOF'
name: console-unmet
impls: [none, redis-lua]
clients: 4
run: {ops_per_client: 30, max_duration: 10s}
lock: {key: k, ttl: 10s, wait: 5s, retry_interval: 2ms}
workload: {kind: stock, stock: 50, business: 1ms}
expect: {"*": safe}
EOF

# 1. On a terminal: the progress line and the faults.
if command -v script >/dev/null; then
    script -q -e -c "'$LOCKLAB' run '$WORK/pause.yaml' --out '$WORK/r1' --no-plot" \
        "$WORK/tty.txt" >/dev/null 2>&1
    expect_eq "terminal: exit code" "$?" 0
    T=$(tr '\r' '\n' < "$WORK/tty.txt" | sed 's/\x1b\[K//g') # the line, rewritten in place
    check "terminal: step 1 of 2, the design, elapsed / planned, an ETA" \
        grep -qE 'scenario 1/1, step 1/2: redis-lua +[0-9.]+s / 2\.5s +[0-9]+ acquired +ETA [0-9.]+s' <<<"$T"
    check "terminal: step 2 of 2 is the fenced one" grep -qE 'scenario 1/1, step 2/2: redis-lua \+fence ' <<<"$T"
    check "terminal: the pause as it fires, on whom" \
        grep -qE '^  fault 1 \(pause holder\): fired at 1\.[0-9]+s on client [0-9] \(pid [0-9]+\)' <<<"$T"
    check "terminal: the pause as it ends, how long it lasted" \
        grep -qE '^  fault 1 \(pause holder\): ended at 1\.[0-9]+s \(lasted 0\.6[0-9]s\)' <<<"$T"
    expect_eq "terminal: the fault fired and ended once per step" \
        "$(grep -cE '^  fault 1 \(pause holder\): (fired|ended)' <<<"$T")" 4
    check "terminal: the closing line" grep -q '^2 expectations met, 0 unmet; exit 0: every expectation met' <<<"$T"
    check "terminal: the page to open comes last" \
        grep -qE '^report: +.*/report\.html$' <<<"$(grep -v '^Script ' <<<"$T" | grep . | tail -1)"
else
    echo "skip - util-linux script is not installed: the terminal checks use LOCKLAB_PROGRESS=1 only"
fi

# 2. No terminal: no progress; LOCKLAB_PROGRESS=1 forces it.
"$LOCKLAB" run "$WORK/pause.yaml" --out "$WORK/r2" --no-plot >"$WORK/out2" 2>"$WORK/err2"
expect_eq "no terminal: exit code" "$?" 0
expect_eq "no terminal: no progress line" "$(grep -c 'step 1/2' "$WORK/err2")" 0
expect_eq "no terminal: no fault lines" "$(grep -c '^  fault 1' "$WORK/err2")" 0
LOCKLAB_PROGRESS=1 "$LOCKLAB" run "$WORK/pause.yaml" --out "$WORK/r3" --no-plot >/dev/null 2>"$WORK/err3"
check "LOCKLAB_PROGRESS=1: the progress line without a terminal" grep -q 'scenario 1/1, step 2/2' "$WORK/err3"
check "LOCKLAB_PROGRESS=1: the fault lines" grep -q 'fault 1 (pause holder): fired' "$WORK/err3"
"$LOCKLAB" run "$WORK/pause.yaml" --out "$WORK/r4" --no-plot --quiet >"$WORK/out4" 2>&1
expect_eq "--quiet: nothing at all when every expectation is met" "$(wc -c < "$WORK/out4")" 0

# 3. The closing line counts as report.html does, and the CPU figures match it.
check "closing line: met" grep -qx '2 expectations met, 0 unmet; exit 0: every expectation met' "$WORK/out2"
H=$WORK/r2/latest/report.html
check "report.html: the same count" grep -q '2 of 2 expectations met' "$H"
S=$WORK/r2/latest/summary.json
for f in off on; do
    cpu=$(printf '%.2f/%.2f' "$(jget "$S" "results.fencing=$f.cpu.clients_cores")" \
          "$(jget "$S" "results.fencing=$f.cpu.servers_cores")")
    label=redis-lua; [ $f = on ] && label="redis-lua +fence"
    expect_eq "table: CPU of the $f step as report.html gives it" \
        "$(grep "^$label  " "$WORK/out2" | awk '{ print $NF }' | tr -d '!')" "$cpu"
    check "report.html: that figure" grep -q "<td>${cpu/\// \/ }" "$H"
done
"$LOCKLAB" run "$WORK/unmet.yaml" --out "$WORK/r5" --no-plot >"$WORK/out5" 2>/dev/null
expect_eq "unmet: exit code" "$?" 1
check "closing line: unmet, and what exit 1 means" \
    grep -qx '1 expectation met, 1 unmet; exit 1: an expectation failed, or the baseline gate found a regression' "$WORK/out5"
check "report.html: the same count" grep -q '1 of 2 expectations met' "$WORK/r5/latest/report.html"
"$LOCKLAB" run "$WORK/unmet.yaml" --out "$WORK/r6" --no-plot --quiet >"$WORK/out6" 2>"$WORK/err6"
check "--quiet: the closing line on stderr when one is unmet" grep -q '^1 expectation met, 1 unmet; exit 1' "$WORK/err6"

# 4. locklab list: aligned, wrapped, relative paths with durations.
(cd "$SRC" && "$LOCKLAB" list 2>/dev/null) > "$WORK/list"
cap_col=$(head -1 "$WORK/list" | awk '{ print index($0, "capabilities") }')
sum_col=$(head -1 "$WORK/list" | awk '{ print index($0, "summary") }')
bad=$(awk -v c="$cap_col" -v s="$sum_col" '
    /^scenarios/ { exit } NR > 1 && /^[a-z]/ {
        if (substr($0, c - 1, 1) != " " || substr($0, c, 1) == " " || substr($0, s - 1, 1) != " ")
            print $1 }' "$WORK/list")
expect_eq "list: every design's capabilities and summary in their columns" "${bad:-none}" none
check "list: a long capability list wraps under its column" \
    grep -qE "^ {$((cap_col - 1))}[a-z-]+(,[a-z-]+)*,?\$" "$WORK/list"
expect_eq "list: no wrapped capabilities wider than their column" \
    "$(awk -v c="$cap_col" -v s="$sum_col" '/^scenarios/ { exit }
        substr($0, 1, c - 1) ~ /^ +$/ && substr($0, c, 1) ~ /[a-z]/ && length($0) > s - 2 { n++ }
        END { print n + 0 }' "$WORK/list")" 0
check "list: scenarios by path from here, with the planned duration" \
    grep -qE '^  scenarios/gc-pause\.yaml +[0-9]+m[0-9]+s +a holder frozen' "$WORK/list"
check "list: an ops-bounded scenario's duration is a bound" grep -qE '^  scenarios/oversell\.yaml +<= ' "$WORK/list"
check "list: the demo's scenarios" grep -qE '^  scenarios/demo/2-gc-pause\.yaml +10\.0s ' "$WORK/list"
expect_eq "list: every shipped scenario loads" "$(grep -c '(invalid' "$WORK/list")" 0
path_col=$(grep -m1 '^  path ' "$WORK/list" | awk '{ print index($0, "duration") }')
expect_eq "list: the scenarios' durations in one column" \
    "$(awk -v c="$path_col" 'f && substr($0, c - 1, 1) != " " { n++ } /^  path / { f = 1 } END { print n + 0 }' "$WORK/list")" 0
(cd "$WORK" && "$LOCKLAB" list 2>/dev/null) > "$WORK/list2"
check "list: elsewhere, the scenarios by path from their directory" \
    grep -qE "^scenarios \(paths from $(realpath "$SRC")" "$WORK/list2"
check "list: ... and relative to it" grep -qE '^  scenarios/gc-pause\.yaml ' "$WORK/list2"

# 5. run --help: every option's help starts in one column.
cols=$("$LOCKLAB" run --help | awk '/^  --[a-z]/ { match($0, /^  --[^ ]+( [^ ]+)? +/); print RLENGTH }' | sort -u)
expect_eq "run --help: the options' help in one column" "$cols" 21
check "--help mentions --version" grep -q -- '--version' <<<"$("$LOCKLAB" --help)"

expect_no_orphans "after the console runs"
finish
