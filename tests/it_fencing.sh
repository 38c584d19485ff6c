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

# The lock and the resource apart (issue 32): a redis-watchdog holder
# paused 5 s against a 400 ms ttl. Its watchdog freezes with it, the others
# take the lock in turns, and the holder writes with its old token on
# waking: refused. Every stale pair is refused, none got through or was
# left alone by chance: fenced, the stock intact.
run_ok "redis-watchdog paused 5 s, fenced" "$SRC/tests/scenarios/fencing/pause-watchdog.yaml"
r=results.0
expect_eq "watchdog: the pause landed" "$(jget "$S" $r.faults.0.outcome)" done
expect_eq "watchdog: verdict" "$(jget "$S" $r.verdict)" fenced
expect_eq "watchdog: the lock overlapped" "$(jget "$S" $r.safety.lock)" overlapped
expect_eq "watchdog: the resource refused the stale holder" "$(jget "$S" $r.safety.resource)" \
    stale-refused
expect_gt "watchdog: stale pairs refused" "$(jget "$S" $r.safety.stale_pairs.refused)" 0
expect_eq "watchdog: none got through" "$(jget "$S" $r.safety.stale_pairs.through)" 0
expect_eq "watchdog: none by chance" "$(jget "$S" $r.safety.stale_pairs.chance)" 0
expect_eq "watchdog: the pairs are the overlaps" \
    "$(($(jget "$S" $r.safety.stale_pairs.refused) + $(jget "$S" $r.safety.stale_pairs.ordered) + \
        $(jget "$S" $r.safety.stale_pairs.noticed)))" "$(jget "$S" $r.safety.violations)"
expect_eq "watchdog: one stale holder" "$(jget "$S" $r.safety.stale_window.holders)" 1
# the window runs from the first later grant (the ttl after the pause, at
# most) to the holder's exit, after the 5 s pause
w=$(jget "$S" $r.safety.stale_window.max_ms)
check "watchdog: the stale-holder window is most of the pause ($w ms)" \
    awk -v w="$w" 'BEGIN { exit !(w > 4000 && w < 5100) }'

# The other branch: a zk-sequential holder with on_disconnect: abort,
# paused past its session, hears of its loss on waking and leaves before
# its write. Nothing refused, nothing touched: fenced too, the stock
# intact, fencing on or off.
run_ok "zk-sequential paused past its session, on_disconnect abort" \
    "$SRC/tests/scenarios/fencing/pause-zk-abort.yaml"
for r in results.0 results.1; do
    expect_eq "zk abort $r: verdict" "$(jget "$S" $r.verdict)" fenced
    expect_eq "zk abort $r: the lock overlapped" "$(jget "$S" $r.safety.lock)" overlapped
    expect_eq "zk abort $r: the resource intact" "$(jget "$S" $r.safety.resource)" intact
    expect_gt "zk abort $r: the stale holder noticed" "$(jget "$S" $r.safety.stale_pairs.noticed)" 0
    expect_eq "zk abort $r: it left before its write" "$(jget "$S" $r.workload.aborted)" 1
    expect_eq "zk abort $r: the window counted to the notice" \
        "$(jget "$S" $r.safety.stale_window.noticed)" 1
done
expect_eq "zk abort fenced: nothing refused" "$(jget "$S" results.1.safety.stale_writes_rejected)" 0

expect_no_orphans "after the fencing runs"
finish
