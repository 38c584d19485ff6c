# it_docs.sh - the documentation agrees with the program, and its links hold.
#
# The options and keys have one source of truth, the program: each
# command's --help (from its option table) and `locklab list --options`
# (printed from the scenario loader's option rows and every design's). This
# test fails when the man page, README.md's command summary or the key
# reference in docs/scenarios.md lacks one of them, or names one the program
# does not have; when a relative link in README.md, docs/*.md,
# docs/records/*.md (scripts/records writes them) or results/README.md
# points at no file (or heading) of the repository, or anywhere outside
# it; when a source comment cites a .md file that is not in the
# repository; and when README.md grows past 300 lines. No server is
# started.
. "$(dirname "$0")/lib.sh"

MAN=$SRC/docs/locklab.1
README=$SRC/README.md

# long_opts: the --options in stdin, one per line, sorted, without --help.
long_opts() { grep -oE -- '--[a-z][a-z0-9-]*' | grep -vx -- '--help' | sort -u; }

# man_section TITLE: the man page's text from `.SS "TITLE` to the next .SS/.SH.
man_section() {
    awk -v t=".SS \"$1" 'index($0, t) == 1 { f = 1; next } /^\.S[SH]/ { f = 0 } f' "$MAN"
}

# man_opts TITLE: the options the man page gives under that section.
man_opts() { man_section "$1" | sed 's/\\-/-/g' | long_opts; }

# same_set WHAT WANT HAVE: every line of WANT is in HAVE and the reverse.
same_set() {
    local missing extra
    missing=$(comm -23 <(echo "$2") <(echo "$3") | tr '\n' ' ')
    extra=$(comm -13 <(echo "$2") <(echo "$3") | tr '\n' ' ')
    expect_eq "$1: in --help but not in the man page" "${missing:-none}" none
    expect_eq "$1: in the man page but not in --help" "${extra:-none}" none
}

# 1. Every command's options: --help against the man page and README.md.
check_command() { # TITLE, then the --help output on stdin
    local title=$1 help
    help=$(long_opts)
    expect_gt "$title: --help lists options" "$(echo "$help" | grep -c .)" 0
    same_set "$title" "$help" "$(man_opts "$title")"
    local o missing=""
    for o in $help; do grep -qF -- "$o" "$README" || missing="$missing $o"; done
    expect_eq "$title: every option in README.md's command summary" "${missing:-none}" none
}
for cmd in run list plot "baseline save" compare; do
    check_command "locklab $cmd" < <("$LOCKLAB" $cmd --help) # not a pipe: no subshell
done
# bench: the three benchmarks share one --help page, so they are compared
# as one set against the man page's three bench sections.
bench_help=$({ "$LOCKLAB" bench --help; "$LOCKLAB" bench handoff --help
               "$LOCKLAB" bench adapter --help; "$LOCKLAB" bench ceiling --help; } | long_opts)
bench_man=$({ man_opts "locklab bench overhead"; man_opts "locklab bench handoff"
              man_opts "locklab bench adapter"; man_opts "locklab bench ceiling"; } | sort -u)
same_set "locklab bench" "$bench_help" "$bench_man"
for o in $bench_help; do grep -qF -- "$o" "$README" || fail "README.md lacks bench's $o"; done
for s in run list plot "bench overhead" "bench handoff" "bench adapter" "bench ceiling" "baseline save" compare; do
    check "the man page has a section for locklab $s" grep -q "^\.SS \"locklab $s\"" "$MAN"
done

# 2. Every scenario key: `locklab list --options` against the man page's
# SCENARIO FORMAT and the table in docs/scenarios.md.
keys=$("$LOCKLAB" list --options | awk '{ print $1 }' | sort -u)
expect_gt "list --options prints the keys" "$(echo "$keys" | grep -c .)" 30
check "list --options includes a design's own key" grep -qx 'lock.watchdog_lease' <<<"$keys"
check "list --options includes a fault entry's key" grep -qx 'faults\[\].when' <<<"$keys"
man_keys=$(awk '/^\.SH SCENARIO FORMAT/ { f = 1; next } /^\.SH/ { f = 0 }
                f && prev == ".TP" && /^\.B / { sub(/^\.B /, ""); print } { prev = $0 }' "$MAN" |
           sed 's/\\-/-/g' | sort -u)
