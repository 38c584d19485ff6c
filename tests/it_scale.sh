# it_scale.sh - the scale sweep (scenarios/throughput-scale.yaml) in small:
# the shipped file loads, and the same file cut down to clients [4, 64] in
# groups of 16 with 1 s steps (both key layouts; of its five stores'
# designs redis-lua and zk-sequential) runs and leaves
#  - in summary.json's cpu, per result: the client processes (1 for 4
#    clients, 4 for 64), their peak RSS summed, the parent's RSS, and both
#    per client (rss_kib = clients_rss_kib / clients);
#  - the footprint table after the sweep, a row per step;
#  - the throughput plot with its p99 panel: its data file holds a line
#    per design and key layout with both client counts, and the SVG names
#    the panel.
# The full sweep is a benchmark (docs/benchmarks.md), never run here.
. "$(dirname "$0")/lib.sh"

F=$SRC/scenarios/throughput-scale.yaml
"$LOCKLAB" list "$F" > "$WORK/list.out" 2>&1
expect_eq "the shipped scale sweep loads" "$?" 0
check "... and plans 1 to 10,000 clients" grep -q "throughput-scale.yaml" "$WORK/list.out"
check "... the file asks for clients up to 10000 in groups" \
    grep -qE '^clients: \[.*10000\]' "$F"

sed -e 's/^clients: .*/clients: [4, 64]/' \
    -e 's/^run: .*/run: {max_duration: 1s, clients_per_process: 16}/' \
    -e 's/^name: .*/name: scale-tiny/' "$F" > "$WORK/tiny.yaml"
check "the cut-down file differs only in name, clients and run" \
    test "$(diff "$F" "$WORK/tiny.yaml" | grep -c '^<')" -eq 3
check "... the file sweeps five stores' designs" \
    grep -q '^impls: \[redis-lua, zk-sequential, pg-advisory, mysql-get-lock, etcd-lease\]$' "$F"
# the Redis and ZooKeeper designs only: the others' grouped paths are
# it_groups', the databases' connection limits it_postgres'
"$LOCKLAB" run "$WORK/tiny.yaml" --impl redis-lua,zk-sequential --out "$WORK/results" \
    > "$WORK/out.txt" 2> "$WORK/err.txt"
expect_eq "the tiny sweep met its expectations" "$?" 0
S=$WORK/results/latest/summary.json
expect_eq "eight steps" "$(jget "$S" results)" 8
for d in redis-lua zk-sequential; do
    for k in keyed hot; do
        for n in 4 64; do
            r=results.impl=$d,files=scale-tiny-$k-$n
            procs=$(( (n + 15) / 16 ))
            expect_eq "$d $k/$n: client processes" "$(jget "$S" $r.cpu.client_processes)" $procs
            rss=$(jget "$S" $r.cpu.clients_rss_kib)
            # a locklab process holds a few MiB at least; none holds a GiB here
            in_range "$d $k/$n: the clients' peak RSS summed (KiB)" "$rss" $((procs * 1024)) 1048576
            in_range "$d $k/$n: rss per client is the sum over $n" \
                "$(awk -v a="$(jget "$S" $r.cpu.per_client.rss_kib)" -v b="$rss" -v n=$n \
                    'BEGIN { print a * n - b }')" -1 1
            expect_gt "$d $k/$n: the parent's RSS (KiB)" "$(jget "$S" $r.cpu.harness_rss_kib)" 1024
            expect_gt "$d $k/$n: CPU per client (ms per s)" \
                "$(jget "$S" $r.cpu.per_client.cpu_ms_per_s)" 0
        done
    done
done
check "the footprint table after the sweep" grep -q '^the harness per step' "$WORK/out.txt"
expect_eq "... a row per step" \
    "$(grep -cE '^(redis-lua|zk-sequential) (keyed|hot)/(4|64) .* MiB +[0-9]+ KiB +[0-9.]+ MiB$' \
        "$WORK/out.txt")" 8

RUN=$WORK/results/latest
P=$RUN/plot-data/scale-tiny-throughput-p99.dat
check "the throughput plot drawn (PNG)" test -s "$RUN/scale-tiny-throughput.png"
check "... with its p99 panel (SVG)" grep -q "acquire p99" "$RUN/scale-tiny-throughput.svg"
expect_eq "p99 data: a line per design and key layout" "$(grep -c '^"' "$P")" 4
check "... ZooKeeper's among them" grep -q '^"zk-sequential' "$P"
expect_eq "p99 data: both client counts on each" "$(grep -cE '^(4|64) [0-9.e+-]+$' "$P")" 8
expect_no_orphans "after the sweep"
finish
