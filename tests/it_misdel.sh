# it_misdel.sh - `misdel` (locks taken from their holder by someone else)
# counted from the evidence the race leaves, and checked against the truth
# as the lock store saw it.
#
# The failpoint redis-get-del/before-del widens the window between the GET
# that finds the lock ours and the DEL: with a 200 ms TTL, 100 ms business
# and a 150 ms stall there, the lock expires during the stall, the waiter
# takes it, and the late DEL removes the waiter's lock; the waiter's own
# release then finds its lock gone although its TTL has not run out. The
# victim entered after the deleter's exit mark, which the old, interval-only
# count could never see.
#
# Ground truth: every command on the lock key, as MONITOR saw it in the
# store's own order and clock, replayed: a SET NX was granted when that
# connection's next command on the key is the release's GET (a refused one
# is followed by another SET), and a DEL of a live key whose value another
# connection set is a misdelete. The lab's count must equal it, and be > 0.
# redis-lua under the same stall (before its compare-and-delete) must stay
# at 0: its release finds the lock expired and deletes nothing.
. "$(dirname "$0")/lib.sh"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/lua.yaml" <<'YAML'
name: misdel-lua
impls: [redis-lua]
clients: 2
run: {ops_per_client: 8, max_duration: 30s}
lock: {key: lua-lock, ttl: 200ms, wait: 10s, retry_interval: 5ms}
workload: {kind: counter, business: 100ms}
expect: {"*": any}
YAML
sed -e 's/misdel-lua/misdel-get-del/; s/redis-lua/redis-get-del/; s/lua-lock/gd-lock/' \
    "$D/lua.yaml" > "$D/gd.yaml"

export LOCKLAB_FAILPOINTS='redis-get-del/before-del=sleep(150ms);redis-lua/before-release=sleep(150ms)'
"$LOCKLAB" run "$D/lua.yaml" "$D/gd.yaml" --out "$WORK/results" --quiet --no-plot &
pid=$!
wait_lock_store "$pid"
end=$((SECONDS + 30))
# the redis-lua scenario runs first (about 2 s): MONITOR is up well before
# the get-del scenario starts, which the capture itself proves below
until redis-cli -p "$port" PING >/dev/null 2>&1 || [ $SECONDS -ge $end ]; do sleep 0.02; done
redis-cli -p "$port" MONITOR > "$WORK/monitor.txt" 2>/dev/null &
mon=$!
wait "$pid"
expect_eq "exit code" "$?" 0
kill "$mon" 2>/dev/null
wait "$mon" 2>/dev/null
unset LOCKLAB_FAILPOINTS
S=$WORK/results/latest/summary.json

# replay the store's view of gd-lock
read -r first grants truth < <(awk -v K='"gd-lock"' '
    $5 == K {
        n++; t[n] = $1; a[n] = $3; c[n] = toupper($4); gsub(/"/, "", c[n])
        if (c[n] == "SET") { ttl[n] = $9; gsub(/"/, "", ttl[n]); ttl[n] /= 1000 }
    }
    END {
        for (i = n; i >= 1; i--) { nxt[i] = later[a[i]]; later[a[i]] = c[i] }
        owner = ""; until_t = 0; grants = 0; misdel = 0
        for (i = 1; i <= n; i++) {
            live = owner != "" && t[i] < until_t
            if (c[i] == "SET" && nxt[i] == "GET") {
                if (live) { print "replay: a grant while the lock was live at " t[i] > "/dev/stderr" }
                owner = a[i]; until_t = t[i] + ttl[i]; grants++
            } else if (c[i] == "DEL" && live) {
                if (a[i] != owner) misdel++
                owner = ""
            }
        }
        print c[1], grants, misdel
    }' "$WORK/monitor.txt")
r=results.impl=redis-get-del
expect_eq "the capture starts with the harness clearing the key" "$first" DEL
expect_eq "replay: one grant per acquire" "$grants" "$(jget "$S" "$r.ops.acquired")"
expect_gt "the failpoint provoked the GET-then-DEL race (store's truth)" "$truth" 0
expect_eq "redis-get-del: misdel equals the store's truth" "$(jget "$S" "$r.ops.release_deleted_other")" "$truth"
expect_eq "redis-get-del: verdict (a deleted lock lets a third holder in)" "$(jget "$S" "$r.verdict")" violation
l=results.impl=redis-lua
expect_gt "redis-lua: the stall made its release find the lock expired" "$(jget "$S" "$l.ops.release_not_owner")" 0
expect_eq "redis-lua: its compare-and-delete took no one's lock" "$(jget "$S" "$l.ops.release_deleted_other")" 0
expect_eq "redis-lua: no overlap (the exit mark comes before the stall)" "$(jget "$S" "$l.safety.violations")" 0
expect_no_orphans "after the misdel runs"
finish
