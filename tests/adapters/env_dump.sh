#!/bin/sh
# env_dump.sh - an adapter for tests/it_adapters_db.sh and
# it_adapters_etcd.sh that shows the environment a store gives it
# (docs/adapters.md): every LOCKLAB_*, PG* and ETCDCTL_* variable, sorted,
# on its stderr (kept in the run folder), then it grants every acquire (one
# client per run: no exclusion needed).
env | grep -E '^(LOCKLAB_|PG|ETCDCTL_)' | sort >&2
echo ready
while read -r verb rest; do
    case $verb in
    acquire) echo granted ;;
    release) echo released ;;
    quit) exit 0 ;;
    esac
done
