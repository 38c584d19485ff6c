# it_adapters_etcd.sh - adapters on etcd (docs/adapters.md), with real
# etcd members locklab starts: `backend: etcd` is accepted and an unknown
# word lists it; an adapter gets the members in the documented forms (on a
# cluster of 3: three URLs, the first member's host and port, the prefix,
# etcdctl's variable; lock.etcd_keepalive as LOCKLAB_ETCD_KEEPALIVE); the
# minimal etcd adapter of docs/adapters.md, taken
# from the page as it is, sells exactly the stock; keys an earlier run left
# under locklab/KEY (no lease: they would stay) are deleted before the
# next run; and the shipped python-etcd3 adapter does what the library's
# source predicts: contended acquires fail without its shim (Debian's
# tenacity 8: error TypeError), a holder paused past its lease loses the
# lock (violation: no keep-alive), a holder killed gives it back when its
# lease runs out (safe). Nothing is left running.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
FX=$WORK/fx
mkdir -p "$D" "$FX"
cp "$SRC"/tests/adapters/* "$FX"/
PY=/usr/bin/python3
A=$SRC/adapters

# 1. The word: etcd is a backend; an unknown one lists it.
printf 'name: bad\nadapters:\n  x: {command: [/bin/true], backend: etcd3}\nimpls: [x]\n' > "$D/bad.yaml"
msg=$("$LOCKLAB" run "$D/bad.yaml" --out "$WORK/results" 2>&1)
expect_eq "unknown backend: exit code" "$?" 2
check "unknown backend: etcd among the words" grep -q \
    "bad.yaml:3:38: unknown value 'etcd3' for adapters.x.backend (expected one of: redis, redis-nodes, sentinel, zookeeper, etcd, mysql, postgres)" <<<"$msg"
out=$("$LOCKLAB" list "$SRC/scenarios/libraries.yaml" 2>&1)
check "list shows the etcd adapter" grep -Eq "^etcd3-lock +etcd +adapter \(etcd\):" <<<"$out"

# 2. The environment on 3 members, exactly as documented.
cat > "$D/env.yaml" <<YAML
name: env
adapters:
  e: {command: [../fx/env_dump.sh], backend: etcd}
impls: [e]
backends: {etcd: {members: 3}}
run: {ops_per_client: 2}
lock: {etcd_keepalive: true}
expect: {"*": safe}
YAML
# 3. The minimal adapter of docs/adapters.md (the python block that uses
# etcd3), the shipped one, and the shipped one without its shim, all
# contending from the start (3 clients, 20 ms inside).
awk '/^```python/ { n++; f = 1; next } /^```/ { f = 0 } f { print > (dir "/minimal-" n ".py") }' \
    dir="$FX" "$SRC/docs/adapters.md"
MIN=$(grep -l "import .*etcd3" "$FX"/minimal-*.py | head -1)
check "docs/adapters.md: a minimal etcd adapter" test -n "$MIN"
cat > "$D/minimal.yaml" <<YAML
name: minimal-etcd
adapters:
  minimal-etcd: {command: [$PY, ${MIN:-/nonexistent}], backend: etcd}
  etcd3-lock: {command: [$PY, $A/etcd3_lock.py], backend: etcd}
  etcd3-raw: {command: [$PY, $A/etcd3_lock.py, raw], backend: etcd}
impls: [minimal-etcd, etcd3-lock, etcd3-raw]
clients: 3
run: {ops_per_client: 6}
lock: {wait: 10s}
workload: {kind: stock, stock: 18, business: 20ms}
expect: {"*": safe, etcd3-raw: error}
YAML
# 4. A paused holder past its 1 s lease, and a killed one (as it_etcd.sh
# does for the C designs).
cat > "$D/pause.yaml" <<YAML
name: etcd3-pause
adapters:
  etcd3-lock: {command: [$PY, $A/etcd3_lock.py], backend: etcd}
impls: [etcd3-lock]
clients: 3
run: {max_duration: 3s}
lock: {key: etcd3-pause-lock, ttl: 1s, wait: 5s}
workload: {kind: stock, stock: 100000, business: 200ms}
faults:
  - {at: 300ms, action: pause, target: holder, duration: 2200ms}
expect: {"*": violation}
YAML
sed -e 's/name: etcd3-pause/name: etcd3-kill/' -e 's/etcd3-pause-lock/etcd3-kill-lock/' \
    -e 's/max_duration: 3s/max_duration: 3500ms/' -e 's/wait: 5s/wait: 2s/' \
    -e 's/business: 200ms/business: 10ms, think: 5ms/' \
    -e 's/action: pause, target: holder, duration: 2200ms/action: kill, target: holder/' \
    -e 's/"\*": violation/"*": safe/' "$D/pause.yaml" > "$D/kill.yaml"

run_ok "etcd adapters" "$D/env.yaml" "$D/minimal.yaml" "$D/pause.yaml" "$D/kill.yaml"

RUN=$WORK/results/latest
e=$RUN/$(jget "$S" results.scenario=env,impl=e.adapter_stderr.0.file)
ports=$(sed -n 's/^LOCKLAB_ETCD_ENDPOINTS=//p' "$e" | tr ',' '\n' | sed -n 's#^http://127\.0\.0\.1:\([0-9]*\)$#\1#p')
expect_eq "etcd: three members' URLs" "$(echo "$ports" | grep -c .)" 3
p1=$(echo "$ports" | head -1)
p2=$(echo "$ports" | sed -n 2p)
p3=$(echo "$ports" | sed -n 3p)
expect_eq "etcd: its variables" "$(grep -v '^LOCKLAB_CLIENT' "$e" | tr '\n' ' ')" \
    "ETCDCTL_ENDPOINTS=127.0.0.1:$p1,127.0.0.1:$p2,127.0.0.1:$p3 LOCKLAB_ETCD_ENDPOINTS=http://127.0.0.1:$p1,http://127.0.0.1:$p2,http://127.0.0.1:$p3 LOCKLAB_ETCD_HOST=127.0.0.1 LOCKLAB_ETCD_KEEPALIVE=true LOCKLAB_ETCD_PORT=$p1 LOCKLAB_ETCD_PREFIX=locklab/ "
expect_eq "etcd: the client's own" "$(grep -c '^LOCKLAB_CLIENTS\?=' "$e")" 2

SC=minimal-etcd
for impl in minimal-etcd etcd3-lock; do
    r=results.scenario=$SC,impl=$impl
    expect_safe "$impl" $r
    expect_eq "$impl: sold out exactly (sold/left/oversold)" \
        "$(jget "$S" $r.workload.units_done)/$(jget "$S" $r.workload.final_value)/$(jget "$S" $r.safety.oversold)" "18/0/0"
    expect_eq "$impl: released, as the library said" "$(jget "$S" $r.ops.released)/$(jget "$S" $r.ops.release_not_owner)" "18/0"
done
expect_gt "etcd3-lock: watch events counted on the server" \
    "$(jget "$S" results.scenario=$SC,impl=etcd3-lock.wakeups_per_release)" 0
r=results.scenario=$SC,impl=etcd3-raw
expect_eq "etcd3-raw: verdict" "$(jget "$S" $r.verdict)" error
check "etcd3-raw: Debian's tenacity breaks the library's wait" grep -q \
    "adapter: error TypeError: Lock.acquire.<locals>.wait() missing 1 required" <<<"$(jget "$S" $r.first_error)"

r=results.scenario=etcd3-pause,impl=etcd3-lock
expect_violation "etcd3-lock, holder paused past its lease" $r
expect_eq "etcd3-lock: the pause landed" "$(jget "$S" $r.faults.0.outcome)" done
r=results.scenario=etcd3-kill,impl=etcd3-lock
expect_safe "etcd3-lock, holder killed" $r
expect_eq "etcd3-lock: the kill landed" "$(jget "$S" $r.faults.0.outcome)" done
in_range "etcd3-lock: granted again after the lease (ms)" \
    "$(jget "$S" $r.faults.0.recovery_ms | cut -d. -f1)" 500 2500

# 5. Keys left under locklab/KEY by an earlier run are deleted before the
# next: the leaker puts them without a lease; the library that follows gets
# every grant within lock.wait. Without the clearing each acquire would
# time out after 1 s (blocked, no grant).
rm -f "$FX/leak.held"
cat > "$D/leak.yaml" <<YAML
name: leak-etcd
adapters:
  leak: {command: [../fx/leak_etcd.sh], backend: etcd}
  lib: {command: [$PY, $A/etcd3_lock.py], backend: etcd}
impls: [leak, lib]
run: {ops_per_client: 3}
lock: {key: leaked, wait: 1s}
expect: {"*": safe}
YAML
run_ok "a lock left behind" "$D/leak.yaml"
expect_eq "the leaker's keys were there when its run ended" "$(cat "$FX/leak.held" 2>/dev/null)" leaked
expect_eq "the next run got every grant (acquired/timeouts)" \
    "$(jget "$S" results.impl=lib.ops.acquired)/$(jget "$S" results.impl=lib.ops.timeouts)" "3/0"

expect_no_orphans "end"
left=$(pgrep -af -- "$SRC/adapters/" | grep -v "^$$ " || true)
expect_eq "no shipped adapter left running" "$left" ""
finish
