# it_groups.sh - client groups (run.clients_per_process): many logical
# clients in one process on an event loop, judged by the same oracle.
#
#  - a design without asynchronous hooks in a grouped scenario is a load
#    error (exit 2) at its impls item, naming it; so is a ZooKeeper design
#    with lock.on_disconnect: abort, and redisson without a lease (its
#    watchdog runs one process per client only);
#  - redis-lua, 2,000 clients in 4 processes on one hot key: safe, the
#    shared counter exact and every release its own (the oracle and the
#    counter would both see two holders), and every latency in the report
#    (a group keeps one set of histograms for its clients);
#  - zk-sequential and zk-ephemeral (a ZooKeeper session per logical
#    client, the lab's own wire session on the group's loop), 64 clients
#    in 2 processes on one hot key: safe, the counter exact; zk-sequential's
#    queue wakes one waiter per release, zk-ephemeral's herd many;
#  - a zk-sequential group of 32 sessions runs on a handful of threads
#    (the C client would have 2 per session: 64 and more);
#  - redisson, 64 clients in 4 groups of 16 on one hot key: safe, the
#    counter exact (each logical client is its own owner "<uuid>:<thread
#    id>"; a shared one would let the hash lock grant two at once), and as
#    one Redisson JVM per group, one pub/sub connection per group: a release
#    reaches at most 4 subscribers (one process per client: up to 63), and
#    woken handoffs are split;
#  - redis-set-del with a TTL shorter than the business time, 64 clients in
#    4 groups of 16: the oracle catches the violation; a pause aimed at
#    client 5 stops its whole process, and the record names the group's
#    clients;
#  - an open loop in groups (arrival:) keeps its schedule: 100/s over 2 s
#    on one hot key (capacity ~200/s) is 200 starts, few of them late.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/blocking.yaml" <<'YAML'
name: groups-blocking
impls: [redis-lua,
        mysql-get-lock]
clients: 8
run: {clients_per_process: 4}
YAML
"$LOCKLAB" run "$D/blocking.yaml" --out "$WORK/results" --quiet > "$WORK/out.txt" 2>&1
expect_eq "a blocking design in groups: exit code" "$?" 2
check "the error is at its impls item and names it" \
    grep -q "blocking.yaml:3:9: mysql-get-lock cannot run in client groups" "$WORK/out.txt"
cat > "$D/zkabort.yaml" <<'YAML'
name: groups-zk-abort
impls: [zk-sequential]
clients: 8
run: {clients_per_process: 4}
lock: {on_disconnect: abort}
YAML
"$LOCKLAB" run "$D/zkabort.yaml" --out "$WORK/results" --quiet > "$WORK/out.txt" 2>&1
expect_eq "lock.on_disconnect: abort in groups: exit code" "$?" 2
check "the error is at the design's impls item and names the setting" \
    grep -q "zkabort.yaml:2:9: lock.on_disconnect: abort cannot run in client groups; use run.clients_per_process 1" "$WORK/out.txt"
cat > "$D/rsnwd.yaml" <<'YAML'
name: groups-redisson-watchdog
impls: [redisson]
clients: 8
run: {clients_per_process: 4}
YAML
"$LOCKLAB" run "$D/rsnwd.yaml" --out "$WORK/results" --quiet > "$WORK/out.txt" 2>&1
expect_eq "redisson's watchdog in groups: exit code" "$?" 2
check "the error is at its impls item and asks for a lease" \
    grep -q "rsnwd.yaml:2:9: redisson's watchdog cannot run in client groups: give lock.ttl (its lease) or use run.clients_per_process 1" "$WORK/out.txt"

cat > "$D/safe.yaml" <<'YAML'
name: groups-safe
impls: [redis-lua]
clients: 2000
run: {ops_per_client: 3, max_duration: 30s, clients_per_process: 500}
lock: {key: gsafe, ttl: 10s, wait: 20s, retry_interval: 5ms, retry: backoff}
workload: {kind: counter}
expect: {"*": safe}
YAML
cat > "$D/broken.yaml" <<'YAML'
name: groups-broken
impls: [redis-set-del]
clients: 64
run: {ops_per_client: 4, max_duration: 30s, clients_per_process: 16}
lock: {key: gbroken, ttl: 20ms, wait: 10s, retry_interval: 2ms}
workload: {kind: counter, business: 40ms}
faults:
  - {at: 200ms, action: pause, target: "client:5", duration: 300ms}
expect: {"*": violation}
YAML
cat > "$D/rsn.yaml" <<'YAML'
name: groups-redisson
impls: [redisson]
clients: 64
run: {ops_per_client: 5, max_duration: 30s, clients_per_process: 16}
lock: {key: grsn, ttl: 10s, wait: 20s}
workload: {kind: counter, business: 1ms, think: 2ms}
expect: {"*": safe}
YAML
cat > "$D/zk.yaml" <<'YAML'
name: groups-zk
impls: [zk-sequential, zk-ephemeral]
clients: 64
run: {ops_per_client: 5, max_duration: 30s, clients_per_process: 32}
lock: {key: gzk, wait: 20s}
workload: {kind: counter}
expect: {"*": safe}
YAML
"$LOCKLAB" run "$D/safe.yaml" "$D/rsn.yaml" "$D/broken.yaml" "$D/zk.yaml" --out "$WORK/results" --quiet --no-plot \
    > "$WORK/run.txt" 2>&1
