# it_herd.sh - the shipped herd scenario (50 clients on one key) on embedded
# ZooKeeper and Redis: how many clients one release wakes. zk-ephemeral's
# losers all watch one node, so a release wakes most of the waiters;
# zk-sequential wakes exactly its successor; every Redisson subscriber hears
# the PUBLISH; redis-lua polls instead; etcd-mutex's waiters each watch the
# key created just before theirs (one woken), etcd-lease's all watch the one
# key. All of them must stay safe.
. "$(dirname "$0")/lib.sh"

OUT=$WORK/results
"$LOCKLAB" run "$SRC/scenarios/herd.yaml" --out "$OUT" --quiet --no-plot
expect_eq "herd: every expectation met (exit 0)" "$?" 0
S=$OUT/latest/summary.json
clients=$(jget "$S" results.impl=zk-ephemeral.clients)
expect_eq "herd: 50 clients" "$clients" 50
w() { jget "$S" "results.impl=$1.wakeups_per_release"; }
# a waiter busy retrying when the next release comes has no watch set, so
# not every one of the 49 is woken each time; most are
expect_gt "herd: zk-ephemeral wakes most waiters per release" "$(w zk-ephemeral)" 29.4
expect_gt "herd: zk-sequential wakes at least its successor" "$(w zk-sequential)" 0.9
expect_gt "herd: zk-sequential wakes no more than about one (< 1.1)" 1.1 "$(w zk-sequential)"
expect_gt "herd: every redisson subscriber hears a release" "$(w redisson)" 39.2
expect_eq "herd: zk-sequential polls never" "$(jget "$S" results.impl=zk-sequential.lock_stats.polls)" 0
expect_gt "herd: redis-lua polls" "$(jget "$S" results.impl=redis-lua.lock_stats.polls)" 0
expect_gt "herd: etcd-mutex wakes its successor" "$(w etcd-mutex)" 0.9
expect_gt "herd: etcd-mutex wakes no more than about one (< 1.1)" 1.1 "$(w etcd-mutex)"
expect_gt "herd: etcd-lease wakes more than one per release" "$(w etcd-lease)" 1.5
# MariaDB queues the waiters in the server: no poll, no notification seen
for impl in mysql-get-lock mysql-for-update; do
    expect_eq "herd: $impl polls never" "$(jget "$S" results.impl=$impl.lock_stats.polls)" 0
done
for impl in zk-ephemeral zk-sequential redisson redis-lua mysql-get-lock mysql-for-update \
            etcd-lease etcd-mutex etcd-lock-api; do
    expect_eq "herd: $impl safe" "$(jget "$S" results.impl=$impl.verdict)" safe
done
expect_no_orphans "after the herd"
expect_no_temp_dirs "after the herd"
finish
