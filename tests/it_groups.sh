# it_groups.sh - client groups (run.clients_per_process): many logical
# clients in one process on an event loop, judged by the same oracle.
#
#  - designs without asynchronous hooks in a grouped scenario are a load
#    error (exit 2) at the first one's impls item, naming them all; so is a ZooKeeper design
#    with lock.on_disconnect: abort, and redisson without a lease (its
#    watchdog runs one process per client only);
#  - redis-lua, 2,000 clients in 4 processes on one hot key: safe, the
#    shared counter exact and every release its own (the oracle and the
#    counter would both see two holders);
#  - redis-watchdog and redis-reentrant, 8 clients in 2 groups, holding
#    350 ms on a 200 ms TTL: safe, the counter exact, every hold renewed
#    by its client's timer on the loop; redis-get-del in the same groups:
#    safe and exact (the designs once one process per client only);
#  - zk-sequential, zk-ephemeral and zk-semaphore (a ZooKeeper session per logical
#    client, the lab's own wire session on the group's loop), 64 clients
#    in 2 processes on one hot key: safe, the counter exact; zk-sequential's
#    queue wakes one waiter per release, zk-ephemeral's herd many;
#  - redlock (5 independent masters, a hiredis context per master per
#    logical client), 16 clients in one group on one hot key: safe, the
#    counter exact, one process, and the round trips exactly what the
#    blocking design sends (5 script loads per client at open, 5 SETs per
#    attempt, 5 compare-and-deletes after each failed one and per release):
#    a fan-out to fewer masters, or one that skipped the unlock, counts
#    otherwise; then 8 clients in one group on keys of their own with one
#    master stopped and another paused for 300 ms: every acquire granted
#    on the remaining majority, none in error, and those during the pause
#    took the paused master's 50 ms deadline, not the pause;
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
#    client 5 holds that client alone (its group driver shares nothing
#    between clients), and the record names it and its group;
#  - etcd-lease (etcd's gateway over libcurl's multi interface on the
#    group's loop), 16 clients in one group on one hot key: safe, the
#    counter exact, one client process; on a key per client every cycle
#    costs the blocking design's 3 requests (grant, txn, txn), no more and
#    no fewer; with a business time longer than its 1 s lease the oracle
#    catches two holders across 2 groups;
#  - etcd-mutex and etcd-lock-api (a session lease per client, kept alive
#    by a timer on the loop): the same hot key, safe and exact; on a key
#    per client every cycle costs the blocking design's 2 requests, and
#    every session one grant and one revoke (the group's close gives the
#    sessions back, as a blocking close does); holders of a 700 ms
#    business and waiters with a 20 s budget at a 1 s stop: the stop ends
#    the waits (at most the holders', no waiter granted one after another);
#  - pg-advisory and pg-for-update (a libpq session per logical client, on
#    libpq's non-blocking API), 16 clients in one process on one hot key:
#    safe, the counter exact; pg-advisory's round trips exactly the
#    blocking design's (lock and unlock a cycle, one SET lock_timeout a
#    session); a holder paused past the run's end (its whole group) while
#    the other group waits in the server's queue with a 400 ms
#    lock_timeout: the waits time out (55P03 is a timeout, not an error),
#    and at the stop the waiting group gives its waits up (closes their
#    sessions) rather than be granted one after the other when the holder
#    goes on;
#  - an open loop in groups (arrival:) keeps its schedule: 100/s over 2 s
#    on one hot key (capacity ~200/s) is 200 starts, few of them late;
#  - the MariaDB designs on Connector/C's non-blocking calls (one embedded
#    server for all four runs): mysql-get-lock and mysql-for-update, 48
#    clients in 2 processes on one hot key, safe and the counter exact; on
#    per-client keys each cycle is exactly the blocking design's statements
#    (GET_LOCK + RELEASE_LOCK, BEGIN + FOR UPDATE + COMMIT, INSERT +
#    DELETE); mysql-unique with a lease shorter than the business time is
#    caught by the oracle; a run that stops with clients waiting in
#    GET_LOCK ends them without an error or a kill.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/blocking.yaml" <<'YAML'
name: groups-blocking
impls: [redis-lua,
        none, local-mutex]
