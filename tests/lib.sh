# lib.sh - shared helpers for locklab's shell integration tests.
#
# Sourced by tests/it_*.sh, which CTest runs as: bash it_x.sh LOCKLAB SRC JSON_QUERY.
# Every test gets a private work directory and TMPDIR, so the embedded servers
# locklab starts live under it; at exit any process whose command line still
# mentions that directory is an orphan: it is reported as a failure and killed.

set -u
LOCKLAB=${1:?usage: it_x.sh LOCKLAB SRC JSON_QUERY}
SRC=${2:?}
JQ=${3:?}
WORK=$(mktemp -d /tmp/locklab-it.XXXXXX)
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
unset LOCKLAB_REDIS
PASSES=0
FAILS=0

pass() { PASSES=$((PASSES + 1)); echo "ok   - $*"; }
fail() { FAILS=$((FAILS + 1)); echo "FAIL - $*"; }

# check DESCRIPTION COMMAND...: pass when the command succeeds.
check() {
    local desc=$1
    shift
    if "$@"; then pass "$desc"; else fail "$desc"; fi
}

# jget FILE PATH: one value of a JSON file (see json_query.c).
jget() { "$JQ" "$1" "$2" 2>/dev/null || echo "<missing>"; }

# expect_eq DESCRIPTION ACTUAL EXPECTED
expect_eq() {
    if [ "$2" = "$3" ]; then pass "$1 ($2)"; else fail "$1: got '$2', expected '$3'"; fi
}

# expect_gt DESCRIPTION ACTUAL LIMIT: numeric ACTUAL > LIMIT
expect_gt() {
    if awk -v a="$2" -v b="$3" 'BEGIN { exit !(a + 0 > b + 0) }' 2>/dev/null && [ "$2" != "<missing>" ]; then
        pass "$1 ($2 > $3)"
    else
        fail "$1: got '$2', expected more than $3"
    fi
}

# in_range DESCRIPTION ACTUAL LO HI: numeric LO <= ACTUAL <= HI
in_range() {
    if awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v + 0 >= lo && v + 0 <= hi) }' &&
        [ "$2" != "<missing>" ]; then pass "$1 ($2 in $3..$4)"; else fail "$1: $2 not in $3..$4"; fi
}

# ------------------------------------------------- checks on one run's result
# R is a jget path to one result of the summary.json $S points at
# (results.impl=redis-lua); LABEL starts the description of each check.

