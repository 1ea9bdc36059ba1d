#!/bin/sh
# Masks over data sets, on a small attention data set made like a real one
# (make_attention_data.py: 300 samples of lengths 8..64, 2 layers x 4 heads
# of a random Transformer encoder run in numpy):
#   1. how sparse attention really is: the AAA paper's Eq. 9 over each
#      sample's own length, against the classic figure at N = 64;
#   2. fixed patterns measured at each sample's length;
#   3. attention statistics per head and the offset profile SparseBERT uses;
#   4. SparseBERT's DAM masks pruned from layer 0's mean attention;
#   5. Adaptive Axis Attention's learned axis masks with local2.
#   MASKKIT=build/maskkit examples/dataset_analysis.sh [OUTDIR] [DATA.h5]
set -eu
mk=${MASKKIT:-maskkit}
py=${PYTHON:-python3}
here=$(dirname "$0")
out=${1:-out/dataset}
data=${2:-}
mkdir -p "$out"
if [ -z "$data" ]; then
	data=$out/attention_data.h5
	"$py" "$here/make_attention_data.py" "$data"
fi
echo
echo "== 1. sparsity of the attention maps: keys holding 90% of each row's mass"
"$mk" measure "$data" --top-p 0.9 --by head --png "$out/rho_by_head.png"
echo
echo "== 2. local2 at each sample's own length (Eq. 9) and at N (classic)"
"$mk" measure local2 --lengths "$data"
echo
echo "== 3. attention statistics per head"
"$mk" attn-stats "$data" --max-offset 16 --png "$out/offset_profile.png" \
	--profile-csv "$out/offset_profile.csv"
echo
echo "== 4. DAM masks from layer 0's mean attention (90% sparse)"
"$mk" prune "$data:/importance" --sparsity 0.9 -o "$out/dam_u.h5"
"$mk" prune "$data:/importance" --sparsity 0.9 --structured -o "$out/dam_s.h5"
"$mk" measure "$out/dam_s.h5" --by head
echo
echo "== 5. adaptive axis masks (rows and columns from the data) with local2"
"$mk" axis "$data"
echo
echo "outputs in $out: rho_by_head.png offset_profile.png offset_profile.csv dam_u.h5 dam_s.h5"
