# it_ci_recipe.sh - docs/ci.md's recipe for users' CI works as written.
#
# The workflow (docs/ci/github-actions.yml): it declares the permissions its
# steps need (contents: read for the checkouts, checks: write for the JUnit
# reporter) and no more; its build step installs a Debian package for every
# library CMakeLists.txt requires (found through pkg-config and dpkg -S on
# this machine), names the .deb as cpack does, and every step's script
# parses. Its scenario step runs here verbatim, from a directory laid out as
# the workflow's (ci/ holding the example files), with the built locklab as
# `locklab`: the example scenarios (a team's own Lua scripts as
# redis-script) meet their expectations with exit 0, a JUnit file with a
# testcase per result, and every path the artifact step keeps exists. A
# changed verdict (the same file expecting safe under the pause) exits 1
# and the JUnit file says which testcase failed. What is not run here:
# GitHub's own actions, and the build and the .deb (tests/it_install.sh
# builds and installs the .deb).
. "$(dirname "$0")/lib.sh"

WF=$SRC/docs/ci/github-actions.yml
PY=/usr/bin/python3

# wf EXPR: a Python expression over the workflow (w), printed.
wf() { "$PY" -c 'import sys, yaml; w = yaml.safe_load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$WF" "$1"; }
# step NAME KEY: a step's run script (KEY run) or a `with:` value.
step() {
    wf "next((s.get('run') if '$2' == 'run' else s.get('with', {}).get('$2')) for s in w['jobs']['locks']['steps'] if s.get('name') == '$1')"
}

check "workflow: YAML that parses" wf "w['name']"
expect_eq "workflow: permissions, exactly" \
    "$(wf "sorted(w['permissions'].items())")" "[('checks', 'write'), ('contents', 'read')]"
check "workflow: the JUnit reporter it needs checks: write for is there" \
    grep -q 'uses: mikepenz/action-junit-report' "$WF"

# the build step: every library CMakeLists.txt requires comes from a package it installs
BUILD_STEP=$(step "build and install locklab" run)
check "workflow: a build step" test -n "$BUILD_STEP"
check "workflow: the build step is valid shell" bash -n <<<"$BUILD_STEP"
pkgs=$(grep -oE '[a-z0-9][a-z0-9.+-]+' <<<"$BUILD_STEP" | sort -u)
missing=""
for mod in $(grep -oE 'pkg_check_modules\([A-Z_]+ REQUIRED IMPORTED_TARGET [^)]+\)' \
                 "$SRC/CMakeLists.txt" | awk '{ print $4 }' | tr -d ')'); do
    pc=$(pkg-config --variable=pcfiledir "$mod")/$mod.pc
    pkg=$(dpkg -S "$pc" 2>/dev/null | head -1 | cut -d: -f1)
    grep -qx -- "$pkg" <<<"$pkgs" || missing="$missing $mod(${pkg:-unknown})"
done
for lib in $(grep -oE 'find_library\([A-Z_]+ [a-z_]+\)' "$SRC/CMakeLists.txt" | awk '{ print $2 }' | tr -d ')'); do
    pkg=$(dpkg -S "*/lib$lib.so" 2>/dev/null | head -1 | cut -d: -f1)
    grep -qx -- "$pkg" <<<"$pkgs" || missing="$missing $lib(${pkg:-unknown})"
done
expect_eq "workflow: a package for every library the build requires" "${missing:-none}" none
name=$(sed -n 's/^set(CPACK_PACKAGE_NAME \(.*\))$/\1/p' "$SRC/CMakeLists.txt")
check "workflow: installs the .deb cpack names ${name}_<version>_amd64.deb" \
    grep -qF "locklab-build/${name}_*_amd64.deb" <<<"$BUILD_STEP"

# the scenario step, verbatim, where the workflow runs it
RUN_STEP=$(step "run the lock scenarios" run)
check "workflow: a step runs locklab" grep -q '^locklab run ' <<<"$RUN_STEP"
mkdir -p "$WORK/repo/ci" "$WORK/bin"
cp "$SRC"/docs/ci/*.yaml "$WORK/repo/ci/"
ln -s "$(realpath "$LOCKLAB")" "$WORK/bin/locklab"
(cd "$WORK/repo" && PATH=$WORK/bin:$PATH bash -e -c "$RUN_STEP --quiet --no-plot")
expect_eq "recipe: exit code when every expectation holds" "$?" 0
S=$WORK/repo/locklab-results/latest/summary.json
JUNIT=$WORK/repo/$(step "publish the verdicts" report_paths)
expect_eq "recipe: the team's scripts are safe without faults" \
    "$(jget "$S" results.scenario=my-lock,impl=redis-script.verdict)" safe
expect_eq "recipe: and break under a pause past their TTL, as expected" \
    "$(jget "$S" results.scenario=my-lock-pause,impl=redis-script.verdict)" violation
expect_eq "recipe: a JUnit testcase per result" "$(grep -c '<testcase' "$JUNIT")" 3
expect_eq "recipe: no failure in the JUnit file" "$(grep -c '<failure' "$JUNIT")" 0
kept=""
for p in $(step "keep the results" path); do
    [ -s "$WORK/repo/$p" ] || kept="$kept $p"
done
expect_eq "recipe: every path the artifact step keeps exists" "${kept:-none}" none

# a verdict that changed: the pause file expecting safe
sed 's/expect: {redis-script: violation}/expect: {redis-script: safe}/' \
    "$SRC/docs/ci/my-lock-pause.yaml" > "$WORK/changed.yaml"
"$LOCKLAB" run "$WORK/changed.yaml" --out "$WORK/results2" --junit "$WORK/junit2.xml" \
    --quiet --no-plot
expect_eq "recipe: exit code when a verdict is not the expected one" "$?" 1
expect_eq "recipe: the JUnit file names the failed testcase" "$(grep -c '<failure' "$WORK/junit2.xml")" 1
expect_no_orphans "after the recipe"
finish