# expect_safe LABEL R [N]: verdict safe and no overlapping holders; with N,
# also the counter exact at N.
expect_safe() {
    expect_eq "$1: verdict" "$(jget "$S" "$2.verdict")" safe
    expect_eq "$1: no overlap" "$(jget "$S" "$2.safety.violations")" 0
    [ $# -lt 3 ] || expect_eq "$1: counter exact" "$(jget "$S" "$2.workload.final_value")" "$3"
}

# expect_not_exercised LABEL R: the run's faults could have put the lock at
# stake and none did: verdict not-exercised, no overlap, at stake 0 times.
expect_not_exercised() {
    expect_eq "$1: verdict" "$(jget "$S" "$2.verdict")" not-exercised
    expect_eq "$1: no overlap" "$(jget "$S" "$2.safety.violations")" 0
    expect_eq "$1: never at stake" "$(jget "$S" "$2.at_stake")" 0
}

# expect_exact LABEL R N: expect_safe with the counter at N, and each of the
# N releases found the lock still its own.
expect_exact() {
    expect_safe "$1" "$2" "$3"
    expect_eq "$1: every release owned" "$(jget "$S" "$2.ops.released")" "$3"
}

# expect_violation LABEL R: verdict violation, and the oracle saw
# overlapping holders.
expect_violation() {
    expect_eq "$1: verdict" "$(jget "$S" "$2.verdict")" violation
    expect_gt "$1: overlapping holders" "$(jget "$S" "$2.safety.violations")" 0
}

# expect_nested_granted LABEL R OUTER DEPTH: the reentrant workload ran
# safe: OUTER outer acquires, each granting its DEPTH nested ones in time.
expect_nested_granted() {
    local acquired
    acquired=$(jget "$S" "$2.ops.acquired")
    expect_eq "$1: verdict" "$(jget "$S" "$2.verdict")" safe
    expect_eq "$1: outer acquires" "$acquired" "$3"
    expect_eq "$1: every nested acquire granted" "$(jget "$S" "$2.ops.nested_acquired")" \
        $((acquired * $4))
    expect_eq "$1: no nested timeout" "$(jget "$S" "$2.ops.nested_timeouts")" 0
}

# expect_nested_blocked LABEL R: a design that is not reentrant waited on
# itself: verdict blocked, nested acquires timed out and none was granted,
# with no violation.
expect_nested_blocked() {
    expect_eq "$1: verdict" "$(jget "$S" "$2.verdict")" blocked
    expect_gt "$1: nested acquires timed out" "$(jget "$S" "$2.ops.nested_timeouts")" 0
    expect_eq "$1: no nested acquire granted" "$(jget "$S" "$2.ops.nested_acquired")" 0
    expect_eq "$1: no violation" "$(jget "$S" "$2.safety.violations")" 0
}

# orphans: processes still mentioning the work directory (servers, clients).
orphans() { pgrep -af -- "$WORK" | grep -v "^$$ " || true; }

expect_no_orphans() {
    local left
    left=$(orphans)
    if [ -z "$left" ]; then pass "no server or client process left ($1)"; else fail "processes left ($1): $left"; fi
}

# expect_no_temp_dirs: locklab removed its temporary server directories.
expect_no_temp_dirs() {
    local left
    left=$(ls -A "$TMPDIR" 2>/dev/null)
    if [ -z "$left" ]; then pass "temporary directories removed ($1)"; else fail "left in TMPDIR ($1): $left"; fi
}

# run_ok LABEL SCENARIO...: run locklab into $WORK/results (quiet, no plots),
# expect exit 0 (every expectation met), and point S at the run's summary.json.
run_ok() {
    local label=$1
    shift
    "$LOCKLAB" run "$@" --out "$WORK/results" --quiet --no-plot
    expect_eq "$label: exit code" "$?" 0
    S=$WORK/results/latest/summary.json
}

# expect_signals_clean SCENARIO RUNNING CLIENTS NAME: run SCENARIO, and once
# RUNNING (a command: the store's server runs) succeeds and CLIENTS clients
# run (60 s at most), interrupt locklab (SIGINT: exit 130), then again and
# SIGKILL it: each time nothing it started is left (NAME: the server, for
# the messages).
expect_signals_clean() {
    local scn=$1 running=$2 clients=$3 name=$4 sig pid end rc
    for sig in INT KILL; do
        "$LOCKLAB" run "$scn" --out "$WORK/results-$sig" --quiet --no-plot >/dev/null 2>&1 &
        pid=$!
        end=$((SECONDS + 60))
        until { $running && [ "$(client_pids $pid | wc -l)" -ge "$clients" ]; } || [ $SECONDS -ge $end ]; do
            sleep 0.05
        done
        check "SIG$sig: $name and the clients run" $running
        kill -$sig $pid
        wait $pid
        rc=$?
        [ $sig = INT ] && expect_eq "SIGINT: exit code" "$rc" 130
        end=$((SECONDS + 5))
        while [ -n "$(orphans)" ] && [ $SECONDS -lt $end ]; do sleep 0.05; done
        expect_no_orphans "after SIG$sig"
        check "SIG$sig: no $name left" eval "! $running"
    done
}

# client_pids PID: the client processes of locklab PID (its children that stay
# locklab; the embedded servers exec redis-server or java).
client_pids() { for c in $(pgrep -P "$1"); do [ "$(cat /proc/"$c"/comm 2>/dev/null)" = locklab ] && echo "$c"; done; }

# child_pids PID: every child of locklab PID (servers and clients).
child_pids() { pgrep -P "$1"; }

# wait_store PID N LISTER: wait (30 s at most) until locklab PID has started
# its embedded lock store (its directory is named after its port; sets
# port) and LISTER PID prints at least N processes.
wait_store() {
    local end=$((SECONDS + 30))
    port=""
    until [ -n "$port" ] && [ "$($3 "$1" | wc -l)" -ge "$2" ] || [ $SECONDS -ge $end ]; do
        port=$(ls "$TMPDIR"/locklab-*/ 2>/dev/null | sed -n 's/^lock-store-//p' | head -1)
        sleep 0.02
    done
}

# wait_for SECONDS CMD...: run CMD every 20 ms until it succeeds (0) or
# SECONDS pass (1): a test waits on observed state, then checks that the
# state came.
wait_for() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ $SECONDS -ge $end ] && return 1
        sleep 0.02
    done
}

