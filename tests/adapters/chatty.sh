#!/bin/sh
# chatty.sh - a test adapter for tests/it_adapters.sh: it grants every
# acquire at once (run it on per-client keys) and logs each request on
# stderr, naming its client, so that the test finds those lines in the run
# folder. With `flood` it first writes 100 KiB of x on stderr, more than
# locklab keeps (64 KiB), then a line that must not be kept.
if [ "$1" = flood ]; then
    head -c 102400 /dev/zero | tr '\0' x >&2
    echo "chatty: past the bound" >&2
fi
echo ready
while read -r verb rest; do
    echo "chatty: client $LOCKLAB_CLIENT got $verb $rest" >&2
    case $verb in
    acquire) echo granted ;;
    release) echo released ;;
    quit) exit 0 ;;
    *) echo "error unknown request" ;;
    esac
done
