# it_partition.sh - hosts and partitions (harness/net/): a scenario places
# Redis and its clients on hosts of their own (network namespaces the run
# makes); a partition cuts them apart and a probe shows it (across: no
# answer or a reset; inside a side: connected), then heals; a one-way
# reject cut; a partition whose side names a server no host holds is not
# `done`; bad hosts are refused before anything starts; and after a
# SIGKILL of locklab mid-partition no namespace, link, holder or server of
# the run is left, and the next run removes the temporary folder it left.
. "$(dirname "$0")/lib.sh"

need_hosts

D=$WORK
OUT=$WORK/results
# the run's own namespaces (other runs on this machine may have theirs):
# those of locklab's children that are not locklab's own namespace
LAB_NS=$(readlink /proc/$$/ns/net | tr -dc 0-9)
runns() { for c in $(pgrep -P "$1"); do readlink "/proc/$c/ns/net"; done | tr -dc '0-9\n' |
          sort -u | grep -vx "$LAB_NS"; }
alive() { lsns -t net -n -o NS 2>/dev/null | tr -d ' ' | grep -xF -f <(printf '%s\n' $1) | wc -l; }

cat > "$D/part.yaml" <<'YAML'
name: part
impls: [redis-lua]
clients: 3
run: {max_duration: 4s}
lock: {ttl: 1s, wait: 500ms, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 5ms}
hosts:
  h1: [redis, client:0]
  h2: [client:1]
  h3: [client:2]
faults:
  - {at: 1s, action: partition, groups: [[h1], [h2, h3]], duration: 1500ms}
YAML
"$LOCKLAB" run "$D/part.yaml" --out "$OUT" --no-plot > "$D/part.out" 2> "$D/part.err"
expect_eq "a run on three hosts ends" "$?" 0
S=$OUT/latest/summary.json
F=results.0.faults.0
expect_eq "the partition is done" "$(jget "$S" $F.outcome)" done
expect_eq "... its sides" "$(jget "$S" $F.hit)" "h1 | h2,h3"
NOTE=$(jget "$S" $F.note)
echo "$NOTE"
check "... a probe across the cut got no answer" grep -q "across h1->h2 no answer" <<< "$NOTE"
check "... a probe inside a side connected" grep -q "inside h2->h3 connected" <<< "$NOTE"
check "... healed, a probe across connects again" grep -q "healed: h1->h2 connected" <<< "$NOTE"
CUT=$(jget "$S" $F.phases_ms.cut)
HEALED=$(jget "$S" $F.phases_ms.healed)
in_range "... cut 1 s after the start barrier (ms)" "$CUT" 1000 1400
in_range "... healed its duration later (ms)" "$(awk -v a="$CUT" -v b="$HEALED" 'BEGIN{print b-a}')" 1500 1900
SETUP=$(sed -n 's/^locklab: 3 hosts up in \([0-9.]*\) ms$/\1/p' "$D/part.err")
in_range "hosts set up (ms)" "$SETUP" 1 2000

# one-way, reject: what h1 sends is lost at once (a reset), h2 still reaches h1
sed -e 's/name: part/name: oneway/' \
    -e 's/groups: \[\[h1\], \[h2, h3\]\]/groups: [[h1], [h2]], direction: one-way, mode: reject/' \
    "$D/part.yaml" > "$D/oneway.yaml"
"$LOCKLAB" run "$D/oneway.yaml" --out "$OUT" --quiet --no-plot >/dev/null 2>&1
expect_eq "a one-way reject partition ends" "$?" 0
expect_eq "... done" "$(jget "$S" $F.outcome)" done
check "... the probe across was refused (a reset)" \
    grep -q "across h1->h2 refused" <<< "$(jget "$S" $F.note)"

# a side naming a server that runs on no host: skipped, never done
sed -e 's/name: part/name: nohost/' -e 's/  h1: \[redis, client:0\]/  h1: [client:0]/' \
    -e 's/groups: \[\[h1\], \[h2, h3\]\]/groups: [[redis], [h2, h3]]/' \
    "$D/part.yaml" > "$D/nohost.yaml"
"$LOCKLAB" run "$D/nohost.yaml" --out "$OUT" --quiet --no-plot >/dev/null 2>&1
expect_eq "a partition of a server on no host" "$(jget "$S" $F.outcome)" skipped

