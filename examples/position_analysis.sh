#!/bin/sh
# What trained weights say about position (Wennberg & Henter, 2021), on a
# synthetic model laid out like a HuggingFace tf_model.h5 (see
# make_tf_model.py, which also shows how to export a real model):
#   1. the Toeplitz R^2 of P = E_P E_P^T, whole and for the first 128
#      positions, with a heatmap of P and its fitted profile;
#   2. the positional attention term of layer 0, per head, its Toeplitz R^2
#      and a 2-kernel TISA fit, with heatmaps and the fitted profiles.
#   MASKKIT=build/maskkit examples/position_analysis.sh [OUTDIR] [MODEL]
# MODEL: a HuggingFace model directory (its config.json gives the heads), a
# .safetensors or an HDF5 file; HEADS=H gives the heads of a model without
# config.json.
set -eu
mk=${MASKKIT:-maskkit}
py=${PYTHON:-python3}
here=$(dirname "$0")
out=${1:-out/position}
model=${2:-}
heads=${HEADS:-}
mkdir -p "$out"
if [ -z "$model" ]; then
	model=$out/synthetic_tf_model.h5
	heads=4
	"$py" "$here/make_tf_model.py" "$model" --heads "$heads"
	echo "wrote $model (synthetic, HuggingFace TF layout, $heads heads)"
fi
echo
echo "== translation invariance of the position embeddings"
"$mk" toeplitz "$model" --first 128 --png "$out/P.png" --profile "$out/P_profile.png"
echo
echo "== positional attention term of layer 0 (TISA fit, 2 kernels per head)"
"$mk" positional "$model" ${heads:+--heads "$heads"} --layer 0 --fit 2 --png "$out/heads.png" \
	--profile "$out/heads_fit.png"
echo
echo "pictures: $out/P.png $out/P_profile.png $out/heads.png $out/heads_fit.png"
