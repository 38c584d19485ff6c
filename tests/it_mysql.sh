# it_mysql.sh - the MariaDB designs on a real MariaDB that locklab starts
# itself (mariadb-install-db, then mariadbd in the test's TMPDIR): the three
# locks keep the stock exact, the optimistic version column lets several
# buyers in at once and still sells exactly the stock (its conflicts
# counted); the unique-index lease is lost under long business time while
# the session locks hold; pause, restart and kill of the server land, the
# three locks stay safe through them and every lock operation that failed
# is counted as the faults'; and neither an interrupt nor a SIGKILL of
# locklab leaves a mariadbd behind.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/safe.yaml" <<'YAML'
name: mysql-safe
impls: [mysql-unique, mysql-for-update, mysql-get-lock, mysql-optimistic]
clients: 6
run: {ops_per_client: 10, max_duration: 30s}
lock: {key: mysql-safe-lock, ttl: 10s, wait: 20s, retry_interval: 5ms}
workload: {kind: stock, stock: 30, business: 1ms}
expect: {"*": safe}
YAML
cat > "$D/lease.yaml" <<'YAML'
name: mysql-lease
impls: [mysql-unique, mysql-for-update, mysql-get-lock]
clients: 3
run: {ops_per_client: 2, max_duration: 30s}
lock: {key: mysql-lease-lock, ttl: 100ms, wait: 10s, retry_interval: 10ms}
workload: {kind: counter, business: 300ms}
expect: {"*": safe, mysql-unique: violation}
YAML
cat > "$D/faults.yaml" <<'YAML'
name: mysql-faults
impls: [mysql-get-lock, mysql-for-update, mysql-unique]
clients: 3
run: {max_duration: 3s}
lock: {key: mysql-fault-lock, wait: 10s}
workload: {kind: counter, business: 5ms}
faults:
  - {at: 300ms, action: pause, target: mysql, duration: 400ms}
  - {at: 1200ms, action: restart, target: mysql, duration: 300ms}
  - {at: 1800ms, action: kill, target: mysql}
expect: {"*": unavailable}
YAML
cat > "$D/long.yaml" <<'YAML'
name: mysql-long
impls: [mysql-get-lock]
clients: 4
run: {max_duration: 60s}
lock: {key: mysql-long-lock, wait: 30s}
workload: {kind: counter, business: 5ms}
YAML

# One invocation, one embedded server, three scenarios in one summary.
run_ok "safe, lease and server faults" "$D/safe.yaml" "$D/lease.yaml" "$D/faults.yaml"

# 1. Safe designs: the stock exact, every unit sold once.
SC=mysql-safe
for impl in mysql-unique mysql-for-update mysql-get-lock mysql-optimistic; do
    r=results.scenario=$SC,impl=$impl
    expect_eq "$impl: verdict" "$(jget "$S" $r.verdict)" safe
    expect_eq "$impl: stock ends at 0" "$(jget "$S" $r.workload.final_value)" 0
    expect_eq "$impl: exactly 30 sold" "$(jget "$S" $r.workload.units_done)" 30
    expect_eq "$impl: nothing oversold" "$(jget "$S" $r.safety.oversold)" 0
    expect_eq "$impl: no lost update" "$(jget "$S" $r.safety.lost_updates)" 0
    expect_gt "$impl: server statements counted" "$(jget "$S" $r.server_ops_per_acquire)" 0.9
done
for impl in mysql-unique mysql-for-update mysql-get-lock; do
    expect_eq "$impl: one holder at most" \
        "$(jget "$S" results.scenario=$SC,impl=$impl.safety.max_concurrent_holders)" 1
done
r=results.scenario=$SC,impl=mysql-optimistic
expect_gt "mysql-optimistic: several buyers inside at once (by design)" \
    "$(jget "$S" $r.safety.max_concurrent_holders)" 1
