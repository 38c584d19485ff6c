# it_result_files.sh - no result overwrites another, and every result says
# which servers it really ran on.
#
# 1. Two scenarios with one name in one invocation (two files, and the first
#    file again): each result gets its own .hgrm, .timeline.tsv and plots
#    (the later ones run as <name>-2, <name>-3), and summary.json points at
#    each result's own files.
# 2. One invocation starts one ZooKeeper ensemble per size asked for, with
#    the force_sync of the first scenario asking for that size: a scenario
#    that asked for another force_sync reports what it really ran on, and a
#    redlock result the masters it used.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/a.yaml" <<'YAML'
name: same
impls: [redis-lua]
clients: 2
run: {ops_per_client: 20, max_duration: 30s}
lock: {key: same-lock, ttl: 2s, wait: 5s, retry_interval: 2ms}
workload: {kind: counter, business: 1ms}
expect: {"*": safe}
YAML
sed 's/ops_per_client: 20/ops_per_client: 35/' "$D/a.yaml" > "$D/b.yaml"
"$LOCKLAB" run "$D/a.yaml" "$D/b.yaml" "$D/a.yaml" --out "$WORK/r1" --quiet 2> "$WORK/err1"
expect_eq "1: exit code" "$?" 0
check "1: the renaming is said on stderr" grep -q "runs as 'same-2'" "$WORK/err1"
S=$WORK/r1/latest/summary.json
R=$WORK/r1/latest/redis-lua
for scn in same same-2 same-3; do
    expect_eq "1: $scn has its own file stem" "$(jget "$S" "results.scenario=$scn.files")" "$scn"
    check "1: $scn: its .hgrm files exist" test -s "$R/$scn.acquire.hgrm" -a -s "$R/$scn.hold.hgrm"
done
# each file holds its own result: 40, 70 and 40 critical sections
expect_eq "1: same's timeline holds its 40 grants" "$(grep -vc '^#' "$R/same.timeline.tsv")" 40
expect_eq "1: same-2's timeline holds its 70 grants" "$(grep -vc '^#' "$R/same-2.timeline.tsv")" 70
expect_eq "1: same-3's timeline holds its 40 grants" "$(grep -vc '^#' "$R/same-3.timeline.tsv")" 40
expect_eq "1: same-2's hold histogram counts 70" \
    "$(jget "$S" results.scenario=same-2.latency_us.hold.count)" 70
if command -v gnuplot >/dev/null; then
    check "1: plots for every one" test -s "$WORK/r1/latest/same-latency.png" -a \
        -s "$WORK/r1/latest/same-2-latency.png" -a -s "$WORK/r1/latest/same-3-latency.png"
fi

# a name equal to an earlier sweep step's file stem, and one design twice
cat > "$D/sw.yaml" <<'YAML'
name: sw
impls: [redis-lua]
clients: [1, 2]
run: {ops_per_client: 5, max_duration: 30s}
expect: {"*": safe}
YAML
printf 'name: sw-hot-2\nimpls: [redis-lua]\nclients: 3\nrun: {ops_per_client: 7}\nexpect: {"*": safe}\n' > "$D/swh.yaml"
run_ok "1b" "$D/sw.yaml" "$D/swh.yaml"
R=$WORK/results/latest/redis-lua
expect_eq "1b: the sweep step keeps its 10 grants" "$(grep -vc '^#' "$R/sw-hot-2.timeline.tsv")" 10
expect_eq "1b: the scenario named like it runs apart, 21 grants" "$(grep -vc '^#' "$R/sw-hot-2-2.timeline.tsv")" 21
"$LOCKLAB" run "$D/a.yaml" --impl redis-lua,redis-lua --out "$WORK/r-dup" --quiet --no-plot 2>/dev/null
expect_eq "1c: one design twice in --impl is a usage error" "$?" 2

cat > "$D/zk-nosync.yaml" <<'YAML'
name: zk-nosync
impls: [zk-sequential, redlock]
clients: 2
backends: {zookeeper: {ensemble: 1, force_sync: false, session_timeout: 4s}, redis: {topology: independent, masters: 3}}
run: {ops_per_client: 5, max_duration: 30s}
lock: {key: zs, ttl: 2s, wait: 5s, retry_interval: 2ms}
workload: {kind: counter, business: 1ms}
expect: {"*": safe}
YAML
sed -e 's/zk-nosync/zk-sync/; s/force_sync: false/force_sync: true/; s/session_timeout: 4s/session_timeout: 6s/' \
    -e 's/zk-sequential, redlock/zk-sequential, redis-lua/' "$D/zk-nosync.yaml" > "$D/zk-sync.yaml"
run_ok "2" "$D/zk-nosync.yaml" "$D/zk-sync.yaml"
z=results.scenario=zk-sync
expect_eq "2: the second scenario ran on the one ensemble started" "$(jget "$S" $z.servers.zookeeper.ensemble)" 1
expect_eq "2: ... with the first one's forceSync, not its own" "$(jget "$S" $z.servers.zookeeper.force_sync)" false
expect_eq "2: its own session timeout" "$(jget "$S" $z.servers.zookeeper.session_timeout_ms)" 6000
expect_eq "2: embedded" "$(jget "$S" $z.servers.zookeeper.external)" false
expect_eq "2: a ZooKeeper result names no Redis" "$(jget "$S" $z.servers.redis)" "<missing>"
expect_eq "2: redlock ran on independent masters" \
    "$(jget "$S" results.impl=redlock.servers.redis.topology)" independent
expect_eq "2: ... on 3 of them" "$(jget "$S" results.impl=redlock.servers.redis.masters)" 3
expect_eq "2: redis-lua on the single lock store" \
    "$(jget "$S" results.impl=redis-lua.servers.redis.topology)" single
expect_no_orphans "after the runs"
finish
