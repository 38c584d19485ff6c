# holds.gp - who held the lock when, in one step: a lane per client, each
# critical section a bar from entry to exit (Jepsen's timeline, drawn by
# gnuplot). Colours: blue a section, red one that overlapped another holder
# on its key, orange one the fenced store refused (its token was stale),
# purple one whose lock was taken early or whose holder died. Faults are
# shaded behind, as in timeline.gp.
#
# Variables (set by `locklab plot` with -e):
#   datafile  rows "entry_s exit_s client linetype"
#   clients   number of lanes            tmax   the last exit (s)
#   bands     "start end kind ..." (s): faults that landed (timeline.gp)
#   scenario, subtitle, note, png, svg, plotdir   as in latency.gp
load plotdir.'/common.gp'

set title sprintf("%s: who held the lock when\n%s", scenario, subtitle)
set xlabel 'time since the start barrier (s)'
set ylabel 'client'
set xrange [0:(tmax > 0 ? tmax * 1.01 : 1)]
set yrange [clients - 0.5 : -0.5]
set ytics 0, (clients > 40 ? int(clients / 16) : 1) nomirror
set grid noytics
unset key
lanes_px = 480.0 / clients
bar_lw = lanes_px > 10 ? 8 : (lanes_px < 1 ? 1 : lanes_px * 0.8)
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
plot datafile using 1:3:($2 - $1):(0):4 with vectors nohead lw bar_lw lc variable
@svg_terminal
set output svg
replot
set output