clients: 8
run: {clients_per_process: 4}
workload: {kind: stock}
YAML
"$LOCKLAB" run "$D/blocking.yaml" --out "$WORK/results" --quiet > "$WORK/out.txt" 2>&1
expect_eq "blocking designs in groups: exit code" "$?" 2
check "the error is at the first one's impls item and names them all" \
    grep -q "blocking.yaml:3:9: none, local-mutex cannot run in client groups" "$WORK/out.txt"
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
cat > "$D/renew.yaml" <<'YAML'
name: groups-renew
impls: [redis-watchdog, redis-reentrant]
clients: 8
run: {ops_per_client: 1, max_duration: 30s, clients_per_process: 4}
lock: {key: grenew, ttl: 200ms, wait: 20s, retry_interval: 5ms}
workload: {kind: counter, business: 350ms}
expect: {"*": safe}
YAML
cat > "$D/getdel.yaml" <<'YAML'
name: groups-get-del
impls: [redis-get-del]
clients: 8
run: {ops_per_client: 3, max_duration: 30s, clients_per_process: 4}
lock: {key: ggetdel, ttl: 10s, wait: 20s, retry_interval: 5ms}
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
impls: [zk-sequential, zk-ephemeral, zk-semaphore]
clients: 64
run: {ops_per_client: 5, max_duration: 30s, clients_per_process: 32}
lock: {key: gzk, wait: 20s}
workload: {kind: counter}
expect: {"*": safe}
YAML
# one client alone in its group: nothing but its own replies wakes the
# loop, so a step that waits for the loop's 50 ms tick shows (a reply
# handed over in deferred work armed a timer the loop did not see before
# it slept: 17-19 cycles a second instead of about a thousand)
cat > "$D/zkone.yaml" <<'YAML'
name: groups-zk-one
impls: [zk-sequential]
clients: 1
run: {max_duration: 1s, clients_per_process: 16}
lock: {key: gzkone, keys: per-client}
workload: {kind: counter}
expect: {"*": safe}
YAML
cat > "$D/etcd.yaml" <<'YAML'
name: groups-etcd
impls: [etcd-lease, etcd-mutex, etcd-lock-api]
clients: 16
run: {ops_per_client: 3, max_duration: 20s, clients_per_process: 16}
lock: {key: getcd, ttl: 5s, wait: 15s}
workload: {kind: counter}
expect: {"*": safe}
YAML
cat > "$D/etcdpc.yaml" <<'YAML'
name: groups-etcd-pc
impls: [etcd-lease]
clients: 32
run: {max_duration: 500ms, clients_per_process: 32}
lock: {keys: per-client, ttl: 5s, wait: 5s}
workload: {kind: counter}
expect: {"*": safe}
YAML
cat > "$D/etcdsess.yaml" <<'YAML'
name: groups-etcd-sessions
impls: [etcd-mutex, etcd-lock-api]
clients: 32
run: {ops_per_client: 20, max_duration: 20s, clients_per_process: 32}
lock: {keys: per-client, ttl: 5s, wait: 5s}
workload: {kind: counter}
expect: {"*": safe}
YAML
cat > "$D/etcdstop.yaml" <<'YAML'
name: groups-etcd-stop
impls: [etcd-mutex, etcd-lock-api]
clients: 6
run: {max_duration: 1s, clients_per_process: 6}
lock: {key: getcdstop, ttl: 5s, wait: 20s}
workload: {kind: counter, business: 700ms}
expect: {"*": safe}
YAML
cat > "$D/etcdbroken.yaml" <<'YAML'
name: groups-etcd-broken
impls: [etcd-lease]
clients: 8
run: {max_duration: 2s, clients_per_process: 4}
lock: {key: getcdb, ttl: 1s, wait: 5s}
workload: {kind: counter, business: 1800ms}
expect: {"*": violation}
YAML
cat > "$D/pg.yaml" <<'YAML'
name: groups-pg
impls: [pg-advisory, pg-for-update]
clients: 16
run: {ops_per_client: 5, max_duration: 30s, clients_per_process: 16}
lock: {key: gpg, wait: 20s}
workload: {kind: counter, business: 1ms}
expect: {"*": safe}
YAML
cat > "$D/pgstop.yaml" <<'YAML'
name: groups-pg-stop
impls: [pg-advisory]
clients: 8
run: {max_duration: 1s, clients_per_process: 4}
lock: {key: gpgstop, wait: 400ms}
workload: {kind: counter, business: 3s}
faults:
  - {at: 0ms, action: pause, target: holder, duration: 4s}
