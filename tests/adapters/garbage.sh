#!/bin/sh
# garbage.sh - a broken adapter for tests/it_adapters.sh: ready, then it
# answers an acquire with a line that is not the protocol's. locklab must
# say error and quote the line.
echo ready
read -r line
echo "OK lock taken (maybe)"
while read -r line; do :; done
