# --csv writes every point after every step (collapse) and the curves,
# the check and its largest error (distance), without gnuplot
"$MASKKIT" explain --toy collapse --steps 3 --csv c.csv > /dev/null || exit 1
head -1 c.csv
wc -l < c.csv
grep -c '^dnas,3,2,' c.csv
"$MASKKIT" explain --toy distance --a 0.5,1 --r 0.1..10:5 --sizes 1,4 --csv d.csv > /dev/null || exit 1
head -1 d.csv
cut -d, -f1 d.csv | sort | uniq -c
grep '^curve,1,1,' d.csv