# bad input: exit 2, nothing started
printf 'name: bad\nimpls: [redis-lua]\nhosts: {h1: [client:7]}\n' > "$D/bad1.yaml"
printf 'name: bad\nimpls: [redis-lua]\nfaults: [{at: 1s, action: partition, isolate: h1, duration: 1s}]\n' > "$D/bad2.yaml"
printf 'name: bad\nimpls: [redis-lua]\nhosts: {h1: [client:0]}\nfaults: [{at: 1s, action: partition, groups: [[h1]], duration: 1s}]\n' > "$D/bad3.yaml"
printf 'name: bad\nimpls: [zk-sequential]\nbackends: {zookeeper: {ensemble: 3}}\nhosts: {h1: [zookeeper:3]}\n' > "$D/bad4.yaml"
for b in bad1 bad2 bad3 bad4; do
    "$LOCKLAB" run "$D/$b.yaml" --out "$OUT" --quiet --no-plot > /dev/null 2> "$D/$b.err"
    expect_eq "$b refused with exit 2" "$?" 2
done
check "... client:7 of 1 client named" grep -q "unknown member 'client:7'.*from 0 to 0" "$D/bad1.err"
check "... zookeeper:3 of an ensemble of 3" grep -q "bad4.yaml:4:.*'zookeeper:3'.*from 0 to 2" "$D/bad4.err"
check "... a partition without hosts named" grep -q "declare them" "$D/bad2.err"
check "... one side is no partition" grep -q "two sides or more" "$D/bad3.err"

# SIGKILL mid-partition: nothing of the run is left
sed -e 's/name: part/name: killed/' -e 's/max_duration: 4s/max_duration: 30s/' \
    -e 's/duration: 1500ms/duration: 25s/' "$D/part.yaml" > "$D/killed.yaml"
LOCKLAB_PROGRESS=1 "$LOCKLAB" run "$D/killed.yaml" --out "$OUT" --no-plot >/dev/null \
    2> "$D/killed.err" &
LP=$!
for _ in $(seq 1 100); do
    [ "$(runns $LP | wc -l)" -ge 4 ] && ip -br link | grep -q "^locklab$LP" && break
    sleep 0.05
done
# the kill comes while the cut is on: the fault engine has said it fired
check "the cut fired before the kill" wait_for 30 fault_line "$D/killed.err" 1 partition fired
RUNNS=$(runns $LP)
SUBNET=$(ip -br addr show "locklab$LP" | grep -oE '198\.1[89]\.[0-9]+\.' | head -1)
expect_eq "four namespaces (three hosts, the switch) while it runs" "$(grep -c . <<< "$RUNNS")" 4
check "... and its link in locklab's namespace" bash -c "ip -br link | grep -q '^locklab$LP'"
kill -9 $LP
wait $LP 2>/dev/null
for _ in $(seq 1 50); do
    [ "$(alive "$RUNNS")" = 0 ] && ! ip -br link | grep -q "^locklab$LP" && break
    sleep 0.1
done
expect_eq "after SIGKILL: no namespace of the run" "$(alive "$RUNNS")" 0
# which processes still hold one (seen once under make test's -j3, never alone)
if [ "$(alive "$RUNNS")" != 0 ]; then
    for p in /proc/[0-9]*; do
        ns=$(readlink "$p/ns/net" 2>/dev/null | tr -dc 0-9)
        grep -qxF "$ns" <<< "$RUNNS" && ps -o pid=,ppid=,stat=,etimes=,cmd= -p "${p#/proc/}"
    done
fi
expect_eq "... no link of the run" "$(ip -br link | grep -c "^locklab$LP")" 0
expect_eq "... no server on a host address of its ($SUBNET)" "$(pgrep -f "redis-server.*${SUBNET:-none}" | wc -l)" 0
expect_eq "... no ip netns mount" "$(ip netns list | wc -l)" 0
LEFT=$(ls -d "${TMPDIR:-/tmp}"/locklab-$LP-* 2>/dev/null | wc -l)
expect_eq "... its temporary folder is left behind" "$LEFT" 1
# a folder still held (its owner file locked) by a live process that is
# not called locklab (the test programs start servers too) is no leftover
sleep 60 &
HOLDER=$!
HELD="${TMPDIR:-/tmp}/locklab-$HOLDER-heldxx"
mkdir -p "$HELD" && : > "$HELD/owner"
flock "$HELD/owner" sleep 60 &
FL=$!
for _ in $(seq 1 50); do flock -n "$HELD/owner" true 2>/dev/null || break; sleep 0.05; done
"$LOCKLAB" run "$D/part.yaml" --out "$OUT" --quiet --no-plot >/dev/null 2>&1 &
LP2=$!
wait $LP2
expect_eq "the next run removes it" "$(ls -d "${TMPDIR:-/tmp}"/locklab-$LP-* 2>/dev/null | wc -l)" 0
check "... but not a folder another live process holds" test -f "$HELD/owner"
kill $FL $HOLDER 2>/dev/null
wait $FL $HOLDER 2>/dev/null
rm -rf "$HELD"
expect_eq "... and leaves no link itself" "$(ip -br link | grep -c "^locklab$LP2")" 0
finish
