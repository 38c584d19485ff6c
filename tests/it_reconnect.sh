# it_reconnect.sh - a Redis lock client whose connection is cut mid-run
# (CLIENT KILL on the lock store) counts the operation that failed as an
# error and carries on over a new connection: one cut costs one operation,
# not every operation after it.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/cut.yaml" <<'YAML'
name: cut
impls: [redis-lua]
clients: 4
run: {ops_per_client: 300, max_duration: 60s}
lock: {key: cut-lock, wait: 10s, retry_interval: 2ms}
workload: {kind: counter, business: 2ms}
expect: {"*": any}
YAML

"$LOCKLAB" run "$D/cut.yaml" --out "$WORK/results" --quiet --no-plot &
pid=$!
port=""
end=$((SECONDS + 30))
# the lock store's directory is named after its port; wait for the clients
until [ -n "$port" ] && [ "$(pgrep -P "$pid" | wc -l)" -ge 5 ] || [ $SECONDS -ge $end ]; do
    port=$(ls "$TMPDIR"/locklab-*/ 2>/dev/null | sed -n 's/^lock-store-//p' | head -1)
    sleep 0.05
done
check "found the lock store's port" test -n "$port"
sleep 0.5 # into the run
killed=$(redis-cli -p "$port" CLIENT KILL TYPE normal)
expect_gt "connections cut" "$killed" 3
wait "$pid"
expect_eq "exit code" "$?" 0
S=$WORK/results/latest/summary.json
r=results.impl=redis-lua
errors=$(jget "$S" $r.ops.errors)
expect_gt "the cut shows up as errors" "$errors" 0
expect_gt "one cut costs about one operation per client (errors < 13)" 13 "$errors"
expect_gt "the clients carried on over new connections" "$(jget "$S" $r.ops.acquired)" 1180
expect_eq "no overlap" "$(jget "$S" $r.safety.violations)" 0

# the watchdog's own connection: a renewal that fails on a cut connection is
# followed by one over a new connection, well within the TTL
cat > "$D/cut-watchdog.yaml" <<'YAML'
name: cut-watchdog
impls: [redis-watchdog]
clients: 2
run: {ops_per_client: 8, max_duration: 60s}
lock: {key: cut-wd, ttl: 300ms, wait: 10s, retry_interval: 5ms}
workload: {kind: counter, business: 500ms}
expect: {"*": any}
YAML
rm -rf "$WORK/results"
"$LOCKLAB" run "$D/cut-watchdog.yaml" --out "$WORK/results" --quiet --no-plot &
pid=$!
port=""
end=$((SECONDS + 30))
until [ -n "$port" ] && [ "$(pgrep -P "$pid" | wc -l)" -ge 3 ] || [ $SECONDS -ge $end ]; do
    port=$(ls "$TMPDIR"/locklab-*/ 2>/dev/null | sed -n 's/^lock-store-//p' | head -1)
    sleep 0.05
done
sleep 1.5 # a lock is held and renewed
killed=$(redis-cli -p "$port" CLIENT KILL TYPE normal)
expect_gt "watchdog run: connections cut (clients and watchdogs)" "$killed" 3
wait "$pid"
S=$WORK/results/latest/summary.json
r=results.impl=redis-watchdog
expect_eq "watchdog run: the lock was never lost (no overlap)" "$(jget "$S" $r.safety.violations)" 0
expect_gt "watchdog run: renewals went on after the cut" "$(jget "$S" $r.lock_stats.renewals)" 30
expect_no_orphans "after the cut"
finish
