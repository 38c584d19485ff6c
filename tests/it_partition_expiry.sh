# it_partition_expiry.sh - a holder cut off from its store (issue 22), on
# trimmed copies of the shipped scenarios (tests/scenarios/partition/):
# ZooKeeper and etcd holders cut off past their session or lease are
# violation unfenced and fenced fenced, another client granted about a
# session after the cut; lock.on_disconnect: abort makes the holder leave
# before that grant (safe); a PostgreSQL holder cut off keeps its lock
# through the cut (safe, the next grant only after the heal). Every cut is
# `done`, lands on a holder (when: holder) and records its probes. The
# shipped partition scenarios must load.
. "$(dirname "$0")/lib.sh"

need_hosts
T=$SRC/tests/scenarios/partition
OUT=$WORK/results
"$LOCKLAB" list > "$WORK/list.out" 2>&1
for f in zk-partition zk-partition-abort zk-leader-partition db-partition; do
    check "the shipped $f.yaml loads" grep -q "scenarios/$f.yaml " "$WORK/list.out"
done
check "... without an error or a warning about them" \
    bash -c "! grep -E '(error|warning).*(zk-|db-)(leader-)?partition' '$WORK/list.out'"

# cut RESULT LABEL LO HI: the partition of RESULT done on a holder, its
# probes recorded, the next grant LO..HI ms after the cut
cut() {
    local r=$1.faults.0
    expect_eq "$2: the cut done" "$(jget "$S" $r.outcome)" done
    local note
    note=$(jget "$S" $r.note)
    check "... on a holder, probed: $note" grep -Eq "while client [01] held the lock.*across c[01]->[a-z0-9]+ no answer.*healed: .* connected" <<< "$note"
    in_range "$2: another client granted after the cut (ms)" "$(jget "$S" $r.next_grant_ms)" "$3" "$4"
}

T0=$SECONDS
"$LOCKLAB" run "$T/zk-cut.yaml" --out "$OUT" --quiet --no-plot > "$WORK/zk.out" 2>&1
expect_eq "zk-cut: every expectation met" "$?" 0 || cat "$WORK/zk.out"
echo "zk-cut: $((SECONDS - T0)) s"
S=$OUT/latest/summary.json
for impl in zk-sequential etcd-lease; do
    cut "results.impl=$impl,fencing=off" "$impl unfenced" 700 1900
    in_range "... the holder, unaware, left after its business (ms)" \
        "$(jget "$S" "results.impl=$impl,fencing=off.faults.0.holder_left_ms")" 1500 2100
    cut "results.impl=$impl,fencing=on" "$impl fenced" 700 1900
    expect_gt "... its late write refused" \
        "$(jget "$S" "results.impl=$impl,fencing=on.safety.stale_writes_rejected")" 0
done

T0=$SECONDS
"$LOCKLAB" run "$T/zk-abort.yaml" --out "$OUT" --quiet --no-plot > "$WORK/abort.out" 2>&1
expect_eq "zk-abort: safe as expected" "$?" 0 || cat "$WORK/abort.out"
echo "zk-abort: $((SECONDS - T0)) s"
S=$OUT/latest/summary.json
R=results.impl=zk-ephemeral
cut "$R" "on_disconnect abort" 700 1900
LEFT=$(jget "$S" $R.faults.0.holder_left_ms)
in_range "... the holder left at the disconnect (ms)" "$LEFT" 400 900
check "... before the next grant ($LEFT < $(jget "$S" $R.faults.0.next_grant_ms))" \
    awk -v a="$LEFT" -v b="$(jget "$S" $R.faults.0.next_grant_ms)" 'BEGIN { exit !(a < b) }'
expect_eq "... one unit aborted" "$(jget "$S" $R.workload.aborted)" 1
expect_eq "... the lock at stake, and held: it noticed" "$(jget "$S" $R.faults.0.at_stake)" yes

T0=$SECONDS
"$LOCKLAB" run "$T/db-cut.yaml" --out "$OUT" --quiet --no-plot > "$WORK/db.out" 2>&1
expect_eq "db-cut: not-exercised as expected" "$?" 0 || cat "$WORK/db.out"
echo "db-cut: $((SECONDS - T0)) s"
S=$OUT/latest/summary.json
cut results.impl=pg-advisory "pg-advisory" 1500 4000
expect_eq "... the lock never at stake" "$(jget "$S" results.impl=pg-advisory.faults.0.at_stake)" no
# the shipped minority-leader file as it is, one design: no leader for the
# followers' syncLimit (5 s), so the waiters' 1.5 s budget runs out
T0=$SECONDS
"$LOCKLAB" run "$SRC/scenarios/zk-leader-partition.yaml" --impl zk-sequential --out "$OUT" \
    --quiet --no-plot > "$WORK/leader.out" 2>&1
expect_eq "zk-leader-partition: blocked as expected" "$?" 0 || cat "$WORK/leader.out"
echo "zk-leader-partition: $((SECONDS - T0)) s"
S=$OUT/latest/summary.json
R=results.impl=zk-sequential.faults.0
expect_eq "minority leader: the cut done" "$(jget "$S" $R.outcome)" done
check "... probed across and inside: $(jget "$S" $R.note)" \
    grep -Eq "across h[123]->h[123] no answer.*inside h[123]->h[123] connected" <<< "$(jget "$S" $R.note)"
LEADER=$(awk -v a="$(jget "$S" $R.phases_ms.leader)" -v b="$(jget "$S" $R.phases_ms.cut)" \
    'BEGIN { printf "%d", a - b }')
in_range "... the majority's new leader serves alone after the cut (ms)" "$LEADER" 4500 7000
expect_eq "... no two holders" "$(jget "$S" results.impl=zk-sequential.safety.violations)" 0

expect_no_orphans "after the runs"
finish