expect: {"*": blocked}
YAML
"$LOCKLAB" run "$D/safe.yaml" "$D/rsn.yaml" "$D/renew.yaml" "$D/getdel.yaml" "$D/broken.yaml" "$D/zk.yaml" "$D/zkone.yaml" "$D/etcd.yaml" \
    "$D/etcdpc.yaml" "$D/etcdsess.yaml" "$D/etcdstop.yaml" "$D/etcdbroken.yaml" "$D/pg.yaml" "$D/pgstop.yaml" --out "$WORK/results" \
    --quiet --no-plot > "$WORK/run.txt" 2>&1
expect_eq "both runs met their expectations" "$?" 0
S=$WORK/results/latest/summary.json
expect_gt "one ZooKeeper client alone in a group: cycles in 1 s (never waiting for the loop's tick)" \
    "$(jget "$S" results.scenario=groups-zk-one.ops.acquired)" 100
r=results.impl=redis-lua
expect_exact "redis-lua, 2,000 clients in 4 processes" $r 6000
expect_eq "redis-lua: every client ran" "$(jget "$S" $r.clients)" 2000
r=results.impl=redisson
expect_exact "redisson, 64 clients in 4 groups of 16" $r 320
expect_eq "redisson: every client ran" "$(jget "$S" $r.clients)" 64
in_range "redisson: pub/sub messages per release (one subscription per group: at most 4)" \
    "$(jget "$S" $r.wakeups_per_release)" 0.01 4
expect_gt "redisson: woken handoffs split in groups" "$(jget "$S" $r.handoff_split.handoffs)" 0
for impl in redis-watchdog redis-reentrant; do
    r=results.impl=$impl
    expect_exact "$impl, 8 clients in 2 groups, business > TTL" $r 8
    expect_gt "$impl: its holds renewed on the loop" "$(jget "$S" $r.lock_stats.renewals)" 0
done
expect_exact "redis-get-del, 8 clients in 2 groups" results.impl=redis-get-del 24
r=results.impl=redis-set-del
expect_violation "redis-set-del in groups, TTL < business" $r
expect_eq "the pause landed" "$(jget "$S" $r.faults.0.outcome)" done
hit=$(jget "$S" $r.faults.0.hit)
check "the pause's record names client 5 alone, of its group ($hit)" \
    grep -qx 'client 5 (of group 0, pid [0-9]*)' <<< "$hit"
r=results.impl=zk-sequential
expect_exact "zk-sequential, 64 clients in 2 processes" $r 320
expect_eq "zk-sequential: every client ran" "$(jget "$S" $r.clients)" 64
in_range "zk-sequential: watch events per release (the queue wakes one)" \
    "$(jget "$S" $r.wakeups_per_release)" 0.9 1.01
r=results.impl=zk-ephemeral
expect_exact "zk-ephemeral, 64 clients in 2 processes" $r 320
expect_exact "zk-semaphore, 64 clients in 2 processes (its watch taken back on the wire)" \
    results.impl=zk-semaphore 320
expect_gt "zk-ephemeral: watch events per release (every waiter wakes)" \
    "$(jget "$S" $r.wakeups_per_release)" 3
r=results.scenario=groups-etcd,impl=etcd-lease
expect_exact "etcd-lease, 16 clients in one group" $r 48
expect_eq "etcd-lease: one client process" "$(jget "$S" $r.cpu.client_processes)" 1
expect_gt "etcd-lease: waiters woken by their watch" "$(jget "$S" $r.lock_stats.notifications)" 0
r=results.scenario=groups-etcd-pc,impl=etcd-lease
acq=$(jget "$S" $r.ops.acquired)
expect_gt "etcd-lease, a key per client in a group: cycles" "$acq" 32
expect_eq "etcd-lease in a group: 3 requests a cycle, as the blocking design" \
    "$(jget "$S" $r.lock_stats.round_trips)" "$((3 * acq))"
expect_violation "etcd-lease in groups, business longer than the lease" \
    results.scenario=groups-etcd-broken,impl=etcd-lease
for impl in etcd-mutex etcd-lock-api; do
    r=results.scenario=groups-etcd,impl=$impl
    expect_exact "$impl, 16 clients in one group" $r 48
    expect_eq "$impl: one client process" "$(jget "$S" $r.cpu.client_processes)" 1
    r=results.scenario=groups-etcd-sessions,impl=$impl
    expect_eq "$impl, a key per client in a group: every cycle" "$(jget "$S" $r.ops.acquired)" 640
    expect_eq "$impl in a group: 2 requests a cycle + grant and revoke a session, as blocking" \
        "$(jget "$S" $r.lock_stats.round_trips)" "$((2 * 640 + 2 * 32))"
    r=results.scenario=groups-etcd-stop,impl=$impl
    in_range "$impl: the stop ends the group's waits (no grants after it)" \
        "$(jget "$S" $r.ops.acquired)" 1 3