# fault_line FILE N ACTION WHAT: has a run started with LOCKLAB_PROGRESS=1
# and stderr to FILE printed that its fault N (ACTION, any target) WHAT
# ("fired", "landed", "ended")? Those lines are written as the fault
# engine records them.
fault_line() { grep -qE -- "  fault $2 \($3 [^)]*\): $4 at" "$1" 2>/dev/null; }

# wait_lock_store PID [CLIENTS]: wait_store for at least CLIENTS clients.
wait_lock_store() {
    wait_store "$1" "${2:-0}" client_pids
    check "found the lock store's port and ${2:-0} client(s)" test -n "$port"
}

# run_bg SCENARIO CHILDREN: start locklab on SCENARIO in the background
# ($pid) into a fresh $WORK/results, and wait until the lock store's port is
# known ($port) and CHILDREN processes of locklab run (the servers and the
# clients). Wait for $pid afterwards.
run_bg() {
    rm -rf "$WORK/results"
    "$LOCKLAB" run "$1" --out "$WORK/results" --quiet --no-plot &
    pid=$!
    wait_store "$pid" "$2" child_pids
}

# expect_bad_fault DESCRIPTION ENTRY MESSAGE: a scenario whose faults: list
# holds ENTRY alone (line 4, column 5) is refused before anything starts:
# exit 2, and MESSAGE at 4:N.
expect_bad_fault() {
    printf 'name: bad\nimpls: [redis-lua]\nfaults:\n  - %s\n' "$2" > "$WORK/bad-fault.yaml"
    local msg
    msg=$("$LOCKLAB" run "$WORK/bad-fault.yaml" --out "$WORK/results" 2>&1)
    expect_eq "$1: exit code" "$?" 2
    check "$1: message '$3' at 4:5" grep -q "bad-fault.yaml:4:[0-9]*: .*$3" <<<"$msg"
}

cleanup() {
    local left
    left=$(orphans)
    if [ -n "$left" ]; then
        echo "FAIL - orphan processes at exit: $left"
        pkill -9 -f -- "$WORK" 2>/dev/null
        FAILS=$((FAILS + 1))
    fi
    rm -rf "$WORK"
}

# A test of hosts: root (network namespaces; skipped without, exit 77) and
# nftables (a failure without: scripts/install-deps installs it).
need_hosts() {
    if [ "$(id -u)" != 0 ]; then
        echo "skipping: hosts need root (network namespaces)"
        exit 77
    fi
    if ! command -v nft >/dev/null && [ ! -x /usr/sbin/nft ]; then
        fail "nft is not installed (scripts/install-deps installs nftables)"
        finish
    fi
}

finish() {
    cleanup
    trap - EXIT
    echo "$(basename "$0"): $PASSES passed, $FAILS failed"
    [ "$FAILS" -eq 0 ]
    exit $?
}

trap 'cleanup' EXIT
