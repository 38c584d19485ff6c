#!/bin/sh
# renewal.sh - an adapter for tests/it_adapters.sh that checks the renewal
# settings it is told (docs/adapters.md, Environment): LOCKLAB_WATCHDOG_LEASE_MS
# and LOCKLAB_ETCD_KEEPALIVE must be what its two arguments say ("unset": not
# in its environment). Then it grants every acquire (one client per run: no
# exclusion needed); a setting not as expected is an `error` reply naming
# what it saw, which the test sees as the run's first error.
got_lease=${LOCKLAB_WATCHDOG_LEASE_MS-unset}
got_keepalive=${LOCKLAB_ETCD_KEEPALIVE-unset}
bad=""
[ "$got_lease" = "$1" ] || bad="$bad LOCKLAB_WATCHDOG_LEASE_MS=$got_lease (expected $1)"
[ "$got_keepalive" = "$2" ] || bad="$bad LOCKLAB_ETCD_KEEPALIVE=$got_keepalive (expected $2)"
echo ready
while read -r verb rest; do
    if [ -n "$bad" ]; then echo "error renewal settings:$bad"; continue; fi
    case $verb in
    acquire) echo granted ;;
    release) echo released ;;
    quit) exit 0 ;;
    esac
done
