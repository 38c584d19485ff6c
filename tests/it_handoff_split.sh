# it_handoff_split.sh - where a redisson handoff's time goes: 16 clients on
# one hot key, each woken by the unlock message (a holder thinks 5 ms after
# its release, so the lock goes to a waiter). summary.json's
# handoff_split has the woken handoffs and their parts (delivery: release
# sent -> message at the waiter's socket; scheduling: -> the waiter's next
# attempt sent; the winning acquire: -> granted), every part positive;
# the parts add up to the handoffs' own
# time (their sum within a factor of 3 of the handoff p50, and within a
# factor of 2 of its mean; the parts' medians, each positive, within a
# factor of 3 of the p50); a release wakes several waiters, so woken
# waiters lose attempts. A design that is not notified (redis-lua) has no
# split.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/split.yaml" <<'YAML'
name: handoff-split
impls: [redisson, redis-lua]
clients: 16
run: {ops_per_client: 6, max_duration: 30s}
lock: {ttl: 10s, wait: 20s, retry_interval: 5ms}
workload: {kind: counter, business: 1ms, think: 5ms}
expect: {redisson: safe, redis-lua: safe}
YAML
"$LOCKLAB" run "$D/split.yaml" --out "$WORK/results" --no-plot > "$WORK/out.txt" 2>&1
expect_eq "exit code" "$?" 0
S=$WORK/results/latest/summary.json
R=results.impl=redisson
expect_gt "woken handoffs split" "$(jget "$S" $R.handoff_split.handoffs)" 20
expect_gt "delivery counted" "$(jget "$S" $R.handoff_split.delivery_us)" 0
expect_gt "scheduling counted" "$(jget "$S" $R.handoff_split.scheduling_us)" 0
expect_gt "winning acquire counted" "$(jget "$S" $R.handoff_split.acquire_us)" 0
expect_gt "woken waiters lose attempts" "$(jget "$S" $R.handoff_split.losing_attempts_per_handoff)" 1
total=$(jget "$S" $R.handoff_split.total_us)
p50=$(jget "$S" $R.latency_us.handoff.p50)
mean=$(jget "$S" $R.latency_us.handoff.mean)
in_range "the parts sum to about the handoff p50 ($p50 us)" "$total" \
    "$(awk -v v="$p50" 'BEGIN{print v / 3}')" "$(awk -v v="$p50" 'BEGIN{print v * 3}')"
in_range "the parts sum to about the handoff mean ($mean us)" "$total" \
    "$(awk -v v="$mean" 'BEGIN{print v / 2}')" "$(awk -v v="$mean" 'BEGIN{print v * 2}')"
p50sum=$(awk -v a="$(jget "$S" $R.handoff_split.p50_us.delivery)" \
    -v b="$(jget "$S" $R.handoff_split.p50_us.scheduling)" \
    -v c="$(jget "$S" $R.handoff_split.p50_us.acquire)" 'BEGIN{ if (a > 0 && b > 0 && c > 0) print a + b + c; else print "<missing>" }')
in_range "the parts' medians sum to about the handoff p50 ($p50 us)" "$p50sum" \
    "$(awk -v v="$p50" 'BEGIN{print v / 3}')" "$(awk -v v="$p50" 'BEGIN{print v * 3}')"
expect_eq "a polling design has no split" "$(jget "$S" results.impl=redis-lua.handoff_split)" "<missing>"
finish
