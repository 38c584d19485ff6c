# it_install.sh - locklab installed under a prefix works without its source
# or build tree: `cmake --install` into a scratch prefix, then the installed
# binary lists the installed scenarios, draws with the installed gnuplot
# scripts, finds its bare loop in libexec/locklab, and runs a scenario; the
# man page is there. `cpack -G DEB` builds a package whose contents and
# declared dependencies are checked.
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$LOCKLAB")
P=$WORK/prefix
cmake --install "$BUILD" --prefix "$P" >/dev/null
expect_eq "install: exit code" "$?" 0
L=$P/bin/locklab
check "install: bin/locklab" test -x "$L"
check "install: the bare Redis loop in libexec/locklab" test -x "$P/libexec/locklab/locklab-bare-redis"
check "install: the clock shim in libexec/locklab" test -r "$P/libexec/locklab/liblocklab-clockshim.so"
check "install: the man page" test -r "$P/share/man/man1/locklab.1"
expect_eq "install: the man page has the scenario format" \
    "$(grep -c '^\.SH SCENARIO FORMAT' "$P/share/man/man1/locklab.1")" 1

# from a directory with nothing of the project in it
cd "$WORK" || exit 1
expect_eq "installed list: shipped scenarios from the prefix, by path from here" \
    "$("$L" list 2>/dev/null | grep -cE "^  prefix/share/locklab/scenarios/oversell\.yaml ")" 1
(cd / && "$L" list 2>/dev/null) > "$WORK/list-elsewhere"
expect_eq "installed list: elsewhere, by path from the install directory" \
    "$(grep -c "^scenarios (paths from $(realpath "$P")/share/locklab;" "$WORK/list-elsewhere")/$(
       grep -cE '^  scenarios/(oversell|demo/1-oversell)\.yaml ' "$WORK/list-elsewhere")" 1/2
expect_eq "installed plot --help: scripts from the prefix" \
    "$("$L" plot --help | grep -c "$P/share/locklab/plots")" 1
cat > "$WORK/tiny.yaml" <<'YAML'
name: tiny
impls: [none, redis-lua]
clients: 4
run: {ops_per_client: 20}
workload: {kind: counter, business: 1ms}
expect: {none: any, redis-lua: safe}
YAML
"$L" run "$WORK/tiny.yaml" --out "$WORK/results" --quiet
expect_eq "installed run: exit code" "$?" 0
S=$WORK/results/latest/summary.json
expect_eq "installed run: redis-lua safe" "$(jget "$S" results.impl=redis-lua.verdict)" safe
check "installed run: plots drawn with the installed scripts" test -s "$WORK/results/latest/tiny-latency.png"
"$L" bench overhead --rounds 1 --seconds 0.3 > "$WORK/bench.txt" 2>&1
expect_eq "installed bench overhead: its bare loop found" "$(grep -c 'median' "$WORK/bench.txt")" 1

# the Debian package
cpack --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg" >/dev/null 2>&1
expect_eq "cpack: exit code" "$?" 0
DEB=$(ls "$WORK"/pkg/locklab_*.deb 2>/dev/null | head -1)
check "cpack: a .deb" test -n "$DEB"
if [ -n "$DEB" ]; then
    contents=$(dpkg-deb -c "$DEB")
    for f in ./usr/bin/locklab ./usr/libexec/locklab/locklab-bare-redis \
             ./usr/share/locklab/scenarios/oversell.yaml ./usr/share/locklab/plots/common.gp \
             ./usr/share/man/man1/locklab.1; do
        expect_eq "deb: holds $f" "$(echo "$contents" | awk '{print $6}' | grep -cx "$f")" 1
    done
    depends=$(dpkg-deb -f "$DEB" Depends)
    for d in libhiredis libyaml libjansson libzookeeper-mt redis-server; do
        expect_eq "deb: depends on $d" "$(echo "$depends" | grep -c "$d")" 1
    done
fi
expect_no_orphans "after the installed runs"
finish
