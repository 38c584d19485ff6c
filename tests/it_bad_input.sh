# it_bad_input.sh - bad scenarios and bad usage: exit code 2, a message
# naming file:line:column (or the path) and what is wrong, and nothing
# started: no server process, no temporary directory, no results.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D" "$D/a-directory"
base='name: t
impls: [redis-lua]
clients: 2
'
printf '%sbogus: 1\n' "$base" > "$D/unknown-key.yaml"
printf '%srun: {max_duration: 5 parsecs}\n' "$base" > "$D/parsecs.yaml"
printf 'name: t\nclients: 2\nimpls: [redis-lua, redis-mystery]\n' > "$D/unknown-impl.yaml"
printf 'name: t\nimpls: [redis-lua\nclients: 2\n' > "$D/syntax.yaml"
: > "$D/empty.yaml"

# expect_usage_error DESCRIPTION PATTERN ARGS...: exit 2, stderr matches PATTERN
expect_usage_error() {
    local desc=$1 pattern=$2
    shift 2
    local err rc
    err=$("$LOCKLAB" "$@" --out "$WORK/results" 2>&1 >/dev/null)
    rc=$?
    expect_eq "$desc: exit code" "$rc" 2
    if printf '%s' "$err" | grep -qE -- "$pattern"; then
        pass "$desc: message '$(printf '%s' "$err" | head -1)'"
    else
        fail "$desc: message '$err' does not match /$pattern/"
    fi
}

expect_usage_error "unknown key" "^$D/unknown-key.yaml:4:1: unknown key 'bogus'" run "$D/unknown-key.yaml"
expect_usage_error "bad duration" "^$D/parsecs.yaml:4:21: bad duration '5 parsecs'" run "$D/parsecs.yaml"
expect_usage_error "unknown implementation" "^$D/unknown-impl.yaml:3:20: unknown implementation 'redis-mystery'" run "$D/unknown-impl.yaml"
expect_usage_error "YAML syntax error" "^$D/syntax.yaml:[0-9]+:[0-9]+: YAML syntax error" run "$D/syntax.yaml"
expect_usage_error "empty file" "^$D/empty.yaml:1:1: the file is empty" run "$D/empty.yaml"
# open loop (arrival:): a rate that is no rate, or zero; a think time beside it
printf '%sarrival: {rate: fast}\n' "$base" > "$D/rate-word.yaml"
printf '%sarrival: {rate: 0/s}\n' "$base" > "$D/rate-zero.yaml"
printf '%sworkload: {think: 1ms}\narrival: {rate: 10/s}\n' "$base" > "$D/rate-think.yaml"
expect_usage_error "a rate that is a word" "^$D/rate-word.yaml:4:17: arrival.rate must be a rate of acquires per second" run "$D/rate-word.yaml"
expect_usage_error "a zero rate" "^$D/rate-zero.yaml:4:17: arrival.rate: 0/s is out of range" run "$D/rate-zero.yaml"
expect_usage_error "think in an open loop" "^$D/rate-think.yaml:5:17: arrival.rate: an open-loop run takes no workload.think" run "$D/rate-think.yaml"
expect_usage_error "directory" "^$D/a-directory: is a directory" run "$D/a-directory"
expect_usage_error "missing file" "^$D/nope.yaml: cannot open: No such file" run "$D/nope.yaml"
# partition shapes (docs/faults.md): one that the hosts cannot make, an
# unknown one, a pin of the other shape's, a shape beside groups
hosts2='hosts: {h1: [client:0], h2: [client:1]}
faults:
'
hosts3='hosts: {h1: [client:0], h2: [client:1], h3: [zookeeper]}
faults:
'
printf '%s%s  - {at: 1s, action: partition, shape: bridge, duration: 1s}\n' "$base" "$hosts2" > "$D/shape-hosts.yaml"
printf '%s%s  - {at: 1s, action: partition, shape: ring, duration: 1s}\n' "$base" "$hosts3" > "$D/shape-ring.yaml"
printf '%s%s  - {at: 1s, action: partition, shape: bridge, minority: h1, duration: 1s}\n' "$base" "$hosts3" > "$D/shape-pin.yaml"
printf '%s%s  - {at: 1s, action: partition, shape: bridge, groups: [[h1], [h2]], duration: 1s}\n' "$base" "$hosts3" > "$D/shape-groups.yaml"
expect_usage_error "a bridge of two hosts" "^$D/shape-hosts.yaml:6:5: faults\[0\]: shape bridge needs 3 hosts or more \(hosts: declares 2\)" run "$D/shape-hosts.yaml"
expect_usage_error "an unknown shape" "^$D/shape-ring.yaml:6:40: faults\[0\].shape: unknown shape 'ring' \(valid: majority-minority, bridge\)" run "$D/shape-ring.yaml"
expect_usage_error "minority: with a bridge" "^$D/shape-pin.yaml:6:5: faults\[0\]: minority goes with shape: majority-minority, middle with shape: bridge" run "$D/shape-pin.yaml"
expect_usage_error "a shape and groups" "^$D/shape-groups.yaml:6:5: faults\[0\]: give one of groups, isolate and shape" run "$D/shape-groups.yaml"

