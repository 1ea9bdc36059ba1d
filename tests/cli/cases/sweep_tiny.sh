# A tiny sweep: one pattern, one target, every kernel timed and checked; the
# CSV has the machine in comment lines, the fixed header and a row per kernel.
"$MASKKIT" sweep --n 128 --sparsity 50% --patterns local --reps 1 -o s.csv >summary 2>err || {
	cat err; exit 1; }
grep -q '^# cpu: ' s.csv && grep -q '^# threads: [0-9]' s.csv && grep -q '^# maskkit: ' s.csv ||
	{ echo "no machine lines"; exit 1; }
grep -v '^#' s.csv | head -1
grep -v '^#' s.csv | tail -n +2 | cut -d, -f1,2,3,4,6,7,8,9,10,11,12,13,14
grep -v '^#' s.csv | tail -n +2 | awk -F, '$20 > 1e-4 || $15 <= 0 || $16 > $15 { print "bad row: " $0 }'
grep -q 'sweep 3/3: done' err || { echo "no progress lines"; cat err; }
grep -q "^local  *50%" summary || { echo "no summary line"; cat summary; }
"$MASKKIT" sweep --n 64 --sparsity 0.2,0.8 --patterns star,random --kernels block --reps 1 -q \
	-o s.json 2>/dev/null || exit 1
grep -c '"kernel":' s.json; grep -q '"machine":' s.json && grep -q '"cpu":' s.json || echo 'no machine object'
