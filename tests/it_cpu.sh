# it_cpu.sh - CPU accounting: where a run's CPU time went. Clients that
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
finish
