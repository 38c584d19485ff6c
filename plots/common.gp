# common.gp - the look every locklab plot shares, loaded first by each script.
#
# Twelve distinct colours, one per implementation, in the order summary.json
# lists them (locklab passes each series its linetype, so an implementation
# keeps its colour from one plot to the next), each with its own point type;
# past twelve the colours repeat. Text is UTF-8 and not "enhanced", so names
# such as redis_lock keep their underscores.
set encoding utf8
set termoption noenhanced
set linetype 1  lc rgb '#1f77b4' lw 2 pt 7  ps 0.9
set linetype 2  lc rgb '#d62728' lw 2 pt 5  ps 0.9
set linetype 3  lc rgb '#2ca02c' lw 2 pt 9  ps 1.0
set linetype 4  lc rgb '#ff7f0e' lw 2 pt 13 ps 1.0
set linetype 5  lc rgb '#9467bd' lw 2 pt 11 ps 1.0
set linetype 6  lc rgb '#8c564b' lw 2 pt 3  ps 0.9
set linetype 7  lc rgb '#e377c2' lw 2 pt 1  ps 0.9
set linetype 8  lc rgb '#7f7f7f' lw 2 pt 2  ps 0.9
set linetype 9  lc rgb '#bcbd22' lw 2 pt 4  ps 0.9
set linetype 10 lc rgb '#17becf' lw 2 pt 6  ps 0.9
set linetype 11 lc rgb '#000000' lw 2 pt 8  ps 0.9
set linetype 12 lc rgb '#ff9896' lw 2 pt 10 ps 0.9
set linetype cycle 12
set grid xtics ytics mxtics mytics lc rgb '#dddddd' lw 1 dt 1
set border 3 lc rgb '#444444'
set tics nomirror out
set key outside right top vertical Left reverse noautotitle samplen 2 spacing 1.1 width 1
set style fill solid 0.85 noborder
set title font ',13'

# Series i (0-based) draws with linetype word(lts, i+1) and dash type
# word(dts, i+1); scripts call these two so the C side decides the colours.
lt_of(i) = int(word(lts, i + 1))
dt_of(i) = int(word(dts, i + 1))

# The two outputs: PNG (cairo, anti-aliased) then SVG of the same plot. Each
# script sets everything, then calls `plot_both`; replot draws the SVG.
png_terminal = "set terminal pngcairo size 1100,620 font 'sans,10' noenhanced"
svg_terminal = "set terminal svg size 1100,620 dynamic font 'sans,10' noenhanced background rgb 'white'"

# `note` (set by locklab, "" for none) goes under the plot, below the x label.
if (exists('note') && strlen(note) > 0) {
    set bmargin 5
    set label 99 note at screen 0.01, screen 0.018 left font ',9' tc rgb '#555555'
}