missing=$(comm -23 <(echo "$keys") <(echo "$man_keys") | tr '\n' ' ')
extra=$(comm -13 <(echo "$keys") <(echo "$man_keys") | tr '\n' ' ')
expect_eq "scenario keys missing from the man page" "${missing:-none}" none
expect_eq "keys in the man page that the loader does not take" "${extra:-none}" none
doc_keys=$(awk '/^## Every key/ { f = 1; next } /^## / { f = 0 }
                f && /^\| `/ { split($0, c, "`"); print c[2] }' "$SRC/docs/scenarios.md" | sort -u)
missing=$(comm -23 <(echo "$keys") <(echo "$doc_keys") | tr '\n' ' ')
extra=$(comm -13 <(echo "$keys") <(echo "$doc_keys") | tr '\n' ' ')
expect_eq "scenario keys missing from docs/scenarios.md" "${missing:-none}" none
expect_eq "keys in docs/scenarios.md that the loader does not take" "${extra:-none}" none

# 3. Links. slugs FILE: the anchors its headings get (GitHub's rule:
# lower case, punctuation dropped, spaces to dashes).
slugs() {
    grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ +//' | tr 'A-Z' 'a-z' |
        sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}
bad=""
n_links=0
for md in "$README" "$SRC"/docs/*.md "$SRC"/docs/records/*.md "$SRC/results/README.md"; do
    dir=$(dirname "$md")
    # [text](target) and ![alt](target), outside code blocks.
    links=$(awk '/^ *```/ { code = !code; next } !code' "$md" |
            grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\(//; s/\)$//')
    for link in $links; do
        n_links=$((n_links + 1))
        rel=${md#"$SRC"/}
        case $link in
        http:* | https:* | mailto:* | ftp:*)
            bad="$bad $rel:$link(outside)"; continue ;;
        *../shared*) bad="$bad $rel:$link(../shared)"; continue ;;
        esac
        file=${link%%#*}
        anchor=""
        [ "$file" != "$link" ] && anchor=${link#*#}
        if [ -z "$file" ]; then target=$md; else target=$dir/$file; fi
        real=$(realpath -m "$target")
        case $real in
        "$(realpath "$SRC")"/*) ;;
        *) bad="$bad $rel:$link(outside)"; continue ;;
        esac
        if [ ! -e "$real" ]; then bad="$bad $rel:$link(missing)"; continue; fi
        if [ -n "$anchor" ] && ! slugs "$real" | grep -qxF -- "$anchor"; then
            bad="$bad $rel:$link(no-such-heading)"
        fi
    done
done
expect_gt "links found in README.md and docs/" "$n_links" 20
expect_eq "every relative link resolves in the repository" "${bad:-none}" none

# 4. Source comments cite only files that exist.
cited=""
while IFS=: read -r file ref; do
    case $ref in
    SRC/*) continue ;; # a test's own "$SRC/..." path
    esac
    [ -e "$SRC/$ref" ] || [ -e "$(dirname "$file")/$ref" ] || cited="$cited ${file#"$SRC"/}:$ref"
done < <(grep -roE '[A-Za-z0-9_./-]*[A-Za-z0-9_-]+\.md\b' "$SRC"/harness "$SRC"/impls "$SRC"/common \
             "$SRC"/bench "$SRC"/scripts "$SRC"/tests/*.sh "$SRC"/tests/*.c \
             "$SRC"/adapters/*.py "$SRC"/adapters/node/*.js "$SRC"/adapters/curator/*.java \
             "$SRC"/CMakeLists.txt "$SRC"/Makefile 2>/dev/null)
expect_eq "source comments cite only files in the repository" "${cited:-none}" none

# 5. README.md is the short way in; machine asides live in docs/benchmarks.md.
in_range "README.md lines" "$(wc -l < "$README")" 1 300
asides=$(grep -lEi 'this (machine|vm)\b|on this 2-core' "$README" "$SRC"/docs/*.md |
         grep -v '/benchmarks\.md$' | sed "s|$SRC/||" | tr '\n' ' ')
expect_eq "no 'this machine' asides outside docs/benchmarks.md" "${asides:-none}" none

finish