done
expect_gt "etcd-mutex: waiters woken by their watch" \
    "$(jget "$S" results.scenario=groups-etcd,impl=etcd-mutex.lock_stats.notifications)" 0
for impl in pg-advisory pg-for-update; do
    r=results.scenario=groups-pg,impl=$impl
    expect_exact "$impl, 16 clients in one process" $r 80
    expect_eq "$impl: every client ran" "$(jget "$S" $r.clients)" 16
    expect_eq "$impl: one client process" "$(jget "$S" $r.cpu.client_processes)" 1
done
expect_eq "pg-advisory in a group: round trips (2 a cycle + 1 SET lock_timeout a session)" \
    "$(jget "$S" results.scenario=groups-pg,impl=pg-advisory.lock_stats.round_trips)" 176
r=results.scenario=groups-pg-stop,impl=pg-advisory
expect_eq "pg-advisory, holder's group paused: the waits ran out (blocked, no error)" \
    "$(jget "$S" $r.verdict)" blocked
expect_gt "pg-advisory, holder's group paused: lock_timeouts counted" "$(jget "$S" $r.ops.timeouts)" 0
# the paused holder, and at most one waiter whose grant (the holder going on
# at the stop) came in before its group saw the stop, as a blocking client
# takes a result that is in; waits not given up are all granted, one after
# the other (5)
in_range "pg-advisory: at the stop the waiters gave up (grants: the holder's, at most one racing the stop)" \
    "$(jget "$S" $r.ops.acquired)" 1 2
expect_eq "pg-advisory: no client was killed at the end" "$(jget "$S" $r.clients_status.killed)" 0

cat > "$D/redlock.yaml" <<'YAML'
name: groups-redlock
impls: [redlock]
clients: 16
backends: {redis: {topology: single, masters: 5}}
run: {ops_per_client: 10, max_duration: 20s, clients_per_process: 16}
lock: {key: grl, ttl: 5s, wait: 10s, retry_interval: 2ms}
workload: {kind: counter, business: 1ms}
expect: {"*": safe}
YAML
cat > "$D/redlockf.yaml" <<'YAML'
name: groups-redlock-faults
impls: [redlock]
clients: 8
backends: {redis: {topology: single, masters: 5}}
run: {ops_per_client: 8, max_duration: 20s, clients_per_process: 8}
lock: {keys: per-client, ttl: 5s, wait: 10s, retry_interval: 2ms}
workload: {kind: counter, business: 5ms}
faults:
  - {at: 20ms, action: stop, target: "redis-node:1"}
  - {at: 20ms, action: pause, target: "redis-node:3", duration: 300ms}
expect: {"*": not-exercised}
YAML
"$LOCKLAB" run "$D/redlock.yaml" "$D/redlockf.yaml" --out "$WORK/results" --quiet --no-plot \
    > "$WORK/redlock.txt" 2>&1
expect_eq "redlock groups met their expectations" "$?" 0
S=$WORK/results/latest/summary.json
r=results.scenario=groups-redlock
expect_exact "redlock, 16 clients in one group" $r 160
expect_eq "redlock: every client ran" "$(jget "$S" $r.clients)" 16
expect_eq "redlock: one process" "$(jget "$S" $r.cpu.client_processes)" 1
polls=$(jget "$S" $r.lock_stats.polls)
expect_eq "redlock: round trips as the blocking design sends them (5 x 16 + 10 x (160 + $polls polls))" \
    "$(jget "$S" $r.lock_stats.round_trips)" $((5 * 16 + 10 * (160 + polls)))
r=results.scenario=groups-redlock-faults
# a key per client: nobody else asks for a lock the masters' faults could
# take from its holder, so nothing was at stake: not-exercised (this checks
# the group's liveness with masters down, not exclusion)
expect_eq "redlock in a group, a master stopped, another paused: verdict" \
    "$(jget "$S" $r.verdict)" not-exercised
expect_eq "redlock with masters down: no overlap" "$(jget "$S" $r.safety.violations)" 0
expect_eq "redlock with masters down: counter exact" "$(jget "$S" $r.workload.final_value)" 64
expect_eq "redlock with masters down: every release owned" "$(jget "$S" $r.ops.released)" 64
expect_eq "redlock with masters down: no acquire in error" "$(jget "$S" $r.ops.errors)" 0
expect_eq "redlock with masters down: no acquire timed out" "$(jget "$S" $r.ops.timeouts)" 0
expect_eq "redlock: both faults landed" \
    "$(jget "$S" $r.faults.0.outcome),$(jget "$S" $r.faults.1.outcome)" done,done
