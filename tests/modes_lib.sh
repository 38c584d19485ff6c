# modes_lib.sh - what tests/it_modes.sh and tests/it_modes_stores.sh share:
# reading a verdict of either mode and checking that a design got the same
# one in both, and that a fault aimed in a group hit one client of it.
# Sourced after lib.sh; S (and SP, the partition's run) point at
# summary.json.

# verdict SCENARIO IMPL [FENCING]: the verdict of one result
verdict() {
    local sel="scenario=$1,impl=$2"
    [ -n "${3:-}" ] && sel="$sel,fencing=$3"
    case $1 in part-*) jget "$SP" "results.$sel.verdict" ;; *) jget "$S" "results.$sel.verdict" ;; esac
}
# same_verdicts "SCENARIO IMPL FENCING|- VERDICT"...: that verdict in both modes
same_verdicts() {
    local row f
    for row in "$@"; do
        set -- $row
        f=$3
        [ "$f" = - ] && f=
        expect_eq "$1, $2 ${f:+(fencing $f) }one process per client" "$(verdict "$1-1" "$2" $f)" "$4"
        expect_eq "$1, $2 ${f:+(fencing $f) }in one group" "$(verdict "$1-4" "$2" $f)" "$4"
    done
}
# in_group SELECTOR...: the fault hit one client of the group alone
in_group() {
    local sel hit
    for sel in "$@"; do
        hit=$(jget "$S" "results.$sel.hit")
        check "$sel hit one client of the group ($hit)" \
            grep -qx 'client [0-3] (of group 0, pid [0-9]*)' <<< "$hit"
    done
}
