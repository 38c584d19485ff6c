# it_delay.sh - slow links (harness/net/net_delay.c, net_proxy.c): Redis on
# h1, its two clients on h2, the lab's delaying proxy in the link from the
# start. A delay of 200 ms (+-50) both ways for 2 s, then one of 300 ms one
# way (what h1 sends) for 1 s: each record is `done` with the added p50 its
# probe saw in a sane band around its latency (and nothing added the other
# way of the one-way delay), the clients' connections, made at the start,
# were in the path, and their acquire latency shows it (p99 above 200 ms
# while p50, outside the delays, stays below a delayed round trip: fails if
# the delay never reached them); no two holders (a waiter may time out:
# blocked).
# Bad delay entries are refused with exit 2, and
# a SIGKILL of locklab mid-delay leaves no process of the run behind.
. "$(dirname "$0")/lib.sh"

need_hosts

D=$WORK
OUT=$WORK/results
cat > "$D/slow.yaml" <<'YAML'
name: slow
impls: [redis-lua]
clients: 2
run: {max_duration: 5500ms}
lock: {ttl: 2s, wait: 1s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 20ms, think: 25ms}
hosts:
  h1: [redis]
  h2: [client:0, client:1]
faults:
  - {at: 1s, action: delay, between: [h1, h2], latency: 200ms, jitter: 50ms, duration: 2s}
  - {at: 3500ms, action: delay, between: [h1, h2], direction: one-way, latency: 300ms, duration: 1s}
YAML
"$LOCKLAB" run "$D/slow.yaml" --out "$OUT" --quiet --no-plot > "$D/slow.out" 2>&1
expect_eq "a run with two slow links ends" "$?" 0
S=$OUT/latest/summary.json
R=results.0
# a slow link makes an unfair lock slow, not unsafe: no two holders; a
# waiter may lose the race to the holder's next acquire past lock.wait
# (`blocked`: timeouts), never more; a 2 s lease is never at stake under
# 200-300 ms of latency (not-exercised, not safe)
expect_eq "... no two holders" "$(jget "$S" $R.safety.violations)" 0
check "... not-exercised, or blocked by a timeout ($(jget "$S" $R.verdict))" \
    grep -qxE 'not-exercised|blocked' <<< "$(jget "$S" $R.verdict)"

# added ms of direction $2 ("h1->h2") in note $1; the heal's with prefix "healed: "
added() { sed -n "s/.*$3$2 +*\(-*[0-9.]*\) ms.*/\1/p" <<< "$1"; }

F=$R.faults.0
NOTE=$(jget "$S" $F.note)
echo "$NOTE"
expect_eq "the two-way delay is done" "$(jget "$S" $F.outcome)" done
expect_eq "... its link" "$(jget "$S" $F.hit)" "h1 <-> h2"
in_range "... the probe saw h1->h2 slowed by (ms)" "$(added "$NOTE" h1-\>h2 "p50 ")" 150 400
in_range "... and h2->h1 by (ms)" "$(added "$NOTE" h2-\>h1 "p50 ")" 150 400
in_range "... healed: h1->h2 added (ms)" "$(added "$NOTE" h1-\>h2 "healed: ")" -50 50
in_range "... healed: h2->h1 added (ms)" "$(added "$NOTE" h2-\>h1 ", ")" -50 50
IN_PATH=$(sed -n 's/.*; \([0-9]*\) connections in path.*/\1/p' <<< "$NOTE")
expect_gt "... the clients' connections, made at the start, were in the path" "$IN_PATH" 1
SLOWED=$(jget "$S" $F.phases_ms.slowed)
in_range "... slowed 1 s after the start barrier (ms)" "$SLOWED" 1000 1400
in_range "... healed its duration later (ms)" \
    "$(awk -v a="$SLOWED" -v b="$(jget "$S" $F.phases_ms.healed)" 'BEGIN{print b-a}')" 2000 2500

