#!/bin/sh
# The GPU bundle's self-test, run by make check where there is no GPU: the
# bundle made from this build (tests/gpu/bundle.sh with BUILD) is small
# enough to travel, its programs run through its own loader and libraries
# only (maskkit --version; check_block_plan passes; check_cuda skips with
# "no usable CUDA device") and still find a CUDA driver that only
# LD_LIBRARY_PATH names (the toolkit's stub); bench/gpu_sweep.sh's merging
# and plot data and tests/gpu/summarize.py's table work on real sweep
# output (a cpu sweep) and on peers rows, one of them cut short; and
# tests/gpu/device_check.sh runs every step to the end without a device,
# leaving three files in OUT (the device tool brings back eight at most).
set -u
: "${MASKKIT:?MASKKIT must point at the maskkit binary}"
src=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=$(cd "$(dirname "$MASKKIT")" && pwd)
if [ -n "${MASKKIT_SANITIZED:-}" ]; then
	echo "SKIP: the bundle carries the plain build's programs (checked there)"
	exit 77
fi
if ! grep -q '^#define HAVE_CUDA 1' "$build/config.h"; then
	echo "SKIP: maskkit is built without CUDA (no nvcc): there is no bundle to make"
	exit 77
fi
if [ ! -x "$build/tests/check_cuda" ]; then
	echo "SKIP: maskkit is built without Check (configure --with-check): no check_cuda to bundle"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

BUILD=$build sh "$src/tests/gpu/bundle.sh" "$tmp/b" || { echo "FAIL: bundle.sh"; exit 1; }
mkdir "$tmp/x" && tar -xzf "$tmp/b/maskkit-gpu.tar.gz" -C "$tmp/x" || { echo "FAIL: unpack"; exit 1; }
x=$tmp/x
loader=$(ls "$x"/lib/ld-linux* | head -1)
# every library the loader resolves comes from the bundle
outside=$("$loader" --library-path "$x/lib" --list "$x/libexec/maskkit" |
	awk '/=>/ && $3 !~ /^\// {next} /=>/ {print $3}' | grep -v "^$x/lib/" || true)
[ -z "$outside" ] || bad "libraries from outside the bundle: $outside"
v=$(env -i "$x/bin/maskkit" --version 2>&1)
[ "$v" = "$("$MASKKIT" --version)" ] || bad "bundled maskkit --version: '$v'"
env -i "$x/bin/check_block_plan" >"$tmp/plan.log" 2>&1 || bad "check_block_plan: $(tail -1 "$tmp/plan.log")"
env -i "$x/bin/check_cuda" >"$tmp/cuda.log" 2>&1
rc=$?
if [ "$rc" = 0 ]; then
	echo "a CUDA device is usable here: check_cuda passed through the bundle"
elif [ "$rc" != 77 ] || ! grep -q "no usable CUDA device" "$tmp/cuda.log"; then
	bad "check_cuda: exit $rc: $(tail -1 "$tmp/cuda.log")"
