# it_watchdog.sh - the watchdog stops renewing a hold it cannot keep, as
# Redisson's does: when its renewal keeps failing after the retries (here
# the test turns the lock's key into a value of the wrong type, so every
# renewal is a WRONGTYPE error) it gives up after 1 + 3 attempts instead of
# failing every period until the holder is done; when the renewal says the
# lock is no longer ours (the test deletes the key) it stops at once.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
# calls of one command on the lock store so far
calls() {
    redis-cli -p "$port" INFO commandstats | tr -d '\r' |
        sed -n "s/^cmdstat_$1:calls=\\([0-9]*\\),.*/\\1/p"
}
# wait_for DESCRIPTION COMMAND...: wait (at most 20 s) until the command succeeds
wait_for() {
    local desc=$1 end=$((SECONDS + 20))
    shift
    until "$@"; do
        if [ $SECONDS -ge $end ]; then
            fail "timed out waiting: $desc"
            return 1
        fi
        sleep 0.01
    done
}
renewed_once() { [ "$(calls evalsha)" -ge 1 ] 2>/dev/null; } # redis-watchdog: SET grants, EVALSHA renews
key_exists() { [ "$(redis-cli -p "$port" EXISTS "$1")" = 1 ]; }

# 1. renewals that keep failing: 1 attempt + 3 retries, then no more
cat > "$D/errors.yaml" <<'YAML'
name: wd-errors
impls: [redis-watchdog]
clients: 1
run: {ops_per_client: 1, max_duration: 60s}
lock: {key: wd-err, ttl: 300ms, wait: 10s}
workload: {kind: counter, business: 1500ms}
expect: {"*": any}
YAML
run_bg "$D/errors.yaml" 2
check "errors: found the lock store's port" test -n "$port"
wait_for "a renewal of the held lock" renewed_once
redis-cli -p "$port" EVAL "redis.call('del', KEYS[1]); return redis.call('hset', KEYS[1], 'x', '1')" \
    1 wd-err >/dev/null
wait "$pid"
expect_eq "errors: exit code" "$?" 0
S=$WORK/results/latest/summary.json
r=results.impl=redis-watchdog
expect_gt "errors: renewed before the key was spoilt" "$(jget "$S" $r.lock_stats.renewals)" 0
# the business time covers 14 periods: a watchdog that never gives up fails ~13 times
expect_eq "errors: 1 failed renewal + 3 retries, then the watchdog stopped" \
    "$(jget "$S" $r.lock_stats.renewal_failures)" 4

# 2. the key deleted under the holder: the renewal answers 0, renewing stops
cat > "$D/deleted.yaml" <<'YAML'
name: wd-deleted
impls: [redisson]
clients: 1
run: {ops_per_client: 1, max_duration: 60s}
lock: {key: wd-del, watchdog_lease: 300ms, wait: 10s}
workload: {kind: counter, business: 1500ms}
expect: {"*": any}
YAML
run_bg "$D/deleted.yaml" 2
check "deleted: found the lock store's port" test -n "$port"
wait_for "the lock is held" key_exists wd-del
expect_eq "deleted: the test deleted the held key" "$(redis-cli -p "$port" DEL wd-del)" 1
wait "$pid"
expect_eq "deleted: exit code" "$?" 0
r=results.impl=redisson
expect_eq "deleted: one renewal found the lock gone, then the watchdog stopped" \
    "$(jget "$S" $r.lock_stats.renewal_failures)" 1
expect_eq "deleted: the release found the lock gone" "$(jget "$S" $r.ops.release_not_owner)" 1

expect_no_orphans "after the watchdog runs"
finish
