# latency.gp - acquire latency by percentile, drawn as HdrHistogram's
# plotter draws a .hgrm file: x is 1/(1-percentile) on a log axis, so each
# decade is one more nine (0%, 90%, 99%, 99.9%, ...), and y is the latency
# reached at that percentile. One line per implementation.
#
# Variables (set by `locklab plot` with -e):
#   datafile  blocks of "x value" rows, one block per implementation, each
#             headed by its quoted title; blocks separated by two blank lines
#   n         number of blocks            lts, dts  linetype / dash per block
#   unit      y unit ("µs" or "ms")       xmax      largest x in the data
#   scenario, subtitle                    title lines
#   note      text under the plot ("" for none)
#   png, svg  output files                plotdir   this directory
load plotdir.'/common.gp'

set title sprintf("%s: acquire latency by percentile\n%s", scenario, subtitle)
set xlabel 'percentile (log scale of 1/(1-p): one step per nine)'
set ylabel sprintf('acquire latency (%s, log scale)', unit)
set logscale xy 10
set format y '%g'

# One labelled tick per nine, up to the first one past the data.
kmax = (xmax > 1) ? ceil(log10(xmax)) : 1
if (kmax < 2) kmax = 2
set xrange [1:10**kmax]
set xtics ()
do for [k=0:kmax] {
    nines = ''
    do for [j=3:k] { nines = nines.'9' }
    # tick labels are formats: '%%' prints a percent sign
    lbl = (k == 0) ? '0%%' : (k == 1) ? '90%%' : (k == 2) ? '99%%' : '99.'.nines.'%%'
    set xtics add (lbl 10**k)
}
set mxtics 10

@png_terminal
set output png
plot for [i=0:n-1] datafile index i using 1:2 with lines lt lt_of(i) dt dt_of(i) title columnheader(1)
@svg_terminal
set output svg
replot
set output
