# it_reconnect.sh - a Redis lock client whose connection is cut mid-run
# (CLIENT KILL on the lock store) counts the operation that failed as an
# error and carries on over a new connection: one cut costs one operation,
# not every operation after it. The same holds for the watchdog's own
# connection (a cut costs one renewal, not the lock) and for redisson's
# pub/sub connection: a waiter whose subscription was cut reconnects,
# subscribes again and checks the lock again (an unlock message may have
# been missed), so the cuts cost no more than one acquire each.
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

run_bg "$D/cut.yaml" 5
check "found the lock store's port" test -n "$port"
# into the run: the four clients connected (and this redis-cli)
conns() { [ "$(redis-cli -p "$port" CLIENT LIST TYPE normal 2>/dev/null | wc -l)" -ge "$1" ]; }
check "into the run: four clients connected" wait_for 20 conns 5
killed=$(redis-cli -p "$port" CLIENT KILL TYPE normal)
expect_gt "connections cut" "$killed" 3
wait "$pid"
expect_eq "exit code" "$?" 0
S=$WORK/results/latest/summary.json
r=results.impl=redis-lua
errors=$(jget "$S" $r.ops.errors)
# a command whose connection was cut is sent once more on a new one
expect_eq "the cut costs no operation: each command is resent on a new connection" "$errors" 0
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
run_bg "$D/cut-watchdog.yaml" 3
# a lock held and renewed: its key there, and the two clients' and two
# watchdogs' connections (and this redis-cli)
renewed() { conns 5 && [ "$(redis-cli -p "$port" EXISTS cut-wd)" = 1 ]; }
check "watchdog run: a lock held, clients and watchdogs connected" wait_for 20 renewed
killed=$(redis-cli -p "$port" CLIENT KILL TYPE normal)
expect_gt "watchdog run: connections cut (clients and watchdogs)" "$killed" 3
wait "$pid"
S=$WORK/results/latest/summary.json
r=results.impl=redis-watchdog
expect_eq "watchdog run: the lock was never lost (no overlap)" "$(jget "$S" $r.safety.violations)" 0
expect_gt "watchdog run: renewals went on after the cut" "$(jget "$S" $r.lock_stats.renewals)" 30
expect_gt "watchdog run: the cut cost each watchdog one renewal attempt at most" 3 \
    "$(jget "$S" $r.lock_stats.renewal_failures)"

# redisson's pub/sub connection: cut the subscribed waiters' connections
# three times. Each cut waits until a waiter is subscribed on a connection
# opened after the previous cut (connection ids grow; CLIENT ID of the
# cutting redis-cli is above every connection open at the cut), which only
# a client that reconnected its pub/sub connection can show.
cat > "$D/cut-pubsub.yaml" <<'YAML'
name: cut-pubsub
impls: [redisson]
clients: 4
run: {ops_per_client: 300, max_duration: 60s}
lock: {key: cut-rsn, wait: 10s}
workload: {kind: counter, business: 2ms}
expect: {"*": any}
YAML
run_bg "$D/cut-pubsub.yaml" 5
check "pub/sub run: found the lock store's port" test -n "$port"
# newest_pubsub: the highest id of a connection in pub/sub mode (a subscribed waiter)
newest_pubsub() {
    redis-cli -p "$port" CLIENT LIST TYPE pubsub | sed -n 's/^id=\([0-9]*\) .*/\1/p' | sort -n | tail -1
}
cuts=0 killed=0 after=0 # cuts that hit a connection, connections cut, id bar
while [ $cuts -lt 3 ]; do
    seen=""
    end=$((SECONDS + 20))
    while [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null; do
        seen=$(newest_pubsub)
        [ -n "$seen" ] && [ "$seen" -gt "$after" ] && break
        seen=""
        sleep 0.02
    done
    [ -n "$seen" ] || break
    next=$(redis-cli -p "$port" CLIENT ID)
    n=$(redis-cli -p "$port" CLIENT KILL TYPE pubsub)
    [ "$n" -gt 0 ] 2>/dev/null || continue # the waiter got the lock first: try again
    after=$next
    cuts=$((cuts + 1))
    killed=$((killed + n))
done
wait "$pid"
expect_eq "pub/sub run: exit code" "$?" 0
expect_eq "pub/sub run: three cuts, each after a waiter subscribed again on a new connection" \
    "$cuts" 3
expect_gt "pub/sub run: subscribed waiters cut" "$killed" 0
S=$WORK/results/latest/summary.json
r=results.impl=redisson
errors=$(jget "$S" $r.ops.errors)
expect_gt "pub/sub run: at most one error per cut ($errors errors, $cuts cuts)" \
    $((cuts + 1)) "$errors"
expect_gt "pub/sub run: nearly every acquire done" "$(jget "$S" $r.ops.acquired)" 1190
expect_eq "pub/sub run: no acquire ran out of its wait" "$(jget "$S" $r.ops.timeouts)" 0
expect_eq "pub/sub run: no overlap" "$(jget "$S" $r.safety.violations)" 0
expect_gt "pub/sub run: waiters were woken by messages" "$(jget "$S" $r.lock_stats.notifications)" 0
expect_no_orphans "after the cuts"
finish
