#!/bin/sh
# longerr.sh - an adapter for tests/it_adapters.sh whose every acquire is
# answered `error begin xxx...xxx end`: 1,006 bytes on the line, longer than
# any cut locklab made before its error texts were kept whole (87
# characters), shorter than the protocol's 1024-byte line.
text="begin $(head -c 990 /dev/zero | tr '\0' x) end"
echo ready
while read -r verb rest; do
    case $verb in
    acquire) echo "error $text" ;;
    release) echo released ;;
    quit) exit 0 ;;
    esac
done
