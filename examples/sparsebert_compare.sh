#!/bin/sh
# The SparseBERT comparison of attention masks at n = 128: each named pattern's
# sparsity with and without its diagonal, and its heatmap.
#   MASKKIT=build/maskkit examples/sparsebert_compare.sh [OUTDIR]
set -eu
mk=${MASKKIT:-maskkit}
out=${1:-out/sparsebert}
n=${N:-128}
set -- local1 local2 local3 global1 random1 star logsparse strided fixed longformer bigbird \
	local2+global1+random1 strided-diag
mkdir -p "$out"
echo "SparseBERT comparison of masks at n = $n (sparsity with and without the diagonal)"
"$mk" measure --n "$n" "$@"
for p in "$@"; do
	"$mk" gen "$p" --n "$n" -o "$out/$(printf '%s' "$p" | tr -c 'A-Za-z0-9_' '_').png"
done
echo "heatmaps: $out/*.png"