fi
# a driver found through LD_LIBRARY_PATH only (the loader's --library-path
# would hide it): the toolkit's stub answers "stub library"
stub=$(ls /usr/local/cuda/lib64/stubs/libcuda.so /usr/local/cuda/targets/*/lib/stubs/libcuda.so \
	2>/dev/null | head -1)
if [ -n "$stub" ]; then
	mkdir "$tmp/drv" && cp "$stub" "$tmp/drv/libcuda.so.1"
	LD_LIBRARY_PATH=$tmp/drv "$x/bin/check_cuda" >"$tmp/stub.log" 2>&1
	grep -q "stub library" "$tmp/stub.log" || bad "libcuda on LD_LIBRARY_PATH not found: $(tail -1 "$tmp/stub.log")"
else
	echo "note: no CUDA stub library here; the LD_LIBRARY_PATH check is left out"
fi

# gpu_sweep.sh and summarize.py on real output: a cpu sweep, then peers rows
# (SDPA flash, FlexAttention and one row cut short) beside it
BACKEND=cpu DTYPE=fp32 N=128 HEADS=2 D=32 REPS=1 PATTERNS=local SPARSITY=50%,80% \
	MASKKIT=$MASKKIT PYTHON=${PYTHON:-python3} GNUPLOT=/nonexistent \
	sh "$src/bench/gpu_sweep.sh" "$tmp/w/sweep_4096" >"$tmp/gs.log" 2>&1 ||
	bad "gpu_sweep.sh on the cpu: $(tail -1 "$tmp/gs.log")"
for f in sweep_dense.json sweep_block.json sweep_csr.json sweep_masked.json sweep.json plot.dat plot.vars; do
	[ -s "$tmp/w/sweep_4096/$f" ] || bad "gpu_sweep.sh left no $f"
done
mask=$("${PYTHON:-python3}" -c 'import json, sys
print(json.load(open(sys.argv[1]))["results"][0]["mask"])' "$tmp/w/sweep_4096/sweep_block.json")
{
	grep -v '^#' "$tmp/w/sweep_4096/peers.csv" | head -1
	echo "$mask,,,0.5,0.5,sdpa_flash_dense,softmax,torch-cuda,fp32,128,1,2,32,64,0.001,0.001,1,1,1,"
	echo "$mask,,,0.5,0.5,flex,softmax,torch-cuda,fp32,128,1,2,32,64,0.0005,0.0005,2,1,1,0"
	echo "$mask,,,0.5,0.5,sdpa_masked,softm"
} >"$tmp/peers.csv" && mv "$tmp/peers.csv" "$tmp/w/sweep_4096/peers.csv"
"${PYTHON:-python3}" "$src/tests/gpu/summarize.py" "$tmp/w" >"$tmp/sum.log" 2>&1 || bad "summarize.py: $(tail -1 "$tmp/sum.log")"
grep -q "maskkit dense / flash = " "$tmp/w/summary.md" || bad "summary.md: no dense / flash ratio"
grep -q "^| $mask | .* | 0.500 |" "$tmp/w/summary.md" || bad "summary.md: no flex time for $mask"

# the device check, start to end, without a device
BUNDLE=$tmp/b/maskkit-gpu.tar.gz PYTHON=${PYTHON:-python3} \
	sh "$src/tests/gpu/device_check.sh" "$tmp/dc" >"$tmp/dc.log" 2>&1 || bad "device_check.sh: $(tail -1 "$tmp/dc.log")"
steps=$(tail -n +2 "$tmp/dc/steps.tsv" | cut -f1 | tr '\n' ' ')
[ "$steps" = "info block_plan check_cuda sweep_4096 peers_4096 dnas memcheck synccheck racecheck sweep_16384 peers_16384 ncu_dense summary " ] ||
	bad "device_check steps: '$steps'"
grep -q "^block_plan	0	" "$tmp/dc/steps.tsv" || bad "device_check: block_plan failed"
grep -q "^summary	0	" "$tmp/dc/steps.tsv" || bad "device_check: summary failed"
[ "$rc" != 77 ] || grep -q "^Device: none usable" "$tmp/dc/summary.md" || bad "summary.md names a device"
[ "$(ls "$tmp/dc" | tr '\n' ' ')" = "results.tar.gz steps.tsv summary.md " ] ||
	bad "device_check's OUT holds: $(ls "$tmp/dc" | tr '\n' ' ')"
tar -tzf "$tmp/dc/results.tar.gz" | grep -q 'check_cuda.log' || bad "results.tar.gz has no check_cuda.log"
[ "$fail" = 0 ] || { cat "$tmp/dc.log" "$tmp/gs.log"; exit 1; }
echo "gpu bundle: $(($(wc -c <"$tmp/b/maskkit-gpu.tar.gz") / 1048576)) MiB, $(wc -l <"$tmp/b/libs.txt") libraries; device_check ran its steps:"
cat "$tmp/dc/steps.tsv"