expect_eq "both runs met their expectations" "$?" 0
S=$WORK/results/latest/summary.json
r=results.impl=redis-lua
expect_exact "redis-lua, 2,000 clients in 4 processes" $r 6000
expect_eq "redis-lua: every client ran" "$(jget "$S" $r.clients)" 2000
for h in acquire hold release; do # one set of histograms a group: every value in it
    expect_eq "redis-lua: $h latencies recorded (4 groups' sets)" \
        "$(jget "$S" $r.latency_us.$h.count)" 6000
done
r=results.impl=redisson
expect_exact "redisson, 64 clients in 4 groups of 16" $r 320
expect_eq "redisson: every client ran" "$(jget "$S" $r.clients)" 64
in_range "redisson: pub/sub messages per release (one subscription per group: at most 4)" \
    "$(jget "$S" $r.wakeups_per_release)" 0.01 4
expect_gt "redisson: woken handoffs split in groups" "$(jget "$S" $r.handoff_split.handoffs)" 0
r=results.impl=redis-set-del
expect_violation "redis-set-del in groups, TTL < business" $r
expect_eq "the pause landed" "$(jget "$S" $r.faults.0.outcome)" done
hit=$(jget "$S" $r.faults.0.hit)
check "the pause's record names the whole group of client 5 ($hit)" \
    grep -qx 'clients 0-15 (group 0, pid [0-9]*)' <<< "$hit"
r=results.impl=zk-sequential
expect_exact "zk-sequential, 64 clients in 2 processes" $r 320
expect_eq "zk-sequential: every client ran" "$(jget "$S" $r.clients)" 64
expect_eq "zk-sequential: acquire latencies recorded (2 groups' sets)" \
    "$(jget "$S" $r.latency_us.acquire.count)" 320
in_range "zk-sequential: watch events per release (the queue wakes one)" \
    "$(jget "$S" $r.wakeups_per_release)" 0.9 1.01
r=results.impl=zk-ephemeral
expect_exact "zk-ephemeral, 64 clients in 2 processes" $r 320
expect_gt "zk-ephemeral: watch events per release (every waiter wakes)" \
    "$(jget "$S" $r.wakeups_per_release)" 3

cat > "$D/zkthreads.yaml" <<'YAML'
name: groups-zk-threads
impls: [zk-sequential]
clients: 32
run: {max_duration: 1s, clients_per_process: 32}
lock: {keys: per-client, wait: 5s}
workload: {kind: counter}
expect: {"*": safe}
YAML
"$LOCKLAB" run "$D/zkthreads.yaml" --out "$WORK/results" --quiet --no-plot > "$WORK/zkt.txt" 2>&1 &
lab=$!
# The group: locklab's child holding the 32 sessions' sockets; its threads
# then (found within the run, or the check fails).
threads=none
end=$((SECONDS + 20))
while [ "$threads" = none ] && kill -0 "$lab" 2>/dev/null && [ $SECONDS -lt $end ]; do
    for p in $(pgrep -P "$lab" -x locklab); do
        socks=$(ls -l "/proc/$p/fd" 2>/dev/null | grep -c 'socket:')
        if [ "$socks" -ge 32 ]; then
            threads=$(awk '/^Threads:/ {print $2}' "/proc/$p/status" 2>/dev/null)
            break
        fi
    done
    [ "$threads" = none ] && sleep 0.05
done
wait "$lab"
expect_eq "a zk group of 32 sessions ran safely" "$?" 0
in_range "a zk group of 32 sessions: its threads (the C client's would be 64 and more)" \
    "$threads" 1 4

cat > "$D/open.yaml" <<'YAML'
name: groups-open
impls: [redis-lua]
clients: 64
run: {max_duration: 2s, clients_per_process: 32}
lock: {key: gopen, ttl: 5s, wait: 5s, retry_interval: 1ms}
workload: {kind: counter, business: 5ms}
arrival: {rate: 100/s, distribution: constant}
expect: {"*": safe}
YAML
"$LOCKLAB" run "$D/open.yaml" --out "$WORK/results" --quiet --no-plot > "$WORK/open.txt" 2>&1
expect_eq "an open loop in groups met its expectation" "$?" 0
S=$WORK/results/latest/summary.json
r=results.impl=redis-lua
in_range "open loop in groups: starts on the 100/s schedule over 2 s" \
    "$(jget "$S" $r.arrival.starts)" 190 201
in_range "open loop in groups: late starts (of 200, under capacity)" \
    "$(jget "$S" $r.arrival.late)" 0 40
expect_no_orphans "after the group runs"
finish
