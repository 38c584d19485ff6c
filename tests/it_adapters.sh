# it_adapters.sh - the adapter protocol (docs/adapters.md) on real servers
# the harness starts: bad declarations are refused before anything starts;
# broken adapters (one that dies, one that hangs, one that writes garbage,
# one that never says ready) give `error` with their line quoted, and one
# that grants while another holds gives `violation`; an `error TEXT` arrives
# whole in summary.json and report.html, cut on the console with where the
# rest is; the renewal settings reach an adapter; `released` is evidence
# for misdel and `released ?` is not; each client's adapter stderr is kept
# in the run folder (bounded) and linked from the report; each backend (redis,
# redis-nodes, sentinel, zookeeper) hands its LOCKLAB_* variables to an
# adapter (tests/adapters/env.sh checks them); the minimal adapter of
# docs/adapters.md, taken from the page as it is, works; the shipped
# adapters (redis-py, kazoo, node-redlock, Curator) sell exactly the stock;
# a pause aimed at a kazoo client freezes its Python child too (its
# ZooKeeper session expires: two holders, and fencing saves the stock); a
# kill takes the child with it; `bench adapter` runs. Nothing is left
# running.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
FX=$WORK/fx
mkdir -p "$D" "$FX"
# the fixtures run from the work directory, so that orphans() sees them
cp "$SRC"/tests/adapters/* "$FX"/
PY=/usr/bin/python3

# expect_bad DESCRIPTION FILE LINE:COL MESSAGE: refused, exit 2, message there.
expect_bad() {
    local msg
    msg=$("$LOCKLAB" run "$2" --out "$WORK/results" 2>&1)
    expect_eq "$1: exit code" "$?" 2
    check "$1: '$4' at $3" grep -q "$(basename "$2"):$3: .*$4" <<<"$msg"
}

# 1. Bad declarations: file:line:column, exit 2, nothing started.
bad() { printf 'name: bad\nadapters:\n  %s\nimpls: [%s]\n' "$1" "$2" > "$D/bad.yaml"; }
bad 'x: {command: [/bin/true], backend: mongodb}' x
expect_bad "unknown backend" "$D/bad.yaml" 3:38 "unknown value 'mongodb' for adapters.x.backend"
bad 'x: {command: [], backend: redis}' x
expect_bad "empty command" "$D/bad.yaml" 3:16 "adapters.x.command is empty"
bad 'redis-lua: {command: [/bin/true], backend: redis}' redis-lua
expect_bad "a built-in design's name" "$D/bad.yaml" 3:3 "is a built-in implementation's"
bad 'x: {backend: redis}' x
expect_bad "no command" "$D/bad.yaml" 3:6 "missing required key 'adapters.x.command'"
bad 'x: {command: [/bin/true], backend: redis, colour: red}' x
expect_bad "unknown key" "$D/bad.yaml" 3:45 "unknown key 'colour'"
bad 'x: {command: [/bin/true], backend: redis}' y
expect_bad "undeclared adapter in impls" "$D/bad.yaml" 4:9 "unknown implementation 'y'"
bad 'x: {command: [/bin/true], backend: sentinel}' x
expect_bad "sentinel backend without the topology" "$D/bad.yaml" 3:3 "needs backends.redis.topology"
printf 'name: bad\nimpls: [x]\nadapters: [x]\n' > "$D/bad.yaml"
expect_bad "adapters not a mapping" "$D/bad.yaml" 3:11 "adapters must be a mapping"
expect_eq "nothing started by bad input" "$(ls -A "$TMPDIR")" ""

# 2. Broken adapters.
cat > "$D/broken.yaml" <<YAML
name: broken
adapters:
  dies: {command: [../fx/dies.sh], backend: redis}
  liar: {command: [../fx/liar.sh], backend: redis}
  hangs: {command: [../fx/hangs.sh], backend: redis, grace: 500ms}
  garbage: {command: [../fx/garbage.sh], backend: redis}
  silent: {command: [../fx/silent.sh], backend: redis, ready_timeout: 1s}
impls: [dies, liar, hangs, garbage, silent]
clients: 3
run: {ops_per_client: 10, max_duration: 20s}
lock: {ttl: 10s, wait: 1s, retry_interval: 20ms}
workload: {kind: counter, business: 5ms}
expect: {"*": error, liar: violation}
YAML
t0=$SECONDS
run_ok "broken adapters" "$D/broken.yaml"
in_range "broken adapters found out quickly (s)" $((SECONDS - t0)) 0 25
first() { jget "$S" "results.impl=$1.first_error"; }
check "dies: error quotes how it ended and its stderr" grep -q \
    "adapter died during acquire: exited with status 3; stderr: fixture: dying on purpose at 'acquire locklab 10000 1000'" <<<"$(first dies)"
expect_violation "liar" results.impl=liar
check "hangs: error says it hung past WAIT_MS + grace" grep -q \
    "adapter hung: no answer to acquire within 1500 ms" <<<"$(first hangs)"
check "garbage: error quotes the line" grep -q \
    "adapter: bad reply to acquire: 'OK lock taken (maybe)'" <<<"$(first garbage)"
check "silent: error says it never said ready" grep -q \
    "adapter did not say ready within 1000 ms" <<<"$(first silent)"
expect_eq "silent: no client started" "$(jget "$S" results.impl=silent.ops.acquired)" 0
kept=$WORK/results/latest/$(jget "$S" results.impl=dies.adapter_stderr.0.file)
check "dies: its stderr is kept in the run folder" grep -q "fixture: dying on purpose" "$kept"
expect_no_orphans "broken adapters"

# An `error TEXT` arrives whole: summary.json's first_error and report.html
# hold all 1,006 bytes of the line; the console shows its first 300 and says
# where the rest is. The renewal settings reach a redis adapter as the
# scenario's redisson runs them: the watchdog's lease when lock.watchdog_lease
# is given (2000), nothing when lock.ttl alone is (redisson's leaseTime); no
# keep-alive setting off etcd (tests/it_adapters_etcd.sh checks it there).
long="begin $(head -c 990 /dev/zero | tr '\0' x) end"
cat > "$D/long.yaml" <<YAML
name: long
adapters:
  longerr: {command: [../fx/longerr.sh], backend: redis}
  watchdog: {command: [../fx/renewal.sh, 2000, unset], backend: redis}
impls: [longerr, watchdog]
run: {ops_per_client: 2}
lock: {ttl: 1s, watchdog_lease: 2s}
expect: {longerr: error, watchdog: safe}
YAML
sed -e 's/name: long/name: leased/' -e '/  longerr: /d' -e 's/impls: .*/impls: [leased]/' \
    -e 's/  watchdog: {command: \[..\/fx\/renewal.sh, 2000,/  leased: {command: [..\/fx\/renewal.sh, unset,/' \
    -e 's/, watchdog_lease: 2s//' -e 's/expect: .*/expect: {"*": safe}/' "$D/long.yaml" > "$D/leased.yaml"
out=$("$LOCKLAB" run "$D/long.yaml" "$D/leased.yaml" --out "$WORK/results" --no-plot 2>&1)
expect_eq "long error and renewal settings: exit code" "$?" 0
S=$WORK/results/latest/summary.json
expect_eq "longerr: first_error whole in summary.json" "$(first longerr)" "client 0: adapter: error $long"
check "longerr: report.html quotes it whole" grep -q "first error: client 0: adapter: error $long</div>" \
    "$WORK/results/latest/report.html"
shown="client 0: adapter: error $long"
check "longerr: the console cuts it at 300 bytes and says where the rest is" grep -qF \
    "first error: ${shown:0:300}... (full text in summary.json)" <<<"$out"
expect_eq "watchdog_lease given: the lease told" "$(jget "$S" results.impl=watchdog.verdict)" safe
expect_eq "lock.ttl alone: no watchdog told" "$(jget "$S" results.impl=leased.verdict)" safe

# What a release reply says of the lock, and what feeds misdel: a lock whose
# TTL runs out inside (100 ms against 250 ms of business) and whose release
# can only delete its own. Answering `released`, its releases read as the
# removal of the next holder's lock (misdel > 0, as a redis-semaphore adapter
# showed); answering `released ?`, they are counted as released and are no
# evidence (misdel 0). Both let two holders in: violation.
cat > "$D/unsure.yaml" <<YAML
name: unsure
adapters:
  sure: {command: [$PY, ../fx/expiring.py, sure], backend: redis}
  unsure: {command: [$PY, ../fx/expiring.py, unsure], backend: redis}
impls: [sure, unsure]
clients: 2
run: {ops_per_client: 4, max_duration: 20s}
lock: {ttl: 100ms, wait: 5s}
workload: {kind: counter, business: 250ms}
expect: {"*": violation}
YAML
run_ok "released and released ?" "$D/unsure.yaml"
expect_violation "released: the TTL ran out inside" results.impl=sure
expect_gt "released: read as evidence (misdel)" "$(jget "$S" results.impl=sure.ops.release_deleted_other)" 0
expect_eq "released: none unchecked" "$(jget "$S" results.impl=sure.ops.released_unchecked)" 0
expect_violation "released ?: the TTL ran out inside" results.impl=unsure
expect_eq "released ?: no evidence (misdel)" "$(jget "$S" results.impl=unsure.ops.release_deleted_other)" 0
expect_eq "released ?: counted as released, all unchecked" \
    "$(jget "$S" results.impl=unsure.ops.released)/$(jget "$S" results.impl=unsure.ops.released_unchecked)" "8/8"

# Each client's adapter stderr is kept in the run folder, bounded (64 KiB
# and a note), listed in summary.json and linked from report.html.
cat > "$D/chatty.yaml" <<YAML
name: chatty
adapters:
  chatty: {command: [../fx/chatty.sh], backend: redis}
  flood: {command: [../fx/chatty.sh, flood], backend: redis}
impls: [chatty, flood]
clients: 2
run: {ops_per_client: 3}
lock: {keys: per-client}
workload: {kind: counter}
expect: {"*": safe}
YAML
run_ok "adapters that log" "$D/chatty.yaml"
RUN=$WORK/results/latest
for c in 0 1; do
    r=results.impl=chatty.adapter_stderr.$c
    f=$(jget "$S" $r.file)
    expect_eq "chatty: client $c's stderr file" "$f" "chatty/chatty.adapter-stderr/client-$c.txt"
    expect_eq "chatty: client $c's lines, its own only" \
        "$(grep -c "^chatty: client $c got acquire locklab-$c " "$RUN/$f")/$(grep -vc "^chatty: client $c " "$RUN/$f")" "3/0"
    expect_eq "chatty: client $c's words at quit kept too" "$(tail -n 1 "$RUN/$f")" "chatty: client $c got quit "
    expect_eq "chatty: client $c not cut" "$(jget "$S" $r.truncated)" false
    check "report.html links client $c's stderr" grep -q "<a href=\"$f\">client $c</a>" "$RUN/report.html"
done
f=$RUN/$(jget "$S" results.impl=flood.adapter_stderr.0.file)
expect_eq "flood: cut, said so" "$(jget "$S" results.impl=flood.adapter_stderr.0.truncated)" true
expect_eq "flood: 64 KiB of its bytes kept, then the note" \
    "$(head -c 65536 "$f" | tr -d x | wc -c)/$(tail -n 1 "$f")" \
    "0/[locklab: stderr cut here after 65536 bytes; the rest was not kept]"
check "flood: nothing past the bound kept" test "$(grep -c chatty "$f")" = 0

# The environment of each backend (one client: env.sh grants blindly).
cat > "$D/env.yaml" <<YAML
name: env
adapters:
  redis: {command: [../fx/env.sh, LOCKLAB_REDIS], backend: redis}
  nodes: {command: [../fx/env.sh, LOCKLAB_REDIS_NODES], backend: redis-nodes}
  zk: {command: [../fx/env.sh, LOCKLAB_ZK, LOCKLAB_ZK_SESSION_TIMEOUT_MS], backend: zookeeper}
impls: [redis, nodes, zk]
backends: {redis: {masters: 3}}
run: {ops_per_client: 3}
expect: {"*": safe}
YAML
sed -e 's/name: env/name: env-sentinel/' -e 's/^impls: .*/impls: [sentinel]/' \
    -e 's/  redis: {command.*/  sentinel: {command: [..\/fx\/env.sh, LOCKLAB_SENTINELS, LOCKLAB_SENTINEL_MASTER], backend: sentinel}/' \
    -e 's/^backends: .*/backends: {redis: {topology: sentinel, replicas: 1}}/' \
    -e '/  nodes: /d' -e '/  zk: /d' "$D/env.yaml" > "$D/env-sentinel.yaml"
run_ok "each backend's environment" "$D/env.yaml" "$D/env-sentinel.yaml"
for impl in redis nodes zk sentinel; do
    expect_eq "$impl adapter: its variables set" "$(jget "$S" results.impl=$impl.verdict)" safe
done
expect_eq "redis-nodes: the run had 3 masters" \
    "$(jget "$S" results.impl=nodes.servers.redis.masters)" 3

# 3. The minimal adapter of docs/adapters.md, as the page gives it.
awk '/^```python/ { f = 1; next } /^```/ { if (f) exit } f' "$SRC/docs/adapters.md" > "$FX/minimal.py"
check "docs/adapters.md holds a minimal adapter" test -s "$FX/minimal.py"
cat > "$D/minimal.yaml" <<YAML
name: minimal
adapters:
  minimal: {command: [$PY, ../fx/minimal.py], backend: redis}
impls: [minimal]
clients: 3
run: {ops_per_client: 10}
workload: {kind: stock, stock: 20, business: 1ms}
expect: {"*": safe}
YAML
run_ok "the documented minimal adapter" "$D/minimal.yaml"
expect_safe "minimal adapter" results.impl=minimal
expect_eq "minimal adapter: sold out exactly (sold/left/oversold)" \
    "$(jget "$S" results.impl=minimal.workload.units_done)/$(jget "$S" results.impl=minimal.workload.final_value)/$(jget "$S" results.impl=minimal.safety.oversold)" "20/0/0"

# 4. The shipped adapters meet their expectations (their libraries must be
# there: a missing one fails here, loudly).
check "node-redlock installed (scripts/install-deps)" test -d "$SRC/adapters/node/node_modules/redlock"
check "Curator adapter built (javac)" test -f "$SRC/adapters/curator/classes/CuratorLock.class"
A=$SRC/adapters
cat > "$D/shipped.yaml" <<YAML
name: shipped
adapters:
  redis-py: {command: [$PY, $A/redis_py_lock.py], backend: redis}
  kazoo: {command: [$PY, $A/kazoo_lock.py], backend: zookeeper}
  node-redlock: {command: [node, $A/node/redlock_adapter.js], backend: redis-nodes}
  curator-mutex: {command: [$A/curator/curator-lock, mutex], backend: zookeeper}
  curator-semaphore: {command: [$A/curator/curator-lock, semaphore], backend: zookeeper}
impls: [redis-py, kazoo, node-redlock, curator-mutex, curator-semaphore]
backends: {redis: {masters: 3}, zookeeper: {force_sync: false}}
clients: 2
run: {ops_per_client: 10, max_duration: 30s}
lock: {ttl: 10s, wait: 20s, retry_interval: 20ms}
workload: {kind: stock, stock: 15, business: 20ms}
expect: {"*": safe}
YAML
run_ok "shipped adapters" "$D/shipped.yaml"
for impl in redis-py kazoo node-redlock curator-mutex curator-semaphore; do
    r=results.impl=$impl
    expect_safe "$impl" $r
    expect_eq "$impl: sold out exactly (sold/left/oversold)" \
        "$(jget "$S" $r.workload.units_done)/$(jget "$S" $r.workload.final_value)/$(jget "$S" $r.safety.oversold)" "15/0/0"
    expect_gt "$impl: server operations counted" "$(jget "$S" $r.server_ops_per_acquire)" 0
done
# (20 ms inside: the other client is always waiting, so a release wakes it)
for impl in kazoo curator-mutex curator-semaphore; do
    expect_gt "$impl: watch notifications counted on the server" \
        "$(jget "$S" results.impl=$impl.wakeups_per_release)" 0
done

# 5. A pause of a kazoo client freezes its Python child: the session
# expires and another client takes the lock (unfenced: violation); with
# kazoo's token the fenced store refuses the stale write (fenced). A kill
# takes the child with it, and the lock is granted again.
cat > "$D/faults.yaml" <<YAML
name: adapter-faults
adapters:
  kazoo: {command: [$PY, $A/kazoo_lock.py], backend: zookeeper}
  redis-py: {command: [$PY, $A/redis_py_lock.py], backend: redis}
impls: [kazoo]
clients: 3
run: {max_duration: 3500ms}
backends: {zookeeper: {session_timeout: 800ms, force_sync: false}}
lock: {ttl: 500ms, wait: 10s, retry_interval: 10ms}
workload: {kind: stock, stock: 100000, business: 50ms, fencing: [false, true]}
faults:
  - {at: 700ms, action: pause, target: holder, duration: 1500ms}
expect: {kazoo: {unfenced: violation, fenced: fenced}}
YAML
run_ok "kazoo paused" "$D/faults.yaml"
r="results.impl=kazoo"
expect_eq "the pause landed on a holder" "$(jget "$S" "results.0.faults.0.outcome")" done
expect_violation "kazoo paused past its session" results.0
expect_eq "kazoo fenced: verdict" "$(jget "$S" results.1.verdict)" fenced
expect_gt "kazoo fenced: stale writes refused" "$(jget "$S" results.1.safety.stale_writes_rejected)" 0
sed -e 's/impls: \[kazoo\]/impls: [redis-py]/' -e 's/fencing: \[false, true\]/think: 10ms/' \
    -e 's/action: pause, target: holder, duration: 1500ms/action: kill, target: holder/' \
    -e 's/expect: .*/expect: {"*": safe}/' -e 's/ttl: 500ms/ttl: 1s/' "$D/faults.yaml" > "$D/kill.yaml"
run_ok "redis-py killed" "$D/kill.yaml"
expect_safe "redis-py with its holder killed" results.0
expect_eq "the kill landed" "$(jget "$S" results.0.faults.0.outcome)" done
expect_gt "the lock was granted again after the kill (recovery ms)" "$(jget "$S" results.0.recovery_ms)" 0

# 6. The protocol's own cost (a loose bar: this asserts it runs, docs/benchmarks.md
# quotes the measured figure).
out=$("$LOCKLAB" bench adapter --cycles 2000 --rounds 3 --max-us 2000 2>&1)
expect_eq "bench adapter: exit code" "$?" 0
check "bench adapter prints its median" grep -q "^median: .* us per exchange over 3 rounds" <<<"$out"

expect_no_orphans "end"
left=$(pgrep -af -- "$SRC/adapters/" | grep -v "^$$ " || true)
expect_eq "no shipped adapter left running" "$left" ""
finish
