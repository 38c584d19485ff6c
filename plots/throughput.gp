# throughput.gp - acquires per second against the number of clients, one
# line per implementation and key mode (one hot key shared by every client,
# solid; one key per client, dashed). x is log2, so a sweep 1, 2, 4 ... 64
# spreads evenly. With a single client count per implementation every line
# is one point.
#
# Variables (set by `locklab plot` with -e):
#   datafile  blocks of "clients throughput" rows, one per series, each headed
#             by its quoted title; blocks separated by two blank lines
#   n         number of blocks            lts, dts  linetype / dash per block
#   logy      1 for a log y axis (throughputs spread over decades)
#   xmin, xmax  smallest and largest client count
#   scenario, subtitle, note, png, svg, plotdir   as in latency.gp
load plotdir.'/common.gp'

set title sprintf("%s: throughput against clients\n%s", scenario, subtitle)
set xlabel 'clients (log2 scale)'
set key samplen 4
set logscale x 2
pad = (xmin == xmax) ? 2.2 : 1.25
set xrange [xmin / pad : xmax * pad]
# One labelled tick per power of two across the range.
set xtics ()
do for [k=floor(log(xmin / pad) / log(2)):ceil(log(xmax * pad) / log(2))] {
    set xtics add (sprintf('%d', 2**k) 2**k)
}
set mxtics 1
if (logy) {
    set logscale y 10
    set ylabel 'throughput (acquires per second, log scale)'
} else {
    set yrange [0:*]
    set ylabel 'throughput (acquires per second)'
}
set format y '%g'

@png_terminal
set output png
plot for [i=0:n-1] datafile index i using 1:2 with linespoints lt lt_of(i) dt dt_of(i) title columnheader(1)
@svg_terminal
set output svg
replot
set output
