# it_plot.sh - `locklab plot` on a real run: a small counter scenario with
# three implementations, then the plot command on its results directory
# (one client count: no throughput-against-clients plot; a hold timeline
# per design).
# Every expected plot must exist as a real PNG (signature) and SVG (an <svg>
# element), the data files must name each implementation, --quiet must print
# nothing, and the error paths must give their exit codes: 2 for a missing
# directory or one without summary.json, 3 when gnuplot is not on PATH.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/plot-small.yaml" <<'YAML'
name: plot-small
description: three implementations on a small counter, for the plot test
impls: [none, redis-lua, redis-set-del]
clients: 4
run: {ops_per_client: 20, max_duration: 60s}
lock: {ttl: 10s, wait: 10s, retry_interval: 2ms}
workload: {kind: counter, business: 1ms}
expect: {"*": any}
YAML

OUT=$WORK/results
"$LOCKLAB" run "$D/plot-small.yaml" --out "$OUT" --quiet
expect_eq "run: exit code" "$?" 0
RUN=$OUT/latest

"$LOCKLAB" plot "$RUN" > "$WORK/plot.out" 2> "$WORK/plot.err"
rc=$?
expect_eq "plot: exit code" "$rc" 0
[ "$rc" -eq 0 ] || sed 's/^/    /' "$WORK/plot.err"

# A PNG starts with \x89 P N G \r \n \x1a \n.
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }

plots="latency wakeups none-holds redis-lua-holds redis-set-del-holds"
if ls "$RUN"/*/plot-small.timeline.tsv > /dev/null 2>&1; then
    plots="$plots timeline"
else
    check "no timeline files: plot says it skipped the timeline" \
        grep -q "no timeline plot" "$WORK/plot.err"
fi
for p in $plots; do
    png=$RUN/plot-small-$p.png
    svg=$RUN/plot-small-$p.svg
    check "$p: PNG written and non-empty" test -s "$png"
    check "$p: PNG has the PNG signature" is_png "$png"
    check "$p: SVG written and non-empty" test -s "$svg"
    check "$p: SVG has an <svg> element" grep -q "<svg" "$svg"
done
# one client count: nothing to compare along a clients axis, no such plot
check "one client count: no throughput plot" test ! -e "$RUN/plot-small-throughput.png"
check "one client count: plot says why" grep -q "no throughput-against-clients plot" "$WORK/plot.err"
check "hold timeline data: a lane row per section" \
    test "$(grep -c . "$RUN/plot-data/plot-small-none-holds.dat")" -eq \
         "$(grep -vc '^#' "$RUN/none/plot-small.holds.tsv")"
left=$(ls "$RUN" | grep '\.tmp$')
expect_eq "no .tmp files left in the run directory" "$left" ""
for impl in none redis-lua redis-set-del; do
    check "latency data names $impl" grep -q "^\"$impl\"" "$RUN/plot-data/plot-small-latency.dat"
done

"$LOCKLAB" plot --quiet "$RUN" > "$WORK/quiet.out" 2>&1
expect_eq "plot --quiet: exit code" "$?" 0
expect_eq "plot --quiet: prints nothing" "$(cat "$WORK/quiet.out")" ""

# Error paths.
"$LOCKLAB" plot "$WORK/no-such-run" 2> "$WORK/err1"
expect_eq "plot on a missing directory: exit code" "$?" 2
check "missing directory: message names it" grep -q "$WORK/no-such-run" "$WORK/err1"

mkdir -p "$WORK/not-a-run"
"$LOCKLAB" plot "$WORK/not-a-run" 2> "$WORK/err2"
expect_eq "plot on a directory without summary.json: exit code" "$?" 2
check "no summary.json: message names the path" grep -q "$WORK/not-a-run/summary.json" "$WORK/err2"

"$LOCKLAB" plot 2> /dev/null
expect_eq "plot without RUN_DIR: exit code" "$?" 2

mkdir -p "$WORK/empty-path"
PATH=$WORK/empty-path "$LOCKLAB" plot "$RUN" 2> "$WORK/err3"
expect_eq "plot without gnuplot on PATH: exit code" "$?" 3
check "no gnuplot: message says to install gnuplot-nox" grep -q "gnuplot-nox" "$WORK/err3"

expect_no_orphans "after the plot test"
finish
