#!/bin/sh
# Explaining away (Ding et al., "Attention that does not Explain Away"):
#   1. Gaussian Q/K with peaked scores, 12 heads: softmax leaves keys whose
#      column sum is below 1e-8, DNAS keeps every one >= 1/S (their Fig. 1);
#   2. the same under a sparse mask, every normalisation restricted to it,
#      and how far Sinkhorn is from doubly stochastic there;
#   3. layer 0 of the example encoder (make_attention_data.py's explain/);
#   4. the toys: mode collapse (Fig. 6) and the centre distance (Fig. 7).
#   MASKKIT=build/maskkit examples/explain_away.sh [OUTDIR] [DATA.h5]
set -eu
mk=${MASKKIT:-maskkit}
py=${PYTHON:-python3}
here=$(dirname "$0")
out=${1:-out/explain}
data=${2:-}
mkdir -p "$out"
echo "== 1. Gaussian Q/K (S = 1024, d = 64, entries N(0, 25)), 12 heads, full attention"
"$mk" explain --random 1024,64,5 --heads 12 --norm softmax,dnas,hnas:0.5 \
	--png "$out/colsums.png" --hist-csv "$out/colsums_hist.csv" --csv "$out/colsums.csv" |
	grep -E '^(input|mask|bound|norm |[a-z:.0-9]+ +all )'
echo
echo "== 2. the same under local(w=32) + global(g=2), with a Sinkhorn trace"
"$mk" explain --random 1024,64,5 --heads 12 --mask 'local(w=32) + global(g=2)' \
	--sinkhorn-trace 10 --png "$out/colsums_masked.png" | grep -vE '^[a-z:.0-9]+ +[0-9]+ +[0-9]+ '
echo
if [ -z "$data" ]; then
	data=$out/attention_data.h5
	"$py" "$here/make_attention_data.py" "$data" --samples 20
fi
echo "== 3. layer 0 of the example encoder (its content scores q.k only)"
"$mk" explain "$data:/explain" --heads 4 --linear tf | grep -E '^(input|norm |(softmax|dnas) +all )'
echo
echo "== 4. the toys"
"$mk" explain --toy collapse -o "$out/collapse"
echo
"$mk" explain --toy distance -o "$out/distance" | grep '^check'
