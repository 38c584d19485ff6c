#!/bin/sh
# hangs.sh - a broken adapter for tests/it_adapters.sh: ready, then it
# never answers an acquire (it keeps reading and says nothing), as a
# library stuck on a lost connection. locklab must give up after WAIT_MS
# plus the grace, say error, and kill it.
echo ready
while read -r line; do :; done