# one bad file among good ones: nothing runs, not even the good one
expect_usage_error "good then bad" "^$D/empty.yaml:1:1" run "$SRC/scenarios/oversell.yaml" "$D/empty.yaml"
expect_usage_error "unknown --impl" "unknown implementation 'nope'" run "$SRC/scenarios/oversell.yaml" --impl nope
expect_usage_error "--clients 0" "--clients wants a number" run "$SRC/scenarios/oversell.yaml" --clients 0
expect_usage_error "unknown option" "unknown or incomplete option '--frobnicate'" run "$SRC/scenarios/oversell.yaml" --frobnicate
expect_usage_error "bad --redis" "bad Redis address 'nohost'" run "$SRC/scenarios/oversell.yaml" --redis nohost
expect_usage_error "no scenario" "no scenario given" run
expect_usage_error "unknown command" "unknown command 'frob'" frob

# three typos in one file, and one in --impl: every one is told at once, each with
# the name it is nearest to, and nothing starts
cat > "$D/typos.yaml" <<'YAML'
name: typos
impls: [redis-lua, zk-sequentail]
clinets: 4
lock: {ttl: 2s, retry: fixd}
YAML
ERR=$("$LOCKLAB" run "$D/typos.yaml" --impl redis-lau --out "$WORK/results" 2>&1 >/dev/null)
expect_eq "three typos: exit code" "$?" 2
expect_eq "... each told, with a suggestion" "$(printf '%s\n' "$ERR" | grep -cE \
    "^$D/typos.yaml:(2:20: unknown implementation 'zk-sequentail'.*did you mean 'zk-sequential'|3:1: unknown key 'clinets'.*did you mean 'clients'|4:24: unknown value 'fixd' for lock.retry.*did you mean 'fixed')\?$")" 3
expect_eq "... and the --impl typo too" "$(printf '%s\n' "$ERR" | grep -c "\-\-impl: unknown implementation 'redis-lau'.*did you mean 'redis-lua'")" 1
# a file with more errors than are shown says how many more there were
{ echo "name: many"; echo "impls: [redis-lua]"; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "bogus$i: 1"; done; } > "$D/many.yaml"
ERR=$("$LOCKLAB" run "$D/many.yaml" --out "$WORK/results" 2>&1 >/dev/null)
expect_eq "twelve errors: exit code" "$?" 2
expect_eq "... ten shown" "$(printf '%s\n' "$ERR" | grep -c "unknown key 'bogus")" 10
expect_eq "... and the rest counted" "$(printf '%s\n' "$ERR" | grep -c "many.yaml: 2 more errors not shown")" 1

check "no results directory created" test ! -e "$WORK/results"
expect_no_orphans "after bad input"
expect_no_temp_dirs "after bad input"

# --help on every command: exit 0 and a usage line
for cmd in "" "run" "list" "bench"; do
    out=$("$LOCKLAB" $cmd --help 2>&1)
    rc=$?
    expect_eq "locklab $cmd --help exits 0" "$rc" 0
    check "locklab $cmd --help prints usage" grep -q "^usage: locklab" <<<"$out"
done

# environment failures are exit 3, also before anything runs
err=$(LOCKLAB_REDIS_SERVER=/nonexistent/redis-server "$LOCKLAB" run "$SRC/scenarios/oversell.yaml" --out "$WORK/results" 2>&1 >/dev/null)
expect_eq "missing redis-server: exit code" "$?" 3
check "missing redis-server: says so" grep -q "/nonexistent/redis-server not found" <<<"$err"
err=$("$LOCKLAB" run "$SRC/scenarios/oversell.yaml" --redis 127.0.0.1:1 --out "$WORK/results" 2>&1 >/dev/null)
expect_eq "unreachable --redis: exit code" "$?" 3
check "unreachable --redis: says so" grep -q "cannot connect to Redis at 127.0.0.1:1" <<<"$err"
expect_no_orphans "after environment failures"
expect_no_temp_dirs "after environment failures"
finish
