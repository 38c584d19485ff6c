# it_report_html.sh - every run writes report.html, one self-contained page
# (no external reference), and headless Chromium renders it: the results
# table shows a row per design with its verdict, the fault the run had is
# listed, the inline SVG plots have a size on the page, and the scenario
# file is shown. The checks run inside the rendered page (a copy with a
# small script that measures what is laid out), not on the file's text.
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
expect: {none: violation, redis-lua: safe}
YAML
"$LOCKLAB" run "$D/page.yaml" --out "$WORK/results" > "$WORK/out.txt" 2>&1
expect_eq "run: exit code" "$?" 0
R=$WORK/results/latest
check "report.html written" test -s "$R/report.html"
expect_eq "the console names it" "$(grep -c 'report: .*report.html' "$WORK/out.txt")" 1
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
title=$(echo "$dom" | grep -o '<title>[^<]*</title>' | sed 's/<[^>]*>//g')
echo "# rendered: $title"
expect_eq "rendered: a table row per design" "$(echo "$title" | grep -o 'rows=[0-9]*')" "rows=2"
expect_eq "rendered: the verdicts in the table" "$(echo "$title" | grep -o 'verdicts=[a-z,]*')" \
    "verdicts=violation,safe"
expect_gt "rendered: plots with a size on the page" "$(echo "$title" | grep -o 'svgs=[0-9]*' | cut -d= -f2)" 2
expect_gt "rendered: the fault records listed" "$(echo "$title" | grep -o 'faults=[0-9]*' | cut -d= -f2)" 0
expect_eq "rendered: the scenario file shown" "$(echo "$title" | grep -o 'yaml=[a-z]*')" "yaml=true"
expect_no_orphans "after the run and the browser"
finish