expect_gt "mysql-optimistic: conflicts counted" "$(jget "$S" $r.optimistic.conflicts)" 0
expect_eq "mysql-optimistic: commits are the sales" "$(jget "$S" $r.optimistic.commits)" 30
expect_eq "mysql-optimistic: each conflict is a retry" "$(jget "$S" $r.lock_stats.polls)" \
    "$(jget "$S" $r.optimistic.conflicts)"
check "the embedded server's start-up time is reported" \
    test "$(jget "$S" results.scenario=$SC,impl=mysql-get-lock.servers.mysql.startup_ms)" -gt 0

# 2. Business time past the lease: the unique-index row is taken over under
#    its holder; the session locks have no lease and hold.
SC=mysql-lease
expect_violation "mysql-unique past its lease" results.scenario=$SC,impl=mysql-unique
expect_gt "mysql-unique: a release found its row taken over" \
    "$(jget "$S" results.scenario=$SC,impl=mysql-unique.ops.release_not_owner)" 0
for impl in mysql-for-update mysql-get-lock; do
    expect_exact "$impl without a lease" results.scenario=$SC,impl=$impl 6
done

# 3. The server as a fault target: paused, restarted, killed (and brought
#    back at the end of the run: the next design's faults land on it), and
#    the clients go on. A 5 ms critical section is over long before the
#    restarted server serves again, so a lock the restart took from its
#    holder is not granted to another while it works: no two holders. The
#    kill at 1.8 s keeps the server down for the rest of the run, and no
#    grant follows it while the clients ask for 1.2 s: each design is
#    unavailable (never safe). Every lock operation that failed did so
#    while the server was down and is the fault's (fault_errors), none the
#    design's; after the restart the lock is granted again within 1 s.
SC=mysql-faults
for impl in mysql-get-lock mysql-for-update mysql-unique; do
    r=results.scenario=$SC,impl=$impl
    for i in 0 1 2; do
        expect_eq "$impl: fault $i on mysql landed" "$(jget "$S" $r.faults.$i.outcome)" done
    done
    expect_eq "$impl: the pause hit the server" "$(jget "$S" $r.faults.0.action)" pause
    check "$impl: the restart names the old and the new pid" \
        grep -Eq '^mysql \(pid [0-9]+\) -> pid [0-9]+$' <<<"$(jget "$S" $r.faults.1.hit)"
    expect_gt "$impl: clients got the lock across the faults" "$(jget "$S" $r.ops.acquired)" 20
    expect_eq "$impl: killed for the rest of the run: unavailable" "$(jget "$S" $r.verdict)" unavailable
    expect_eq "$impl: ... after the kill" "$(jget "$S" $r.unavailable.entry)" 2
    expect_eq "$impl: ... and no two holders across the faults" "$(jget "$S" $r.safety.violations)" 0
    in_range "$impl: granted again soon after the restart" "$(jget "$S" $r.faults.1.recovery_ms | cut -d. -f1)" 0 1000
    expect_gt "$impl: lock operations failed while the server was down" \
        "$(jget "$S" $r.fault_errors)" 0
    expect_eq "$impl: ... and none when it was up" \
        "$(jget "$S" $r.ops.errors)/$(jget "$S" $r.ops.release_errors)" 0/0
done
expect_no_orphans "after the server faults"

# 4. Bad or unreachable --mysql: exit 2 before anything starts, or 3.
"$LOCKLAB" run "$D/safe.yaml" --mysql nohost --out "$WORK/results" >/dev/null 2>&1
expect_eq "bad --mysql address: exit code" "$?" 2
LOCKLAB_MYSQL=127.0.0.1:1 "$LOCKLAB" run "$D/safe.yaml" --out "$WORK/results" >/dev/null 2>&1
expect_eq "unreachable \$LOCKLAB_MYSQL: exit code" "$?" 3

# 5. Interrupted (SIGINT) and killed (SIGKILL) while mariadbd runs: it
#    goes with locklab.
mariadbd_running() { pgrep -f -- "mariadbd.*$TMPDIR" >/dev/null; }
expect_signals_clean "$D/long.yaml" mariadbd_running 4 mariadbd
rm -rf "$TMPDIR"/locklab-* # what a SIGKILLed locklab could not remove
finish
