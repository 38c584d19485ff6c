# it_cpu.sh - CPU accounting: where a run's CPU time went, inside the
# measured window only (an adapter's start-up is not charged). Clients that
# spin (no lock, no business time) saturate the machine and hold at least
# half of it (also when other work shares the machine): the result is
# flagged client-bound, in the JSON and under its row. Two clients that mostly
# sleep inside their critical sections are not; the lock server's own time
# is counted under its role name, and the clients' from their rusage.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/spin.yaml" <<'YAML'
name: spin
impls: [none]
clients: 32
run: {max_duration: 1500ms}
workload: {kind: counter}
expect: {none: any}
YAML
cat > "$D/calm.yaml" <<'YAML'
name: calm
impls: [redis-lua]
clients: 2
run: {max_duration: 1500ms}
lock: {ttl: 10s, retry_interval: 5ms}
workload: {kind: counter, business: 5ms}
expect: {redis-lua: safe}
YAML
"$LOCKLAB" run "$D/spin.yaml" "$D/calm.yaml" --out "$WORK/results" --no-plot > "$WORK/out.txt" 2>&1
expect_eq "exit code" "$?" 0
S=$WORK/results/latest/summary.json
cores=$(nproc)
expect_eq "cores counted" "$(jget "$S" results.impl=none.cpu.cores)" "$cores"
expect_eq "spinning clients: client-bound" "$(jget "$S" results.impl=none.cpu.client_bound)" true
expect_eq "spinning clients: by the saturated machine" "$(jget "$S" results.impl=none.cpu.client_bound_why)" saturated
expect_gt "spinning clients: held at least half of the cores" \
    "$(jget "$S" results.impl=none.cpu.clients_cores)" "$(awk -v c="$cores" 'BEGIN{print 0.5 * c}')"
expect_gt "spinning clients: the machine was saturated" \
    "$(jget "$S" results.impl=none.cpu.machine_busy)" 0.9
expect_eq "spinning clients: the table says so" "$(grep -c 'client-bound: the clients used' "$WORK/out.txt")" 1
expect_eq "sleeping clients: not client-bound" "$(jget "$S" results.impl=redis-lua.cpu.client_bound)" false
in_range "sleeping clients: their CPU counted (ms)" \
    "$(awk -v s="$(jget "$S" results.impl=redis-lua.cpu.clients_s)" 'BEGIN{printf "%d", s * 1000}')" 1 1000
expect_gt "the lock server's CPU counted under its role" \
    "$(jget "$S" results.impl=redis-lua.cpu.per_server_s.redis)" 0
expect_eq "no lock server for none" "$(jget "$S" results.impl=none.cpu.per_server_s)" 0

# CPU inside the window only. Four redis-py adapter clients run for about
# 0.3 s: their Python start-up (about 0.1 s of CPU each, before the start
# barrier) is not the run's, so they are not client-bound and use a small
# share of the cores (the old count, from the reaped clients' rusage,
# said 1.5 to 1.8 of 2 cores, client-bound). An adapter child that burns
# 100 ms of CPU per acquire has that time counted: the library's process is
# measured from /proc, not only the client's own. That one client burns about
# a core while its Redis idles: client-bound by the second rule (one client
# process used most of a core: its thread set the pace), whatever the
# machine's load; the redis-py clients, far above their Redis in CPU but none
# near a core, are not.
cat > "$D/burn.py" <<'PY'
import sys, time
print("ready", flush=True)
for line in sys.stdin:
    w = line.split()
    if w[0] == "quit":
        break
    if w[0] == "acquire":
        t = time.process_time()
        while time.process_time() - t < 0.1:
            pass
    print("granted" if w[0] == "acquire" else "released", flush=True)
PY
cat > "$D/adapters.yaml" <<YAML
name: cpu-adapters
adapters:
  redis-py: {command: [/usr/bin/python3, $SRC/adapters/redis_py_lock.py], backend: redis}
  burn: {command: [/usr/bin/python3, burn.py], backend: redis}
impls: [redis-py]
clients: 4
run: {ops_per_client: 20}
lock: {ttl: 10s, wait: 10s}
workload: {kind: counter, business: 1ms}
expect: {"*": safe}
YAML
sed -e 's/^clients: 4/clients: 1/' -e 's/^impls: .*/impls: [burn]/' \
    -e 's/ops_per_client: 20/ops_per_client: 10/' -e 's/name: cpu-adapters/name: cpu-burn/' \
    "$D/adapters.yaml" > "$D/burn.yaml"
"$LOCKLAB" run "$D/adapters.yaml" "$D/burn.yaml" --out "$WORK/results" --no-plot > "$WORK/out.txt" 2>&1
expect_eq "adapters: exit code" "$?" 0
r=results.impl=redis-py
in_range "redis-py: a short run (s)" "$(jget "$S" $r.elapsed_s)" 0.1 3
expect_eq "redis-py: not client-bound" "$(jget "$S" $r.cpu.client_bound)" false
in_range "redis-py: the clients' cores, start-up left out" "$(jget "$S" $r.cpu.clients_cores)" 0 0.5
expect_eq "redis-py: no client-bound line" "$(grep -A1 '^redis-py ' "$WORK/out.txt" | grep -c 'client-bound')" 0
in_range "burn: its child's 10 x 100 ms counted (s)" "$(jget "$S" results.impl=burn.cpu.clients_s)" 0.95 2
expect_eq "burn: client-bound, one client at a core" "$(jget "$S" results.impl=burn.cpu.client_bound_why)" client-core
expect_eq "burn: the table says so" "$(grep -A1 '^burn ' "$WORK/out.txt" | grep -c 'client-bound: the clients used')" 1
finish
