# plot.gp - the three KAP figures from kap-sweep's median tables.
#
# gnuplot -e "dir='OUT'; sizes='8 64 ...'; rsizes='64 ...'; gets='1 4 16';
#             dirkeys=16; ppb=2[; fanout=2; brokers=0]" plot.gp
# reads OUT/fig1.dat, fig2.dat, fig3.dat (first column: ranks; then one
# column per series, in the order of the lists; '?' marks a missing point)
# and writes OUT/fig1-put.png, fig2-fence.png, fig3-get.png (and, from
# fig2-kvs.dat, fig2-kvs.png, with fig2-kvs-spread.dat's quartiles as
# error bars on the redundant series; from fig3-mean.dat, fig3-mean.png).

set terminal pngcairo size 900,600 font ",11" noenhanced
set datafile missing "?"
set logscale x 2
set key top left box opaque
set grid
if (!exists ("fanout")) fanout = 2
if (!exists ("brokers")) brokers = 0
if (brokers > 0) {
    set xlabel sprintf ("MPI ranks (producers = consumers; on %d brokers, k=%d)", brokers, fanout)
} else {
    set xlabel sprintf ("MPI ranks (producers = consumers; %d ranks per broker, k=%d)", ppb, fanout)
}
set style data linespoints

label (v) = (v + 0 >= 1024) ? sprintf ("%d KiB", (v + 0) / 1024) : sprintf ("%d B", v + 0)

# Figure 1: max put latency (the paper's Fig. 2)
set output dir . "/fig1-put.png"
set title "KAP figure 1: maximum put latency vs. ranks, per value size"
set ylabel "max kvs_put latency (us, log scale)"
set logscale y 10
plot for [i = 1:words (sizes)] dir . "/fig1.dat" \
    using 1:(column (i + 1) * 1000) title label (word (sizes, i)) lw 2 pt 7

# Figure 2: max fence latency, unique vs redundant (the paper's Fig. 3)
set output dir . "/fig2-fence.png"
set title "KAP figure 2: maximum fence latency vs. ranks, unique vs. redundant values"
unset logscale y
set yrange [0:*]
set ylabel "max kvs_fence latency (ms)"
n = words (rsizes)
plot for [i = 1:n] dir . "/fig2.dat" \
        using 1:(column (i + 1)) title "unique " . label (word (rsizes, i)) \
        lw 2 pt 7 lc i, \
     for [i = 1:n] dir . "/fig2.dat" \
        using 1:(column (n + i + 1)) title "redundant " . label (word (rsizes, i)) \
        lw 2 pt 6 dt 2 lc i

# Figure 2, the fence's own part: from the last rank's entry to the first
# answer (the rest of the fence is the ranks arriving)
if (system ("test -r '" . dir . "/fig2-kvs.dat' && echo 1") eq "1") {
    set output dir . "/fig2-kvs.png"
    set title "KAP figure 2, the KVS part: last entry to first answer, unique vs. redundant values"
    set ylabel "KVS part of the fence (ms, median)"
    # the redundant series with the quartiles of their runs, when the
    # sweep wrote them (fig2-kvs-spread.dat: median, q1, q3 per size)
    if (system ("test -r '" . dir . "/fig2-kvs-spread.dat' && echo 1") eq "1") {
        set title "KAP figure 2, the KVS part: last entry to first answer, unique vs. redundant values\n(redundant: bars from the first to the third quartile of the runs)"
        plot for [i = 1:n] dir . "/fig2-kvs.dat" \
                using 1:(column (i + 1)) title "unique " . label (word (rsizes, i)) \
                lw 2 pt 7 lc i, \
             for [i = 1:n] dir . "/fig2-kvs-spread.dat" \
                using ($1 * (1 + 0.03 * (i - 2))):(column (3 * i - 1)):(column (3 * i)):(column (3 * i + 1)) \
                with yerrorlines title "redundant " . label (word (rsizes, i)) \
                lw 2 pt 6 dt 2 lc i
    } else {
        plot for [i = 1:n] dir . "/fig2-kvs.dat" \
                using 1:(column (i + 1)) title "unique " . label (word (rsizes, i)) \
                lw 2 pt 7 lc i, \
             for [i = 1:n] dir . "/fig2-kvs.dat" \
                using 1:(column (n + i + 1)) title "redundant " . label (word (rsizes, i)) \
                lw 2 pt 6 dt 2 lc i
    }
}

# Figure 3: max consumer time, one directory vs many (the paper's Fig. 4)
set output dir . "/fig3-get.png"
set title sprintf ("KAP figure 3: maximum consumer time (8 B values) vs. consumers,\none directory vs. directories of %d keys", dirkeys)
set ylabel "max consumer phase (ms)"
n = words (gets)
plot for [i = 1:n] dir . "/fig3.dat" \
        using 1:(column (i + 1)) title word (gets, i) . " get(s), one dir" \
        lw 2 pt 7 lc i, \
     for [i = 1:n] dir . "/fig3.dat" \
        using 1:(column (n + i + 1)) \
        title sprintf ("%s get(s), dirs of %d", word (gets, i), dirkeys) \
        lw 2 pt 6 dt 2 lc i

# Figure 3, the gets themselves: mean get latency over every get of a run
if (system ("test -r '" . dir . "/fig3-mean.dat' && echo 1") eq "1") {
    set output dir . "/fig3-mean.png"
    set title sprintf ("KAP figure 3: mean get latency (8 B values) vs. consumers,\none directory vs. directories of %d keys", dirkeys)
    set ylabel "mean kvs_get latency (us)"
    plot for [i = 1:n] dir . "/fig3-mean.dat" \
            using 1:(column (i + 1) * 1000) title word (gets, i) . " get(s), one dir" \
            lw 2 pt 7 lc i, \
         for [i = 1:n] dir . "/fig3-mean.dat" \
            using 1:(column (n + i + 1) * 1000) \
            title sprintf ("%s get(s), dirs of %d", word (gets, i), dirkeys) \
            lw 2 pt 6 dt 2 lc i
}
