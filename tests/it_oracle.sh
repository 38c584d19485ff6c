# it_oracle.sh - the oracle on real locks with known outcomes: redis-set-del
# with a TTL shorter than the business time must be caught (two holders,
# and releases that deleted a lock no longer theirs), while redis-lua with a
# long TTL on the same workload must come out clean. The counter workload's
# lost updates must agree with the oracle's verdict.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/short-ttl.yaml" <<'YAML'
name: short-ttl
impls: [redis-set-del]
clients: 6
run: {ops_per_client: 6, max_duration: 60s}
lock: {ttl: 30ms, wait: 10s, retry_interval: 2ms}
workload: {kind: counter, business: 80ms}
expect: {redis-set-del: violation}
YAML
cat > "$D/long-ttl.yaml" <<'YAML'
name: long-ttl
impls: [redis-set-del, redis-lua]
clients: 6
run: {ops_per_client: 6, max_duration: 60s}
lock: {ttl: 10s, wait: 10s, retry_interval: 2ms}
workload: {kind: counter, business: 10ms}
expect: {"*": safe}
YAML

OUT=$WORK/results
run_ok "short TTL" "$D/short-ttl.yaml"
r=results.impl=redis-set-del
expect_violation "short TTL: redis-set-del" $r
expect_gt "short TTL: overlap time" "$(jget "$S" $r.safety.overlap_us)" 0
expect_gt "short TTL: more than one holder" "$(jget "$S" $r.safety.max_concurrent_holders)" 1
expect_gt "short TTL: releases found the lock gone or taken" "$(jget "$S" $r.ops.release_not_owner)" 0
expect_gt "short TTL: lost updates in the counter" "$(jget "$S" $r.safety.lost_updates)" 0

run_ok "long TTL" "$D/long-ttl.yaml"
for impl in redis-set-del redis-lua; do
    r=results.impl=$impl
    expect_exact "long TTL: $impl" $r 36
    expect_gt "long TTL: $impl handoffs measured" "$(jget "$S" $r.latency_us.handoff.count)" 0
done
expect_no_orphans "after the oracle runs"
finish