in_range "redlock: acquires p90 while a master is paused: its 50 ms deadline, not its 300 ms pause (us)" \
    "$(jget "$S" $r.latency_us.acquire.p90)" 45000 400000

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
cat > "$D/my.yaml" <<'YAML'
name: groups-mysql
impls: [mysql-get-lock, mysql-for-update]
clients: 48
run: {ops_per_client: 3, max_duration: 30s, clients_per_process: 24}
lock: {key: gmy, wait: 20s}
workload: {kind: counter}
expect: {"*": safe}
YAML
cat > "$D/mykeys.yaml" <<'YAML'
name: groups-mysql-keys
impls: [mysql-get-lock, mysql-for-update, mysql-unique]
clients: 16
run: {ops_per_client: 5, max_duration: 30s, clients_per_process: 16}
lock: {keys: per-client, ttl: 10s, wait: 5s}
workload: {kind: counter}
expect: {"*": safe}
YAML
cat > "$D/mylease.yaml" <<'YAML'
name: groups-mysql-lease
impls: [mysql-unique]
clients: 6
run: {ops_per_client: 2, max_duration: 30s, clients_per_process: 6}
lock: {key: gmylease, ttl: 20ms, wait: 10s, retry_interval: 2ms}
workload: {kind: counter, business: 60ms}
expect: {"*": violation}
YAML
cat > "$D/mystop.yaml" <<'YAML'
name: groups-mysql-stop
impls: [mysql-get-lock]
clients: 32
run: {max_duration: 300ms, clients_per_process: 32}
lock: {key: gmystop, wait: 30s}
workload: {kind: counter, business: 30ms}
expect: {"*": safe}
YAML
cat > "$D/myopt.yaml" <<'YAML'
name: groups-mysql-optimistic
impls: [mysql-optimistic]
clients: 16
run: {max_duration: 1500ms, clients_per_process: 16}
lock: {key: gmyopt, wait: 5s}
workload: {kind: stock, stock: 60, business: 5ms}
expect: {"*": safe}
YAML
"$LOCKLAB" run "$D/my.yaml" "$D/mykeys.yaml" "$D/mylease.yaml" "$D/mystop.yaml" "$D/myopt.yaml" --out "$WORK/results" \
    --quiet --no-plot > "$WORK/my.txt" 2>&1
expect_eq "the MariaDB groups met their expectations" "$?" 0
S=$WORK/results/latest/summary.json
for impl in mysql-get-lock mysql-for-update; do
    r=results.scenario=groups-mysql,impl=$impl
    expect_exact "$impl, 48 clients in 2 groups on one hot key" $r 144
    expect_eq "$impl: every client ran" "$(jget "$S" $r.clients)" 48
    expect_eq "$impl: 2 client processes" "$(jget "$S" $r.cpu.client_processes)" 2
done
for want in mysql-get-lock:160 mysql-for-update:240 mysql-unique:160; do
    r=results.scenario=groups-mysql-keys,impl=${want%:*}
    expect_exact "${want%:*} in a group on per-client keys" $r 80
    expect_eq "${want%:*} in a group: the blocking design's statements, 80 cycles" \
        "$(jget "$S" $r.lock_stats.round_trips)" "${want#*:}"
done
expect_violation "mysql-unique in a group, lease < business" \
    results.scenario=groups-mysql-lease,impl=mysql-unique
r=results.scenario=groups-mysql-stop,impl=mysql-get-lock
expect_safe "mysql-get-lock group stopping with waiters" $r
expect_gt "mysql-get-lock group stopping: grants before the stop" "$(jget "$S" $r.ops.acquired)" 0
expect_eq "mysql-get-lock group stopping: no error" "$(jget "$S" $r.ops.errors)" 0
expect_eq "mysql-get-lock group stopping: not killed" "$(jget "$S" $r.clients_status.killed)" 0
r=results.scenario=groups-mysql-optimistic,impl=mysql-optimistic
expect_eq "mysql-optimistic, 16 clients in a group on 60 units (inside together by design)" \
    "$(jget "$S" $r.verdict)" safe
expect_eq "mysql-optimistic in a group: every unit sold, none twice" "$(jget "$S" $r.safety.oversold)" 0
expect_gt "mysql-optimistic in a group: its conflicts retried" "$(jget "$S" $r.lock_stats.polls)" 0
expect_no_orphans "after the group runs"
finish
