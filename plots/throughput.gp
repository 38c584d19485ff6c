# throughput.gp - against the number of clients, two panels sharing the x
# axis: acquires per second on top, acquire p99 below, one line per
# implementation and key mode (one hot key shared by every client, solid;
# one key per client, dashed) in the same colours in both. x is log2, so a
# sweep 1, 2, 4 ... 64 spreads evenly, and so does 1 to 10,000.
#
# Variables (set by `locklab plot` with -e):
#   datafile  blocks of "clients throughput" rows, one per series, each headed
#             by its quoted title; blocks separated by two blank lines
#   p99file   the same blocks with "clients p99" rows, p99 in `unit`
#   unit      the p99 panel's unit ("µs" or "ms")
#   n         number of blocks            lts, dts  linetype / dash per block
#   logy      1 for a log y axis (throughputs spread over decades)
#   xmin, xmax  smallest and largest client count
#   scenario, subtitle, note, png, svg, plotdir   as in latency.gp
load plotdir.'/common.gp'

# Taller than the others: two panels.
png_terminal = "set terminal pngcairo size 1100,900 font 'sans,10' noenhanced"
svg_terminal = "set terminal svg size 1100,900 dynamic font 'sans,10' noenhanced background rgb 'white'"

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
set format y '%g'
# Both panels end at the same place on the right, the legend beside the
# top one, so their x axes line up.
set lmargin at screen 0.08
set rmargin at screen 0.70

# Top panel: throughput.
top = "set tmargin at screen 0.92; set bmargin at screen 0.55; set xlabel ''; \
       set title sprintf(\"%s: throughput and acquire p99 against clients\\n%s\", scenario, subtitle); \
       set key outside right top; unset logscale y; set yrange [*:*]; \
       if (logy) { set logscale y 10; set ylabel 'throughput (acquires per second, log scale)' } \
       else { set yrange [0:*]; set ylabel 'throughput (acquires per second)' }"
# Bottom panel: p99, always on a log axis (it spreads over decades).
bottom = "set tmargin at screen 0.48; set bmargin at screen 0.10; unset title; unset key; \
          set xlabel 'clients (log2 scale)'; set yrange [*:*]; set logscale y 10; \
          set ylabel sprintf('acquire p99 (%s, log scale)', unit)"

do for [out in "png svg"] {
    if (out eq "png") { @png_terminal; set output png } else { @svg_terminal; set output svg }
    set multiplot
    @top
    plot for [i=0:n-1] datafile index i using 1:2 with linespoints lt lt_of(i) dt dt_of(i) title columnheader(1)
    @bottom
    plot for [i=0:n-1] p99file index i using 1:2 with linespoints lt lt_of(i) dt dt_of(i) title columnheader(1)
    unset multiplot
    set output
}
