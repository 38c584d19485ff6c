# it_layers.sh - the rooms of the source tree stay layered: a file includes
# only headers of its own room or of rooms below it, in the order
# docs/HACKING.md's source map lists them. Includes are bare quoted names
# (every room is an include directory), so each name must be one file of
# the tree. Only includes are checked, not calls; a room that needs a name
# of a room above it shows here as soon as it includes that room's header.
. "$(dirname "$0")/lib.sh"

# top first; harness/stores/<store>/ belongs to harness/stores
ROOMS="harness/cmd harness/explore harness/report harness/run harness/loader harness/faults harness/plot
harness/net harness/stores harness/oracle harness/scenario harness/proc impls harness/clockshim common"

cat > "$WORK/layers.py" <<'PY'
import os, re, sys
rooms = sys.argv[1].split()
files = {}
for r in rooms:
    for d, _, fs in os.walk(r):
        for f in fs:
            if f.endswith((".c", ".h")):
                files.setdefault(f, []).append(os.path.join(d, f))
def room(p):
    return next(i for i, r in enumerate(rooms) if p.startswith(r + "/"))
bad = 0
for name, paths in sorted(files.items()):
    if len(paths) > 1:
        print("two files named %s: %s" % (name, " ".join(paths)))
        bad += 1
for name, paths in sorted(files.items()):
    for p in paths:
        for n, line in enumerate(open(p, errors="replace"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and os.path.basename(m.group(1)) in files:
                q = files[os.path.basename(m.group(1))][0]
                if room(q) < room(p):
                    print("%s:%d includes %s, a room above it" % (p, n, q))
                    bad += 1
print("checked %d files" % sum(len(v) for v in files.values()))
sys.exit(1 if bad else 0)
PY

OUT=$(cd "$SRC" && /usr/bin/python3 "$WORK/layers.py" "$ROOMS")
RC=$?
echo "$OUT"
expect_eq "no include runs back up a room" "$RC" 0
expect_gt "files checked" "$(echo "$OUT" | sed -n 's/^checked \([0-9]*\) files$/\1/p')" 150

# the check itself sees a violation: a file of a low room including a high one
mkdir -p "$WORK/tree/common" "$WORK/tree/harness/cmd"
echo '#include "cli.h"' > "$WORK/tree/common/low.c"
: > "$WORK/tree/harness/cmd/cli.h"
OUT=$(cd "$WORK/tree" && /usr/bin/python3 "$WORK/layers.py" "harness/cmd common")
expect_eq "a planted include back up is caught" "$?" 1
expect_eq "... and named" "$(echo "$OUT" | grep -c 'common/low.c:1 includes harness/cmd/cli.h')" 1
finish
