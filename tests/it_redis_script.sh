# it_redis_script.sh - user-supplied Lua lock scripts (redis-script): a
# correct script holds, a broken one is caught as a violation by the oracle,
# a script that fails at run time is counted as errors (not a crash), and a
# scenario missing its release script is rejected with file:line:column.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
# write_scenario NAME EXPECT ACQUIRE_LUA: a redis-script scenario with the
# textbook compare-and-delete release
write_scenario() {
    cat > "$D/$1.yaml" <<YAML
name: $1
impls: [redis-script]
clients: 6
run: {ops_per_client: 15, max_duration: 60s}
lock:
  key: script-lock
  ttl: 5s
  wait: 10s
  retry_interval: 2ms
  script:
    acquire: |
$(printf '%s\n' "$3" | sed 's/^/      /')
    release: |
      if redis.call('get', KEYS[1]) == ARGV[1] then
        return redis.call('del', KEYS[1])
      end
      return 0
workload: {kind: counter, business: 2ms}
expect: {redis-script: $2}
YAML
}
write_scenario good safe "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0"
# forgets NX: every client "gets" the lock
write_scenario broken violation "redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1"
write_scenario failing error "return redis.call('no-such-command', KEYS[1])"

OUT=$WORK/results
for case in good broken failing; do
    "$LOCKLAB" run "$D/$case.yaml" --out "$OUT" --quiet
    expect_eq "$case script: expectation met (exit 0)" "$?" 0
    S=$OUT/latest/summary.json
    r=results.impl=redis-script
    case $case in
    good)
        expect_exact "good script" $r 90
        ;;
    broken)
        expect_violation "broken script" $r
        expect_gt "broken script: lost updates" "$(jget "$S" $r.safety.lost_updates)" 0
        ;;
    failing)
        expect_eq "failing script: error verdict" "$(jget "$S" $r.verdict)" error
        expect_gt "failing script: errors counted" "$(jget "$S" $r.ops.errors)" 0
        expect_eq "failing script: no client crashed" "$(jget "$S" $r.clients_status.crashed)" 0
        check "failing script: the Redis error is reported" grep -q "redis" <<<"$(jget "$S" $r.first_error)"
        ;;
    esac
done

# a scenario without a release script is rejected before anything starts
cat > "$D/norelease.yaml" <<'YAML'
name: norelease
impls: [redis-script]
lock:
  script:
    acquire: return 1
YAML
err=$("$LOCKLAB" run "$D/norelease.yaml" --out "$OUT" 2>&1 >/dev/null)
expect_eq "missing release script: exit code" "$?" 2
check "missing release script: file:line:column and reason" grep -q "^$D/norelease.yaml:5:5: redis-script needs lock.script.acquire and lock.script.release (missing: release)" <<<"$err"
expect_no_orphans "after the script runs"
finish
