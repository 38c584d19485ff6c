# it_report_html.sh - every run writes report.html, one self-contained page
# (no external reference), and headless Chromium renders it: the results
# table shows a row per design with its verdict, the fault the run had is
# listed, the inline SVG plots have a size on the page, and the scenario
# file is shown. The checks run inside the rendered page (a copy with a
# small script that measures what is laid out), not on the file's text.
#
# Then the short gc-pause and failover scenarios (tests/scenarios/report/)
# in one run: the summary at the top gives the command line, the exit code,
# every expectation met, and a real version for Redis, ZooKeeper, MariaDB
# and PostgreSQL; every step's hold timeline has one lane per client and
# as many overlap marks as summary.json counts violations; a screenshot of
# each page goes to the build directory (report-shots/; the docs' copies,
# docs/img/, were taken the same way from the shipped scenarios).
. "$(dirname "$0")/lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
check "chromium installed (scripts/install-deps installs it)" test -n "$CHROMIUM"

D=$WORK/scn
mkdir -p "$D"
cat > "$D/page.yaml" <<'YAML'
name: page
description: two designs and a paused holder, for the HTML report
impls: [none, redis-lua]
clients: 3
run: {max_duration: 2s}
lock: {ttl: 10s, retry_interval: 5ms}
workload: {kind: counter, business: 5ms}
faults:
  - {at: 500ms, action: pause, target: holder, duration: 200ms}
expect: {none: violation, redis-lua: not-exercised}
YAML
"$LOCKLAB" run "$D/page.yaml" --out "$WORK/results" > "$WORK/out.txt" 2>&1
expect_eq "run: exit code" "$?" 0
R=$WORK/results/latest
check "report.html written" test -s "$R/report.html"
expect_eq "the console names it" "$(grep -c 'report: .*report.html' "$WORK/out.txt")" 1
check "the fault table says whether each fault put the lock at stake" \
    grep -q '<th>at stake</th>.*' "$R/report.html"
check "... redis-lua's 200 ms pause in a 10 s lease did not" \
    grep -q '<td>no: client [0-9]* left' "$R/report.html"
