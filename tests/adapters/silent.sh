#!/bin/sh
# silent.sh - a broken adapter for tests/it_adapters.sh: it never says
# ready. locklab must give up after the adapter's ready_timeout, say
# error, and leave nothing running.
while read -r line; do :; done
