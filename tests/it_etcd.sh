# it_etcd.sh - the etcd designs on real etcd members that locklab starts
# itself (Debian's etcd in the test's TMPDIR): a holder paused past its
# lease loses the lock to another client in each design (two holders), and
# fenced by the key's create revision the stock store refuses the paused
# one's late write (fenced); a killed holder's lock is granted again once
# its lease runs out (about the 1 s TTL), the stock exact; on 3 members the
# leader killed while a client holds the lock is replaced, and etcd-lease
# and etcd-mutex stay safe through the election; a bad --etcd is refused
# before anything starts, an unreachable one is exit 3; and neither an
# interrupt nor a SIGKILL of locklab leaves an etcd behind.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/pause.yaml" <<'YAML'
name: etcd-pause
impls: [etcd-lease, etcd-mutex, etcd-lock-api]
clients: 3
run: {max_duration: 3s}
lock: {key: etcd-pause-lock, ttl: 1s, wait: 5s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 200ms, fencing: [false, true]}
faults:
  - {at: 300ms, action: pause, target: holder, duration: 2200ms}
expect: {"*": {unfenced: violation, fenced: fenced}}
YAML
cat > "$D/kill.yaml" <<'YAML'
name: etcd-kill
impls: [etcd-lease, etcd-mutex, etcd-lock-api]
clients: 3
run: {max_duration: 2500ms}
lock: {key: etcd-kill-lock, ttl: 1s, wait: 2s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 10ms, think: 5ms}
faults:
  - {at: 300ms, action: kill, target: holder}
expect: {"*": safe}
YAML
cat > "$D/leader.yaml" <<'YAML'
name: etcd-leader
impls: [etcd-lease, etcd-mutex]
clients: 3
# 4 s: a lock its holder could not give back through the election is
# granted again once its lease runs out, and the new leader extends every
# lease on taking office: about 1.2 s after the store served again here,
# more under load, which a 3 s run sometimes missed (then `unavailable`,
# also with the binary of before client groups: 1 of 3 runs). The wait
# outlasts the run: what is asked is that the lock survives the election
# and the store serves again (else `unavailable`), not how soon three
# members elect a leader on a loaded machine (a 2.5 s wait ran out in
# CI's ASan pass beside two other tests: `blocked`)
run: {max_duration: 4s}
backends:
  etcd: {members: 3}
lock: {key: etcd-leader-lock, ttl: 2s, wait: 10s, retry_interval: 20ms}
workload: {kind: stock, stock: 100000, business: 10ms, think: 5ms}
faults:
  - {at: 500ms, when: holder, action: restart, target: etcd-leader, duration: 800ms}
expect: {"*": not-exercised}
YAML
cat > "$D/long.yaml" <<'YAML'
name: etcd-long
impls: [etcd-mutex]
clients: 3
run: {max_duration: 60s}
lock: {key: etcd-long-lock, ttl: 5s, wait: 30s}
workload: {kind: counter, business: 5ms}
YAML

# One invocation: a one-member cluster and one of three, three scenarios.
run_ok "pause, kill and leader kill" "$D/pause.yaml" "$D/kill.yaml" "$D/leader.yaml"

# 1. A holder paused past its 1 s lease: its keep-alive pauses with it,
#    etcd deletes its key, the next client is granted while it sleeps.
#    The business time (200 ms, the sale written at its end) makes the
#    pause land before the paused holder's write: it writes late, and
#    fenced that write is what the stock store refuses.
SC=etcd-pause
for impl in etcd-lease etcd-mutex etcd-lock-api; do
    r=results.scenario=$SC,impl=$impl,fencing=off
    expect_violation "$impl, holder paused, unfenced" $r
    expect_eq "$impl: the pause landed" "$(jget "$S" $r.faults.0.outcome)" done
    r=results.scenario=$SC,impl=$impl,fencing=on
    expect_eq "$impl, fenced by the create revision: verdict" "$(jget "$S" $r.verdict)" fenced
    expect_gt "$impl, fenced: the stale write refused" \
        "$(jget "$S" $r.safety.stale_writes_rejected)" 0
done

# 2. A holder killed inside: the lock comes back when its lease runs out
#    (1 s TTL), within 2.5 s, and no two holders meanwhile.
SC=etcd-kill
for impl in etcd-lease etcd-mutex etcd-lock-api; do
    r=results.scenario=$SC,impl=$impl
    expect_eq "$impl, holder killed: verdict" "$(jget "$S" $r.verdict)" safe
    expect_eq "$impl: the kill landed" "$(jget "$S" $r.faults.0.outcome)" done
    in_range "$impl: granted again after the lease (ms)" \
        "$(jget "$S" $r.faults.0.recovery_ms | cut -d. -f1)" 500 2500
    expect_eq "$impl: nothing oversold" "$(jget "$S" $r.safety.oversold)" 0
done

# 3. Three members, the leader killed while a client holds the lock and
#    started again 0.8 s later: another member leads, the lock survives;
#    the holder's 10 ms section ends before the election does, so nothing
#    was at stake: not-exercised (a longer section would put it at stake).
SC=etcd-leader
for impl in etcd-lease etcd-mutex; do
    r=results.scenario=$SC,impl=$impl
    expect_eq "$impl, leader killed: verdict" "$(jget "$S" $r.verdict)" not-exercised
    expect_eq "$impl: the restart judged, not at stake" "$(jget "$S" $r.faults.0.at_stake)" no
    check "$impl: the restart hit a member" \
        grep -Eq '^etcd-member:[0-2] \(pid [0-9]+\) -> pid [0-9]+$' <<<"$(jget "$S" $r.faults.0.hit)"
    check "$impl: a new leader was named" \
        grep -Eq '^etcd-member:[0-2]$' <<<"$(jget "$S" $r.faults.0.leader)"
    expect_gt "$impl: granted across the election" "$(jget "$S" $r.ops.acquired)" 30
    # etcd-lease's key has the TTL, etcd-mutex's session lease outlives a holder as long
    expect_eq "$impl: the lock's life is its 2 s lease" \
        "$(jget "$S" $r.lock_life_ms | cut -d. -f1)" 2000
done
check "the cluster of 3 is described" \
    test "$(jget "$S" results.scenario=$SC,impl=etcd-mutex.servers.etcd.members)" = 3
expect_no_orphans "after the faults"

# 4. Bad or unreachable --etcd: exit 2 before anything starts, or 3.
"$LOCKLAB" run "$D/kill.yaml" --etcd nohost --out "$WORK/results" >/dev/null 2>&1
expect_eq "bad --etcd address: exit code" "$?" 2
LOCKLAB_ETCD=127.0.0.1:1 "$LOCKLAB" run "$D/kill.yaml" --out "$WORK/results" >/dev/null 2>&1
expect_eq "unreachable \$LOCKLAB_ETCD: exit code" "$?" 3

# 5. Interrupted (SIGINT) and killed (SIGKILL) while etcd runs: it goes
#    with locklab.
etcd_running() { pgrep -f -- "etcd --name.*$TMPDIR" >/dev/null; }
expect_signals_clean "$D/long.yaml" etcd_running 3 etcd
rm -rf "$TMPDIR"/locklab-* # what a SIGKILLed locklab could not remove
finish
