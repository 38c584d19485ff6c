# it_ceiling_redis.sh - `locklab bench ceiling` on Redis, short: the ceiling
# is redis-benchmark on the two commands redis-lua sends (SET NX PX and the
# release script by EVALSHA, loaded first: an EVALSHA of an unloaded script
# would fail and leave no rate), locklab's side in client groups by default
# (40 clients in one process) and one process per client with
# --clients-per-process 1; a bad group size is refused with exit 2.
. "$(dirname "$0")/lib.sh"

"$LOCKLAB" bench ceiling --clients 40 --seconds 0.5 > "$WORK/out.txt" 2>&1
expect_eq "exit code" "$?" 0
row=$(awk '$1 == 40 { print }' "$WORK/out.txt")
expect_gt "a SET rate" "$(echo "$row" | awk '{print $2}')" 100
expect_gt "an EVALSHA rate" "$(echo "$row" | awk '{print $3}')" 100
expect_gt "locklab's rate" "$(echo "$row" | awk '{print $5}')" 100
in_range "the ratio" "$(echo "$row" | awk '{print $6}')" 0.01 5
expect_eq "40 clients in one group process" "$(echo "$row" | awk '{print $9}')" 1
expect_gt "an RSS in MiB" "$(echo "$row" | awk '{print $10}')" 1
expect_eq "says the group size" "$(grep -c 'client groups of at most 10000' "$WORK/out.txt")" 1

"$LOCKLAB" bench ceiling --clients 3 --seconds 0.3 --clients-per-process 1 > "$WORK/one.txt" 2>&1
expect_eq "one process per client: exit code" "$?" 0
expect_eq "one process per client: 3 processes" \
    "$(awk '$1 == 3 { print $9 }' "$WORK/one.txt")" 3

"$LOCKLAB" bench ceiling --clients 4 --clients-per-process 0 > "$WORK/bad.txt" 2>&1
expect_eq "group size 0: exit 2" "$?" 2
finish
