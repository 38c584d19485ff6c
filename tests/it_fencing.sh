# it_fencing.sh - fencing tokens against a holder that lost its lock while
# it was paused. Unfenced, its late write loses the next holder's sale
# (violation); fenced, the stock store refuses it and the stock stays exact
# (fenced). One scenario runs each design both ways (workload.fencing:
# [false, true]); redlock has no sound token and runs its fencing step
# unfenced, saying so.
. "$(dirname "$0")/lib.sh"

FP='redis-lua/after-grant=sleep(300ms);redisson/after-grant=sleep(300ms);redlock/after-grant=sleep(300ms)'
LOCKLAB_FAILPOINTS=$FP run_ok "redis designs paused 3x their TTL" \
    "$SRC/tests/scenarios/fencing/pause-redis.yaml"
for impl in redis-lua redisson redlock; do
    off="results.impl=$impl"
    expect_eq "$impl unfenced: fencing off" "$(jget "$S" "$off.fencing")" off
    expect_violation "$impl unfenced" "$off"
    expect_gt "$impl unfenced: lost updates" "$(jget "$S" "$off.safety.lost_updates")" 0
done
# the fenced steps come second: pick them by their file stem
for impl in redis-lua redisson; do
    on=$(for i in 1 3 5; do [ "$(jget "$S" "results.$i.impl")" = "$impl" ] && echo "results.$i"; done)
    expect_eq "$impl fenced: fencing on" "$(jget "$S" "$on.fencing")" on
    expect_eq "$impl fenced: verdict" "$(jget "$S" "$on.verdict")" fenced
    expect_gt "$impl fenced: holders overlapped" "$(jget "$S" "$on.safety.violations")" 0
    expect_gt "$impl fenced: stale writes refused" "$(jget "$S" "$on.safety.stale_writes_rejected")" 0
    expect_eq "$impl fenced: nothing oversold" "$(jget "$S" "$on.safety.oversold")" 0
    expect_eq "$impl fenced: no lost update" "$(jget "$S" "$on.safety.lost_updates")" 0
    expect_eq "$impl fenced: files of its own" "$(jget "$S" "$on.files")" fencing-pause-redis-fenced
done
expect_eq "redlock fencing step: no sound token" "$(jget "$S" results.5.fencing)" unsupported
expect_eq "redlock fencing step: still a violation" "$(jget "$S" results.5.verdict)" violation
expect_eq "redlock fencing step: nothing refused" "$(jget "$S" results.5.safety.stale_writes_rejected)" 0

# zk-sequential: the fault engine stops the holder past its session
# timeout, in each of the two steps
run_ok "zk-sequential paused past its session" "$SRC/tests/scenarios/fencing/pause-zk.yaml"
expect_eq "zk-sequential unfenced: the pause landed" "$(jget "$S" results.0.faults.0.outcome)" done
expect_eq "zk-sequential fenced: the pause landed" "$(jget "$S" results.1.faults.0.outcome)" done
expect_eq "zk-sequential unfenced: fencing off" "$(jget "$S" results.0.fencing)" off
expect_violation "zk-sequential unfenced" results.0
expect_gt "zk-sequential unfenced: lost updates" "$(jget "$S" results.0.safety.lost_updates)" 0
expect_eq "zk-sequential fenced: fencing on" "$(jget "$S" results.1.fencing)" on
expect_eq "zk-sequential fenced: verdict" "$(jget "$S" results.1.verdict)" fenced
expect_gt "zk-sequential fenced: holders overlapped" "$(jget "$S" results.1.safety.violations)" 0
expect_gt "zk-sequential fenced: stale writes refused" "$(jget "$S" results.1.safety.stale_writes_rejected)" 0
expect_eq "zk-sequential fenced: no lost update" "$(jget "$S" results.1.safety.lost_updates)" 0
expect_no_orphans "after the fencing runs"
finish
