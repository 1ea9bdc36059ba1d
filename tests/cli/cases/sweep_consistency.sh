# The times a row shows never contradict its speed-up: in every row ranked
# (rank_ok 1) the ratio of the two medians shown, dense_s / median_s, lies
# in the speed-up's 95% interval, and over all rows it is within 3 % of the
# paired speed-up at the median (the interleaved runs cancel what disturbs
# them alike; a point disturbed unevenly is measured again, and flagged with
# agree 0 if it still disagrees).  Read from the CSV as a user would.
# One thread: under make -j the other core runs another test, and a kernel
# whose two threads share a core with it stalls at every barrier, which
# tests the scheduler rather than the sweep (bench/sweep_repeatability.sh
# BUSY=1 measures that case).  At least 15 runs a point, however slow the
# build (the sanitizers'), so that both medians settle.  The 3 % is a
# statistic of timings: a run that another test disturbed heavily may miss
# it, so a second run is made then, and both must miss it to fail (a wrong
# statistic misses it every time); the ranked rows must hold their interval
# in every run.
py=${PYTHON:-/usr/bin/python3}
for attempt in 1 2; do
	OMP_NUM_THREADS=1 "$MASKKIT" sweep --n 256 --heads 2 --patterns local,bigbird,star \
		--sparsity 30..90:30 --min-reps 15 --max-time 0.2 -q -o s$attempt.csv 2>err ||
		{ cat err; exit 1; }
	"$py" - s$attempt.csv <<'PY' >result$attempt || exit 1
import csv, statistics, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))
        if r["kernel"] != "dense"]
bad, diffs = [], []
for r in rows:
    ratio = float(r["dense_s"]) / float(r["median_s"])
    diffs.append(abs(ratio / float(r["speedup"]) - 1))
    inside = float(r["speedup_lo"]) * (1 - 1e-5) <= ratio <= float(r["speedup_hi"]) * (1 + 1e-5)
    if r["rank_ok"] == "1" and not inside:
        bad.append((r["pattern"], r["target"], r["kernel"], ratio, r["speedup_lo"], r["speedup_hi"]))
    if (r["agree"] == "1") != inside:
        bad.append(("agree", r["pattern"], r["target"], r["kernel"], r["agree"], inside))
print("rows:", len(rows) == 3 * 3 * 3)
print("ranked rows whose medians contradict their interval:", bad)
med = statistics.median(diffs)
print("median |dense_s / median_s / speedup - 1| under 3 %:", med < 0.03 or med)
PY
	head -2 result$attempt >>structure
	grep -q ': True$' result$attempt && break
done
sort -u structure
tail -1 result$attempt