expect_eq "self-contained: nothing fetched (no src= or href= to another file)" \
    "$(grep -Eco '(src|href)="[^#]' "$R/report.html")" 0

# the rendered page measures itself and puts the figures in its title
sed 's|</body>|<script>\
var rows = [].filter.call(document.querySelectorAll("table.results tr"), function (r) { return r.offsetHeight > 0; }).length - 1;\
var svgs = [].filter.call(document.querySelectorAll("figure.plot svg"), function (s) { var b = s.getBoundingClientRect(); return b.width > 100 \&\& b.height > 100; }).length;\
var cells = [].map.call(document.querySelectorAll("table.results td:nth-child(5)"), function (c) { return c.innerText; }).join(",");\
var faults = document.querySelectorAll("table.faults tr").length - 1;\
var yaml = document.querySelector("details pre").textContent.indexOf("action: pause") >= 0;\
document.title = "rows=" + rows + " svgs=" + svgs + " verdicts=" + cells + " faults=" + faults + " yaml=" + yaml;\
</script></body>|' "$R/report.html" > "$WORK/probe.html"
dom=$(timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --virtual-time-budget=3000 \
      --dump-dom "file://$WORK/probe.html" 2>/dev/null)
title=$(echo "$dom" | grep -o '<title>[^<]*</title>' | head -1 | sed 's/<[^>]*>//g')
echo "# rendered: $title"
expect_eq "rendered: a table row per design" "$(echo "$title" | grep -o 'rows=[0-9]*')" "rows=2"
expect_eq "rendered: the verdicts in the table, said expected" \
    "$(echo "$title" | grep -o 'verdicts=.* faults=' | sed 's/ faults=$//')" \
    "verdicts=violation (expected),not-exercised (expected)"
expect_gt "rendered: plots with a size on the page" "$(echo "$title" | grep -o 'svgs=[0-9]*' | cut -d= -f2)" 2
expect_gt "rendered: the fault records listed" "$(echo "$title" | grep -o 'faults=[0-9]*' | cut -d= -f2)" 0
expect_eq "rendered: the scenario file shown" "$(echo "$title" | grep -o 'yaml=[a-z]*')" "yaml=true"

# --- the story of a run: the summary and the hold timelines --------------
SHOTS=$(dirname "$LOCKLAB")/report-shots
mkdir -p "$SHOTS"
"$LOCKLAB" run "$SRC/tests/scenarios/report/gc-pause-short.yaml" \
    "$SRC/tests/scenarios/report/failover-short.yaml" --out "$WORK/story" --quiet \
    > "$WORK/story.txt" 2>&1
expect_eq "story run: exit code (every expectation met)" "$?" 0
S=$WORK/story/latest/summary.json
expect_eq "summary.json: the exit code" "$(jget "$S" exit_code)" 0
check "summary.json: the command line as typed" \
    grep -q '"text": "locklab run .*gc-pause-short.yaml .*failover-short.yaml --out' "$S"
check "summary.json: locklab's commit" test "$(jget "$S" locklab.commit)" != "<missing>"
for store in redis zookeeper mysql postgres; do
    v=$(jget "$S" "store_versions.store=$store.version")
    check "summary.json: $store's server version is a version ($v)" \
        sh -c "echo '$v' | grep -Eq '[0-9]+\.[0-9]+'"
done
V=$(jget "$S" "results.scenario=gc-pause-short,fencing=off.safety.violations")
expect_gt "gc-pause unfenced: the oracle counted overlaps" "$V" 0

probe='<script>\
var figs = document.querySelectorAll("figure.holds"), out = [];\
[].forEach.call(figs, function (f) {\
  out.push(f.querySelectorAll("rect.lane").length + "/" + f.getAttribute("data-clients") + ":" +\
           f.querySelectorAll("rect.overlap").length + "/" + f.getAttribute("data-violations"));\
});\
var vers = [].map.call(document.querySelectorAll("td.version"), function (c) { return /[0-9]+[.][0-9]+/.test(c.textContent) ? "v" : "x"; }).join("");\
var met = document.querySelector("p.expect-total").textContent;\
var code = document.querySelector("table.facts").textContent.indexOf("0: every expectation met") >= 0;\
var fenced = document.body.textContent.indexOf("redis-lua, fenced") >= 0 \&\& document.body.textContent.indexOf("redis-lua, unfenced") >= 0;\
document.title = "holds=" + out.join(",") + " versions=" + vers + " met=" + met.replace(/ /g, "_") + " code=" + code + " steps=" + fenced;\
</script></body>'
sed "s|</body>|$probe|" "$WORK/story/latest/report.html" > "$WORK/story.html"
dom=$(timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --virtual-time-budget=3000 \
      --dump-dom "file://$WORK/story.html" 2>/dev/null)
title=$(echo "$dom" | grep -o '<title>[^<]*</title>' | head -1 | sed 's/<[^>]*>//g')
echo "# rendered: $title"
holds=$(echo "$title" | grep -o 'holds=[0-9/:,]*' | cut -d= -f2)
expect_eq "rendered: a hold timeline per step" "$(echo "$holds" | tr ',' '\n' | grep -c .)" 3
for h in $(echo "$holds" | tr ',' ' '); do
    lanes=${h%%:*} marks=${h#*:}
    expect_eq "rendered: one lane per client ($lanes)" "${lanes%/*}" "${lanes#*/}"
    expect_eq "rendered: overlap marks as many as summary.json's violations ($marks)" \
        "${marks%/*}" "${marks#*/}"
done
check "rendered: some step shows overlaps" sh -c "echo '$holds' | grep -Eq ':[1-9][0-9]*/'"
expect_eq "rendered: every store's version is a version" \
    "$(echo "$title" | grep -o 'versions=[vx]*' | grep -c x)" 0
expect_gt "... Redis, ZooKeeper, MariaDB, PostgreSQL and etcd" \
    "$(echo "$title" | grep -o 'versions=[vx]*' | tr -cd v | wc -c)" 4
expect_eq "rendered: the expectations summed up" "$(echo "$title" | grep -o 'met=[^ ]*')" \
    "met=3_of_3_expectations_met"
expect_eq "rendered: the exit code explained" "$(echo "$title" | grep -o 'code=[a-z]*')" "code=true"
expect_eq "rendered: fenced and unfenced steps named apart" \
    "$(echo "$title" | grep -o 'steps=[a-z]*')" "steps=true"

# screenshots (the page as a person sees it), into the build directory
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
rm -f "$SHOTS/report-story.png"
timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1200,1500 --virtual-time-budget=3000 \
    --screenshot="$SHOTS/report-story.png" "file://$WORK/story/latest/report.html" \
    > /dev/null 2>&1
check "screenshot: a PNG of the page" is_png "$SHOTS/report-story.png"
expect_gt "screenshot: not blank (bytes)" "$(stat -c %s "$SHOTS/report-story.png" 2>/dev/null || echo 0)" 40000

expect_no_orphans "after the run and the browser"
finish
