# it_availability.sh - a verdict never says more than the run showed about
# a store that a fault took away. Three runs of redis-lua on a store that
# is killed for good, paused past the run's end, and restarted and back
# again must give unavailable, unavailable and not-exercised (back, but
# its 5 ms sections never held the lock through the restart), and a fenced
# redis-lua whose store restarts empty while a holder is inside must give
# token-regressed; each run twice, since the point is that it is the same
# every time. The records say when the store served again (back_ms), how
# long the first grant took after it (recovery_ms), and how many lock
# errors came after the fault. A store back with a lock its holder could
# not release is not unavailable while that lock's TTL runs. A store
# paused past the clients' wait
# leaves timeouts that are the fault's, not the design's. And the loader warns when lock.wait is
# longer than what the run has left after its last fault.
. "$(dirname "$0")/lib.sh"

A=$SRC/tests/scenarios/availability
for round in 1 2; do
    run_ok "killed for good ($round)" "$A/killed-for-good.yaml"
    R=results.0
    expect_eq "killed for good ($round): unavailable" "$(jget "$S" "$R.verdict")" unavailable
    expect_eq "killed for good ($round): no grant after the store" "$(jget "$S" "$R.faults.0.recovery_ms")" null
    expect_eq "killed for good ($round): the row names the fault" "$(jget "$S" "$R.unavailable.entry")" 0
    expect_eq "killed for good ($round): it did not come back while asked" "$(jget "$S" "$R.unavailable.store_back")" false
    expect_gt "killed for good ($round): lock errors after it" "$(jget "$S" "$R.unavailable.errors_after")" 10
    expect_eq "killed for good ($round): none counted as the design's" "$(jget "$S" "$R.ops.errors")" 0

    run_ok "paused past the end ($round)" "$A/paused-for-good.yaml"
    expect_eq "paused past the end ($round): unavailable" "$(jget "$S" results.0.verdict)" unavailable
    expect_eq "paused past the end ($round): the pause landed" "$(jget "$S" results.0.faults.0.outcome)" done

    run_ok "restarted and back ($round)" "$A/restart-recovered.yaml"
    R=results.0
    expect_eq "restarted and back ($round): not-exercised" "$(jget "$S" "$R.verdict")" not-exercised
    expect_eq "restarted and back ($round): not unavailable" "$(jget "$S" "$R.unavailable")" null
    in_range "restarted and back ($round): back 0.75-1.5 s after the start" "$(jget "$S" "$R.faults.0.back_ms")" 750 1500
    in_range "restarted and back ($round): granted within 0.5 s of that" "$(jget "$S" "$R.faults.0.recovery_ms")" 0 500
    expect_eq "restarted and back ($round): grace stated" "$(jget "$S" "$R.faults.0.grace_ms")" 1000
    expect_gt "restarted and back ($round): its lock errors excused" "$(jget "$S" "$R.fault_errors")" 0
    expect_eq "restarted and back ($round): no error left over" "$(jget "$S" "$R.ops.errors")" 0

    run_ok "restarted empty, fenced ($round)" "$A/restart-empty-fenced.yaml"
    R=results.0
    expect_eq "restarted empty, fenced ($round): token-regressed" "$(jget "$S" "$R.verdict")" token-regressed
    expect_gt "restarted empty, fenced ($round): rightful holders refused" "$(jget "$S" "$R.safety.rightful_refused")" 0
    expect_eq "restarted empty, fenced ($round): no stale write accepted" "$(jget "$S" "$R.safety.lost_updates")" 0
    expect_eq "restarted empty, fenced ($round): the restart hit a holder" "$(jget "$S" "$R.faults.0.outcome")" done
done

# the same store restarted with its data (AOF fsynced on every write):
# the counter survives, nobody rightful is refused (a short TTL: the
# holder's lock survives too, and its release was cut off by the restart;
# its 20 ms section ends before the store is back: not at stake)
sed 's/persistence: none/persistence: aof-always/; s/token-regressed/not-exercised/; s/ttl: 2s/ttl: 300ms/' \
    "$A/restart-empty-fenced.yaml" > "$WORK/restart-aof.yaml"
run_ok "restarted with its data, fenced" "$WORK/restart-aof.yaml"
expect_eq "restarted with its data, fenced: not-exercised" "$(jget "$S" results.0.verdict)" not-exercised
expect_eq "restarted with its data, fenced: nobody rightful refused" "$(jget "$S" results.0.safety.rightful_refused)" 0

# the same store kept its data and the lock its holder could not give back
# (down 1 s, its 300 ms section ends in it, so its release fails; ttl 5 s):
# no grant in the 2.5 s after the store served again is the lock waiting
# out its TTL, not a store that never came back; its waiters' timeouts
# after the store's return say blocked
sed 's/persistence: none/persistence: aof-always/; s/token-regressed/blocked/; s/ttl: 2s/ttl: 5s/; s/, fencing: true//; s/business: 20ms/business: 300ms/; s/duration: 200ms/duration: 1s/; s/max_duration: 3s/max_duration: 4s/' \
    "$A/restart-empty-fenced.yaml" > "$WORK/restart-kept.yaml"
run_ok "restarted with the lock kept" "$WORK/restart-kept.yaml"
expect_eq "restarted with the lock kept: blocked" "$(jget "$S" results.0.verdict)" blocked
expect_eq "restarted with the lock kept: not unavailable" "$(jget "$S" results.0.unavailable)" null
expect_eq "restarted with the lock kept: no grant after the store was back" \
    "$(jget "$S" results.0.faults.0.recovery_ms)" null

# the store paused for 1 s against a 300 ms wait: the acquires that ran
# out of time while it was stopped could not have been granted by any
# design; they are the fault's (fault_timeouts), not `blocked`
sed 's/wait: 1s/wait: 300ms/; s/action: restart, target: redis, duration: 300ms/action: pause, target: redis, duration: 1s/' \
    "$A/restart-recovered.yaml" > "$WORK/pause-wait.yaml"
run_ok "paused past the wait" "$WORK/pause-wait.yaml"
expect_eq "paused past the wait: not blocked" "$(jget "$S" results.0.verdict)" not-exercised
expect_gt "paused past the wait: its timeouts are the fault's" "$(jget "$S" results.0.fault_timeouts)" 0
expect_eq "paused past the wait: none counted as the design's" "$(jget "$S" results.0.ops.timeouts)" 0

# lock.wait longer than the run has left after its last fault: a warning
# naming the entry's file:line:column, and the run goes on
sed 's/wait: 1s/wait: 5s/' "$A/killed-for-good.yaml" > "$WORK/long-wait.yaml"
"$LOCKLAB" run "$WORK/long-wait.yaml" --out "$WORK/w" --quiet --no-plot 2> "$WORK/warn.txt"
expect_eq "long wait: still ran to its verdict" "$?" 0
expect_eq "long wait: warned at the fault entry" \
    "$(grep -c "warning: $WORK/long-wait.yaml:12:5: .*lock.wait (5.00 s)" "$WORK/warn.txt")" 1
expect_no_orphans "after the availability runs"
finish
