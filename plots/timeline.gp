# timeline.gp - every acquire's latency at the moment it was granted: x is
# seconds since the run's start barrier, y the acquire latency on a log
# axis, one point per acquire, one colour per implementation. Stalls, TTL
# expiries and polling rhythm show up as bands and gaps.
#
# Variables (set by `locklab plot` with -e):
#   datafile  blocks of "t_s value" rows, one per implementation, each headed
#             by its quoted title; blocks separated by two blank lines
#   n         number of blocks            lts       linetype per block
#   unit      y unit ("µs" or "ms")       tmax      largest t_s
#   bands     "start end kind ..." (s): faults that landed, shaded; kind 0 a
#             fault, 1 to 3 a failover's phases (replication cut, master
#             down until the switch, switch until the first write)
#   scenario, subtitle, note, png, svg, plotdir   as in latency.gp
load plotdir.'/common.gp'

set title sprintf("%s: acquire latency over time\n%s", scenario, subtitle)
set xlabel 'time since the start barrier (s)'
set ylabel sprintf('acquire latency (%s, log scale)', unit)
set logscale y 10
set format y '%g'
set xrange [0:(tmax > 0 ? tmax * 1.02 : 1)]
set key samplen 1
if (exists("bands") && strlen(bands) > 0) {
    band_colours = "#f4a6a6 #f6d58e #e06666 #7fb3e0"
    do for [i=1:words(bands):3] {
        set object ((i + 2) / 3) rect from word(bands, i) + 0, graph 0 \
            to word(bands, i + 1) + 0, graph 1 behind \
            fillcolor rgb word(band_colours, word(bands, i + 2) + 1) \
            fillstyle transparent solid 0.35 noborder
    }
}

@png_terminal
set output png
plot for [i=0:n-1] datafile index i using 1:2 with points lt lt_of(i) ps 0.5 title columnheader(1)
@svg_terminal
set output svg
replot
set output
