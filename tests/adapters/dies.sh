#!/bin/sh
# dies.sh - a broken adapter for tests/it_adapters.sh: ready, then it dies
# at its first acquire (after a last word on stderr), as a library that
# crashes does. locklab must say error and quote how it ended.
echo ready
read -r line
echo "fixture: dying on purpose at '$line'" >&2
exit 3
