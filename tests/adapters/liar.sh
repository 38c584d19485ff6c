#!/bin/sh
# liar.sh - a broken adapter for tests/it_adapters.sh: it grants every
# acquire at once, whoever holds the lock. Its protocol is perfect; its
# exclusion is none: the oracle must see two holders (violation).
echo ready
while read -r verb rest; do
    case $verb in
    acquire) echo granted ;;
    release) echo released ;;
    quit) exit 0 ;;
    *) echo "error unknown request" ;;
    esac
done
