# it_oracle_death.sh - the oracle stays exact when a client dies inside its
# critical section. The parent closes a dead client's open interval at the
# moment it reaps it (and takes it off the live holder count), so:
#   1. a holder killed while a second holder is inside (its TTL ran out under
#      a long business time) still shows the overlap it caused;
#   2. a holder killed alone, whose lock then expires and passes to the next
#      client, invents no overlap: not in the interval analysis, and not in
#      the live counter either (one dead holder must not turn every later
#      entry into an overlap), and the two agree;
#   3. a client killed during its release has its interval logged once.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
# find_holder: the client that holds the lock is the one whose connection
# went idle (the waiter polls every 10 ms). Redis counts idle in whole
# seconds of its clock, so a poller can read idle=1 just after a second
# boundary: the same connection must read idle twice, 150 ms apart. Then
# its socket's process. Sets holder.
idle_sets() {
    redis-cli -p "$port" CLIENT LIST 2>/dev/null |
        awk '/cmd=set/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
                         if (f["idle"] + 0 >= 1) print f["addr"] }'
}
find_holder() {
    holder=""
    local addr end=$((SECONDS + 20))
    while [ -z "$holder" ] && [ $SECONDS -lt $end ]; do
        addr=$(idle_sets | head -1)
        if [ -n "$addr" ]; then
            sleep 0.15
            idle_sets | grep -qx "$addr" &&
                holder=$(ss -Htnp state established src "$addr" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
        fi
        [ -z "$holder" ] && sleep 0.05
    done
    check "found the holder's process" test -n "$holder"
}

# ---- 1: a holder killed while another holder is inside
cat > "$D/overlap.yaml" <<'YAML'
name: die-overlapping
impls: [redis-lua]
clients: 2
run: {ops_per_client: 1, max_duration: 30s}
lock: {key: die-lock, ttl: 1s, wait: 10s, retry_interval: 10ms}
workload: {kind: counter, business: 5s}
expect: {"*": any}
YAML
"$LOCKLAB" run "$D/overlap.yaml" --out "$WORK/r1" --quiet --no-plot &
pid=$!
wait_lock_store "$pid" 2
# the first holder's token, then a different one: the TTL ran out and the
# second client holds too, while the first is still in its 5 s business
# (the 1 s TTL leaves a loaded machine time to read the first token)
first=""; second=""
end=$((SECONDS + 20))
while [ -z "$second" ] && [ $SECONDS -lt $end ]; do
    tok=$(redis-cli -p "$port" GET die-lock 2>/dev/null)
    if [ -n "$tok" ] && [ -z "$first" ]; then first=$tok; fi
    if [ -n "$tok" ] && [ -n "$first" ] && [ "$tok" != "$first" ]; then second=$tok; fi
    sleep 0.01
done
check "observed two successive holders" test -n "$second"
set -- $(client_pids "$pid") ""
[ -z "$1" ] || kill -KILL "$1" # both are inside: either one will do
wait "$pid"
S=$WORK/r1/latest/summary.json
r=results.impl=redis-lua
expect_eq "1: the dead holder's overlap is counted" "$(jget "$S" $r.safety.violations)" 1
expect_eq "1: verdict" "$(jget "$S" $r.verdict)" violation
expect_eq "1: the crash is reported" "$(jget "$S" $r.clients_status.crashed)" 1
expect_eq "1: the harness closed the dead client's interval" "$(jget "$S" $r.safety.intervals_closed_by_harness)" 1
expect_eq "1: live counter and logs agree" "$(jget "$S" $r.safety.cross_check)" ok
expect_eq "1: live overlaps" "$(jget "$S" $r.safety.live_overlaps)" 1

# ---- 2: a holder killed alone; its lock expires later and passes on (the
# kill must come within the 5 s TTL, checked, and so within the 5 s of
# business; the next holder's 5 s are the run's last)
cat > "$D/alone.yaml" <<'YAML'
name: die-alone
impls: [redis-lua]
clients: 2
run: {ops_per_client: 1, max_duration: 30s}
lock: {key: alone-lock, ttl: 5s, wait: 10s, retry_interval: 10ms}
workload: {kind: counter, business: 5s}
expect: {"*": any}
YAML
"$LOCKLAB" run "$D/alone.yaml" --out "$WORK/r2" --quiet --no-plot &
pid=$!
wait_lock_store "$pid" 2
find_holder
expect_eq "the lock is still the holder's (its TTL has not run out)" "$(redis-cli -p "$port" EXISTS alone-lock)" 1
kill -KILL "$holder"
wait "$pid"
S=$WORK/r2/latest/summary.json
expect_eq "2: the next client got the lock after the TTL (2 grants)" "$(jget "$S" $r.ops.acquired)" 2
expect_eq "2: the harness closed the dead holder's interval" "$(jget "$S" $r.safety.intervals_closed_by_harness)" 1
expect_eq "2: no overlap invented by the logs" "$(jget "$S" $r.safety.violations)" 0
expect_eq "2: none invented by the live counter" "$(jget "$S" $r.safety.live_overlaps)" 0
expect_eq "2: live counter and logs agree" "$(jget "$S" $r.safety.cross_check)" ok
expect_eq "2: verdict (a crash is an error, not a violation)" "$(jget "$S" $r.verdict)" error

# ---- 3: a client killed while it releases (stalled before its release by a
# failpoint): its interval, complete but for the release, is logged by the
# parent, once, and the live counter still agrees
cat > "$D/releasing.yaml" <<'YAML'
name: die-releasing
impls: [redis-lua]
clients: 2
run: {ops_per_client: 1, max_duration: 6s}
lock: {key: rel-lock, ttl: 5s, wait: 10s, retry_interval: 10ms}
workload: {kind: counter, business: 10ms}
expect: {"*": any}
YAML
LOCKLAB_FAILPOINTS='redis-lua/before-release=sleep(4s)' \
    "$LOCKLAB" run "$D/releasing.yaml" --out "$WORK/r3" --quiet --no-plot &
pid=$!
wait_lock_store "$pid" 2
find_holder
kill -KILL "$holder"
wait "$pid"
S=$WORK/r3/latest/summary.json
expect_eq "3: the harness logged the releasing client's interval" "$(jget "$S" $r.safety.intervals_closed_by_harness)" 1
expect_eq "3: every grant has its interval, none twice" "$(jget "$S" $r.safety.intervals)" "$(jget "$S" $r.ops.acquired)"
expect_eq "3: two grants (the lock passed on after its TTL)" "$(jget "$S" $r.ops.acquired)" 2
expect_eq "3: no overlap" "$(jget "$S" $r.safety.violations)" 0
expect_eq "3: live counter and logs agree" "$(jget "$S" $r.safety.cross_check)" ok
expect_no_orphans "after killing holders"
finish
