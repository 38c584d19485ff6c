# it_ceiling_zk.sh - `locklab bench ceiling --backend zookeeper` on a short
# run: the bare loop of N sessions (bench/bare_zk_many.c) and zk-sequential
# with N clients on per-client keys, one row per client count, each with a
# ceiling, locklab's rate and their ratio between 0 and 2, locklab's side in
# client groups (zk-sequential has asynchronous hooks: 16 clients are one
# process, not 16); a store without a ceiling is refused with exit 2.
. "$(dirname "$0")/lib.sh"

"$LOCKLAB" bench ceiling --backend zookeeper --clients 4,16 --seconds 1 > "$WORK/out.txt" 2>&1
expect_eq "exit code" "$?" 0
for n in 4 16; do
    row=$(awk -v n="$n" '$1 == n && $2 == "-" { print }' "$WORK/out.txt")
    expect_gt "$n clients: a ceiling" "$(echo "$row" | awk '{print $4}')" 100
    expect_gt "$n clients: locklab's rate" "$(echo "$row" | awk '{print $5}')" 10
    in_range "$n clients: the ratio" "$(echo "$row" | awk '{print $6}')" 0.01 1.99
    expect_eq "$n clients: one group process" "$(echo "$row" | awk '{print $9}')" 1
done
"$LOCKLAB" bench ceiling --backend nosuch --clients 4 > "$WORK/bad.txt" 2>&1
expect_eq "an unknown store: exit 2" "$?" 2
expect_eq "an unknown store: says which are known" "$(grep -c 'redis, zookeeper' "$WORK/bad.txt")" 1
finish