F=$R.faults.1
NOTE=$(jget "$S" $F.note)
echo "$NOTE"
expect_eq "the one-way delay is done" "$(jget "$S" $F.outcome)" done
expect_eq "... its link" "$(jget "$S" $F.hit)" "h1 -> h2"
in_range "... h1->h2 slowed by (ms)" "$(added "$NOTE" h1-\>h2 "p50 ")" 250 500
in_range "... h2->h1 not (ms)" "$(added "$NOTE" h2-\>h1 "p50 ")" -50 50

ACQ=$R.latency_us.acquire
expect_gt "the clients' acquire p99 rose past 200 ms (us)" "$(jget "$S" $ACQ.p99)" 200000
# p50: most acquires came outside the delays, waiting at most for the other
# client's hold (20 ms), far below one delayed round trip (400 ms)
in_range "... while their p50 stayed below 50 ms (us)" "$(jget "$S" $ACQ.p50)" 1 50000

# bad entries: exit 2 before anything starts
H='name: bad\nimpls: [redis-lua]\nclients: 2\nhosts: {h1: [redis], h2: [client:0]}\nfaults: [%s]\n'
bad() { # NAME ENTRY MESSAGE
    printf "$H" "$2" > "$D/$1.yaml"
    "$LOCKLAB" run "$D/$1.yaml" --out "$OUT" --quiet --no-plot > /dev/null 2> "$D/$1.err"
    expect_eq "$1 refused with exit 2" "$?" 2
    check "... '$3'" grep -q -- "$3" "$D/$1.err"
}
bad unknown "{at: 1s, action: delay, between: [h1, h9], latency: 200ms, duration: 1s}" \
    "'h9' is no host of hosts:"
bad negative "{at: 1s, action: delay, between: [h1, h2], latency: -200ms, duration: 1s}" \
    "bad duration '-200ms' for faults\[0\].latency"
bad jitter "{at: 1s, action: delay, between: [h1, h2], latency: 100ms, jitter: 200ms, duration: 1s}" \
    "jitter (200 ms) is more than the latency"
bad nolatency "{at: 1s, action: delay, between: [h1, h2], duration: 1s}" "delay needs a latency"
bad partition "{at: 1s, action: partition, groups: [[h1], [h2]], latency: 1s, duration: 1s}" \
    "between, latency and jitter go with delay"

# SIGKILL mid-delay: the proxy (a child of locklab's like the holders)
# dies with it, and so does everything else of the run
sed -e 's/name: slow/name: killed/' -e 's/max_duration: 5500ms/max_duration: 30s/' \
    -e 's/at: 1s, action: delay/at: 200ms, action: delay/' -e 's/duration: 2s}/duration: 25s}/' \
    "$D/slow.yaml" > "$D/killed.yaml"
LOCKLAB_PROGRESS=1 "$LOCKLAB" run "$D/killed.yaml" --out "$OUT" --no-plot >/dev/null \
    2> "$D/killed.err" &
LP=$!
for _ in $(seq 1 100); do # the clients run once the hosts, the proxy and Redis are up
    [ "$(client_pids $LP | wc -l)" -ge 4 ] && break
    sleep 0.05
done
# the kill comes while the delay is on: the fault engine has said it fired
check "the delay fired before the kill" wait_for 30 fault_line "$D/killed.err" 1 delay fired
KIDS=$(pgrep -P $LP | tr '\n' ' ')
expect_gt "locklab's children while it runs (holders, the proxy, Redis, clients)" \
    "$(wc -w <<< "$KIDS")" 5
kill -9 $LP
wait $LP 2>/dev/null
alive() { local n=0 p; for p in $KIDS; do [ -d /proc/"$p" ] && n=$((n + 1)); done; echo $n; }
for _ in $(seq 1 50); do [ "$(alive)" = 0 ] && break; sleep 0.1; done
expect_eq "after SIGKILL: none of them is left" "$(alive)" 0
finish
