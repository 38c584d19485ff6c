#!/bin/sh
# env.sh - an adapter for tests/it_adapters.sh that checks its environment
# (docs/adapters.md): the variables named in its arguments must be set and
# look like addresses (host:port[,host:port...]), or a name
# (LOCKLAB_SENTINEL_MASTER), or a number (*_MS); LOCKLAB_CLIENT must be below
# LOCKLAB_CLIENTS. Then it grants every acquire (one client per run: no
# exclusion needed). A missing or malformed variable is an `error` reply
# naming it, which the test sees as the run's first error.
bad=""
for v in "$@"; do
    eval "val=\${$v:-}"
    case $v in
    LOCKLAB_SENTINEL_MASTER) echo "$val" | grep -Eq '^[A-Za-z0-9_.-]+$' || bad="$bad $v=$val" ;;
    *_MS) echo "$val" | grep -Eq '^[0-9]+$' || bad="$bad $v=$val" ;;
    *) echo "$val" | grep -Eq '^[^,:]+:[0-9]+(,[^,:]+:[0-9]+)*$' || bad="$bad $v=$val" ;;
    esac
done
[ -n "${LOCKLAB_CLIENT:-}" ] && [ "${LOCKLAB_CLIENT:-x}" -lt "${LOCKLAB_CLIENTS:-0}" ] ||
    bad="$bad LOCKLAB_CLIENT=${LOCKLAB_CLIENT:-} LOCKLAB_CLIENTS=${LOCKLAB_CLIENTS:-}"
echo ready
while read -r verb rest; do
    if [ -n "$bad" ]; then echo "error environment:$bad"; continue; fi
    case $verb in
    acquire) echo granted ;;
    release) echo released ;;
    quit) exit 0 ;;
    esac
done
