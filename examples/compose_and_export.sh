#!/bin/sh
# Builds a Longformer-style mask from parts, checks it, and exports it for
# numpy, h5py and FlexAttention.
#   MASKKIT=build/maskkit examples/compose_and_export.sh [OUTDIR]
set -eu
mk=${MASKKIT:-maskkit}
out=${1:-out/example}
mkdir -p "$out"
# a window of 3 keys each side plus two global tokens, kept causal
"$mk" gen 'local3' --n 256 -o "$out/window.npy"
"$mk" gen 'global(tokens=0,128)' --n 256 -o "$out/globals.h5"
"$mk" compose "$out/window.npy" "$out/globals.h5" -o "$out/longformer.npy"
"$mk" compose "$out/longformer.npy" causal --op and -o "$out/longformer_causal.json"
"$mk" measure "$out/longformer_causal.json" --tile 16
# the same mask as one expression: the files and the expression agree
"$mk" compose "$out/longformer_causal.json" '(local3+global(tokens=0,128))&causal' --op minus \
	--format txt -o "$out/difference.txt"
echo "cells that differ: $(tr -cd '#' <"$out/difference.txt" | wc -c)"
# FlexAttention block layout at BLOCK_SIZE 64, and a heatmap
"$mk" gen '(local3+global(tokens=0,128))&causal' --n 256 --format blocks --block 64 -o "$out/blocks.json"
"$mk" gen "$out/longformer_causal.json" -o "$out/longformer_causal.png"
echo "written: $(ls "$out" | tr '\n' ' ')"
