# it_arrival.sh - open-loop arrivals (arrival: in a scenario). Four
# redis-lua clients on one key hold it 5 ms each: about 190 acquires/s at
# most. Closed loop, a client asks again only when its last acquire came
# back, so the queue never grows past the four clients. Open loop at
# 2000/s, ten times that capacity, the schedule runs ahead: nearly every
# start is late and the acquire latency, counted from the intended start,
# grows with the backlog to most of the run (the queueing the closed loop
# hides). At 40/s, well under capacity, few starts are late and p99 stays
# near one critical section, far below the closed loop's contended p99.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/closed.yaml" <<'YAML'
name: closed
impls: [redis-lua]
clients: 4
run: {max_duration: 2s}
lock: {ttl: 10s, retry_interval: 1ms}
workload: {kind: counter, business: 5ms}
expect: {redis-lua: safe}
YAML
sed 's/^name: closed/name: over/' "$D/closed.yaml" > "$D/over.yaml"
echo 'arrival: {rate: 2000/s, distribution: poisson}' >> "$D/over.yaml"
sed 's/^name: closed/name: under/' "$D/closed.yaml" > "$D/under.yaml"
echo 'arrival: {rate: 40/s, distribution: constant}' >> "$D/under.yaml"
"$LOCKLAB" run "$D/closed.yaml" "$D/over.yaml" "$D/under.yaml" --out "$WORK/results" --no-plot \
    > "$WORK/out.txt" 2>&1
expect_eq "exit code" "$?" 0
S=$WORK/results/latest/summary.json
r=results.scenario=closed
closed_p99=$(jget "$S" $r.latency_us.acquire.p99)
expect_eq "closed loop: no schedule" "$(jget "$S" $r.arrival)" null
r=results.scenario=over
expect_eq "over capacity: safe" "$(jget "$S" $r.verdict)" safe
in_range "over capacity: the rate" "$(jget "$S" $r.arrival.rate_per_s)" 1999 2001
in_range "over capacity: nearly every start late" "$(jget "$S" $r.arrival.late_fraction)" 0.9 1
over_p99=$(jget "$S" $r.latency_us.acquire.p99)
expect_gt "over capacity: p99 shows the backlog (us)" "$over_p99" 500000
expect_gt "over capacity: p99 at least twice the closed loop's ($closed_p99 us)" "$over_p99" \
    "$(awk -v c="$closed_p99" 'BEGIN{print 2 * c}')"
r=results.scenario=under
expect_eq "under capacity: constant" "$(jget "$S" $r.arrival.distribution)" constant
in_range "under capacity: about 80 starts in 2 s" "$(jget "$S" $r.arrival.starts)" 70 81
in_range "under capacity: few late" "$(jget "$S" $r.arrival.late_fraction)" 0 0.2
in_range "under capacity: p99 near one critical section (us)" \
    "$(jget "$S" $r.latency_us.acquire.p99)" 1 50000
expect_eq "the console says how many starts were late" \
    "$(grep -c 'open loop at 2000/s (poisson): [0-9]* of [0-9]* starts late' "$WORK/out.txt")" 1
expect_eq "the report says it too" "$(grep -c 'open loop 2000/s, [0-9.]* % late' \
    "$(dirname "$S")/report.html")" 1
finish
