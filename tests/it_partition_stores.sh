# it_partition_stores.sh - every store's servers placed on hosts (issue 22):
# a ZooKeeper ensemble of 3 and an etcd cluster of 3, one member of each on
# each of three hosts, MariaDB on the first, a client on each. The members
# must find each other across the hosts (the run starts only once each
# ensemble has a leader that every member follows), each server runs in
# its host's own network namespace and binds its host's address (seen
# from outside while the run goes on), and one design per store is `safe`
# through three partitions, each `done` with its probes recorded: h1 (a
# member of each store, MariaDB, client:0) isolated, then the two shapes
# that need no listing, majority-minority and bridge, whose sides a fixed
# seed makes the same every time. The bad shapes are it_bad_input's.
. "$(dirname "$0")/lib.sh"

need_hosts

D=$WORK
OUT=$WORK/results
cat > "$D/stores.yaml" <<'YAML'
name: stores
impls: [zk-sequential, mysql-get-lock, etcd-lease]
clients: 3
run: {max_duration: 3500ms}
lock: {ttl: 2s, wait: 8s, retry_interval: 10ms} # waits through every cut: safety, not timeouts
workload: {kind: stock, stock: 100000, business: 5ms}
backends:
  zookeeper: {ensemble: 3, session_timeout: 4s}
  etcd: {members: 3}
hosts:
  h1: [zookeeper:0, etcd-member:0, mysql, client:0]
  h2: [zookeeper:1, etcd-member:1, client:1]
  h3: [zookeeper:2, etcd-member:2, client:2]
faults:
  - {at: 300ms, action: partition, isolate: h1, duration: 700ms}
  - {at: 1300ms, action: partition, shape: majority-minority, seed: 7, duration: 700ms}
  - {at: 2300ms, action: partition, shape: bridge, seed: 7, duration: 700ms}
expect:
  "*": not-exercised # 5 ms sections: no cut costs a holder its lock
YAML
T0=$SECONDS
"$LOCKLAB" run "$D/stores.yaml" --out "$OUT" --quiet --no-plot > "$D/stores.out" 2>&1 &
LP=$!

# while it runs: each server in a host's namespace, on its host's address
ns() { readlink "/proc/$1/ns/net" 2>/dev/null; }
srv() { pgrep -f -- "$1.*$WORK" | sort -n; }
for _ in $(seq 1 600); do
    [ "$(srv 'QuorumPeerMain' | wc -l)" -ge 3 ] && [ "$(srv 'etcd --name' | wc -l)" -ge 3 ] &&
        [ "$(srv 'mariadbd.*--bind-address' | wc -l)" -ge 1 ] && break
    sleep 0.05
done
LAB_NS=$(ns $$)
ZK_NS=$(for p in $(srv QuorumPeerMain); do ns "$p"; done | sort -u)
ETCD_NS=$(for p in $(srv 'etcd --name'); do ns "$p"; done | sort -u)
MARIA=$(srv 'mariadbd.*--bind-address' | head -1)
expect_eq "three ZooKeeper members, each in a namespace of its own" "$(grep -c . <<< "$ZK_NS")" 3
check "... none in locklab's ($LAB_NS)" bash -c "! grep -qxF '$LAB_NS' <<< '$ZK_NS'"
expect_eq "the etcd members in the same three namespaces" "$ETCD_NS" "$ZK_NS"
MARIA_NS=$(ns "$MARIA")
check "MariaDB in a host's namespace ($MARIA_NS)" grep -qxF "${MARIA_NS:-none}" <<< "$ZK_NS"
ADDRS=$(grep -h '^clientPortAddress=' "$TMPDIR"/locklab-*/zookeeper-*/zoo.cfg 2>/dev/null |
        sed 's/.*=//' | sort -u | tr '\n' ' ')
check "ZooKeeper binds three host addresses (.10, .11, .12): $ADDRS" \
    grep -Eq '^198\.1[89]\.[0-9]+\.10 198\.1[89]\.[0-9]+\.11 198\.1[89]\.[0-9]+\.12 $' <<< "$ADDRS"
PEERS=$(grep -h '^server\.' "$TMPDIR"/locklab-*/zookeeper-1-*/zoo.cfg 2>/dev/null | sed 's/.*=//;s/:.*//' | tr '\n' ' ')
expect_eq "... and its quorum's peers are those addresses" "$PEERS" "$ADDRS"
check "etcd listens and advertises on host addresses" \
    bash -c "tr '\0' ' ' < /proc/$(srv 'etcd --name' | head -1)/cmdline | grep -Eq -- '--listen-peer-urls http://198\.1[89]\.[0-9]+\.1[0-2]:.*--initial-cluster m0=http://198\.1[89]'"
check "MariaDB binds h1's address" \
    bash -c "tr '\0' ' ' < /proc/$MARIA/cmdline | grep -Eq -- '--bind-address=198\.1[89]\.[0-9]+\.10 '"
wait $LP
expect_eq "the run ends, every design as expected" "$?" 0 || cat "$D/stores.out"
echo "run: $((SECONDS - T0)) s"
S=$OUT/latest/summary.json
expect_gt "ZooKeeper's start on three hosts took (ms)" "$(jget "$S" results.impl=zk-sequential.servers.zookeeper.start_ms)" 0
expect_gt "etcd's start on three hosts took (ms)" "$(jget "$S" results.impl=etcd-lease.servers.etcd.start_ms)" 0
for impl in zk-sequential mysql-get-lock etcd-lease; do
    R=results.impl=$impl
    expect_eq "$impl: verdict" "$(jget "$S" "$R.verdict")" not-exercised
    expect_eq "$impl: no overlap" "$(jget "$S" "$R.safety.violations")" 0
    for f in 0 1 2; do
        expect_eq "$impl: partition $f done" "$(jget "$S" $R.faults.$f.outcome)" done
    done
    NOTE0=$(jget "$S" $R.faults.0.note)
    expect_eq "$impl: h1 isolated" "$(jget "$S" $R.faults.0.hit)" "h1 | h2,h3"
    check "... nothing across: $NOTE0" grep -q "across h1->h2 no answer" <<< "$NOTE0"
    check "... the others see each other" grep -q "inside h2->h3 connected" <<< "$NOTE0"
    NOTE1=$(jget "$S" $R.faults.1.note)
    expect_eq "$impl: majority-minority, seed 7" "$(jget "$S" $R.faults.1.hit)" "h2 | h1,h3"
    check "... its seed noted, cut across, whole inside: $NOTE1" \
        grep -q "seed 7; across h2->h1 no answer.*; inside h1->h3 connected" <<< "$NOTE1"
    NOTE2=$(jget "$S" $R.faults.2.note)
    expect_eq "$impl: bridge, seed 7" "$(jget "$S" $R.faults.2.hit)" "h3 | h1 (bridge h2)"
    check "... cut across, the bridge reaching both: $NOTE2" \
        grep -q "across h3->h1 no answer.*bridge h2->h3 connected.*bridge h2->h1 connected" <<< "$NOTE2"
done
check "no namespace of the run left" bash -c "[ -z \"\$(ip -br link | grep '^locklab$LP')\" ]"
expect_no_orphans "after the run"
finish
