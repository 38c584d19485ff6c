# wakeups.gp - wakeups per release, one bar per implementation: the polls and
# pub/sub notifications that waiting clients spent for each release. A
# polling design wakes every waiter on its interval; a notifying one should
# wake about one. Each bar keeps its implementation's colour.
#
# Variables (set by `locklab plot` with -e):
#   datafile  rows "position linetype wakeups label" (label quoted)
#   n         number of bars
#   scenario, subtitle, note, png, svg, plotdir   as in latency.gp
load plotdir.'/common.gp'

set title sprintf("%s: wakeups per release\n%s", scenario, subtitle)
set ylabel 'wakeups per release (polls + notifications)'
set xlabel ''
set xrange [-0.6 : n - 0.4]
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set xtics rotate by 30 right nomirror scale 0
set format y '%g'
set grid noxtics nomxtics
set boxwidth 0.7
unset key
set bmargin 8

@png_terminal
set output png
plot datafile using 1:3:(0.7):2:xtic(4) with boxes lc variable, \
     '' using 1:3:(sprintf('%.2f', $3)) with labels offset 0, 0.7 font ',9'
@svg_terminal
set output svg
replot
set output
