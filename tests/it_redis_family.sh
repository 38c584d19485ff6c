# it_redis_family.sh - the shipped ttl-vs-business and reentrant scenarios on
# real redis-servers: TTL-only designs lose the lock under long business
# time (and redis-set-del deletes the next holder's lock), renewing designs
# keep it; reentrant designs grant every nested acquire, the others end
# blocked - reported, not hung.
. "$(dirname "$0")/lib.sh"

OUT=$WORK/results
"$LOCKLAB" run "$SRC/scenarios/ttl-vs-business.yaml" --out "$OUT" --quiet
expect_eq "ttl-vs-business: every expectation met (exit 0)" "$?" 0
S=$OUT/latest/summary.json
for impl in redis-set-del redis-get-del redis-lua; do
    r=results.impl=$impl
    expect_violation "ttl-vs-business: $impl" $r
    expect_gt "ttl-vs-business: $impl releases found the lock gone" "$(jget "$S" $r.ops.release_not_owner)" 0
    expect_gt "ttl-vs-business: $impl polled" "$(jget "$S" $r.wakeups_per_release)" 0
done
expect_gt "ttl-vs-business: redis-set-del deleted another holder's lock" \
    "$(jget "$S" results.impl=redis-set-del.ops.release_deleted_other)" 0
expect_eq "ttl-vs-business: redis-lua never deletes another holder's lock" \
    "$(jget "$S" results.impl=redis-lua.ops.release_deleted_other)" 0
for impl in redis-watchdog redis-reentrant redisson; do
    r=results.impl=$impl
    expect_safe "ttl-vs-business: $impl" $r 8
    expect_gt "ttl-vs-business: $impl renewed" "$(jget "$S" $r.lock_stats.renewals)" 0
done
expect_gt "ttl-vs-business: redisson woken by pub/sub" "$(jget "$S" results.impl=redisson.lock_stats.notifications)" 0
expect_eq "ttl-vs-business: redisson does not poll" "$(jget "$S" results.impl=redisson.lock_stats.polls)" 0
# MariaDB: the unique row's lease is taken over; the session locks have none
expect_violation "ttl-vs-business: mysql-unique" results.impl=mysql-unique
expect_gt "ttl-vs-business: mysql-unique releases found the row taken over" \
    "$(jget "$S" results.impl=mysql-unique.ops.release_not_owner)" 0
for impl in mysql-for-update mysql-get-lock; do
    expect_safe "ttl-vs-business: $impl" results.impl=$impl 8
done

"$LOCKLAB" run "$SRC/scenarios/reentrant.yaml" --out "$OUT" --quiet
expect_eq "reentrant: every expectation met (exit 0)" "$?" 0
S=$OUT/latest/summary.json
for impl in redis-reentrant redisson; do
    expect_nested_granted "reentrant: $impl" results.impl=$impl 6 3
done
for impl in redis-setnx-expire redis-lua redis-watchdog; do
    r=results.impl=$impl
    expect_nested_blocked "reentrant: $impl" $r
    expect_eq "reentrant: $impl no crash" "$(jget "$S" $r.clients_status.crashed)" 0
done
# MariaDB: GET_LOCK counts nested holds; the unique row waits on itself;
# FOR UPDATE's nested BEGIN commits the outer transaction and frees the row
expect_nested_granted "reentrant: mysql-get-lock" results.impl=mysql-get-lock 6 3
expect_nested_blocked "reentrant: mysql-unique" results.impl=mysql-unique
expect_violation "reentrant: mysql-for-update" results.impl=mysql-for-update
expect_no_orphans "after the Redis family"
expect_no_temp_dirs "after the Redis family"
finish
