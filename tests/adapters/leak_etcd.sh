#!/bin/sh
# leak_etcd.sh - an adapter for tests/it_adapters_etcd.sh that leaves a
# lock behind on etcd, as a library's key from an earlier run would be: at
# its first acquire it puts LOCKLAB_ETCD_PREFIX KEY and a key under
# LOCKLAB_ETCD_PREFIX KEY/ with etcdctl (which finds the members in
# ETCDCTL_ENDPOINTS by itself), without a lease, so nothing but locklab's
# clearing before the next run removes them; once etcdctl reads both back
# it writes KEY to leak.held beside this file. Then it grants every acquire
# (one client per run: no exclusion needed).
here=$(cd "$(dirname "$0")" && pwd)
echo ready
started=""
while read -r verb key rest; do
    case $verb in
    acquire)
        if [ -z "$started" ]; then
            started=1
            k=$LOCKLAB_ETCD_PREFIX$key
            ETCDCTL_API=3 etcdctl put "$k" leaked >/dev/null &&
                ETCDCTL_API=3 etcdctl put "$k/waiter" leaked >/dev/null &&
                [ "$(ETCDCTL_API=3 etcdctl get --prefix --keys-only "$k" | grep -c .)" = 2 ] &&
                echo "$key" > "$here/leak.held"
        fi
        echo granted ;;
    release) echo released ;;
    quit) exit 0 ;;
    esac
done
