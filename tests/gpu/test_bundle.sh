#!/bin/sh
# The GPU bundle's self-test, run by make check where there is no GPU: the
# bundle made from this build (tests/gpu/bundle.sh with BUILD) is small
# enough to travel, its programs run through its own loader and libraries
# only (maskkit --version; check_block_plan passes; check_cuda skips with
# "no usable CUDA device"), and tests/gpu/device_check.sh runs every step
# to the end without a device and leaves its summary.
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
# the device check, start to end, without a device: short time limits
BUNDLE=$tmp/b/maskkit-gpu.tar.gz TIME_SCALE=1 PYTHON=${PYTHON:-python3} \
	sh "$src/tests/gpu/device_check.sh" "$tmp/dc" >"$tmp/dc.log" 2>&1 || bad "device_check.sh: $(tail -1 "$tmp/dc.log")"
steps=$(tail -n +2 "$tmp/dc/steps.tsv" | cut -f1 | tr '\n' ' ')
[ "$steps" = "info block_plan check_cuda memcheck racecheck synccheck sweep_4096 sweep_16384 dnas summary " ] ||
	bad "device_check steps: '$steps'"
grep -q "^block_plan	0	" "$tmp/dc/steps.tsv" || bad "device_check: block_plan failed"
grep -q "^summary	0	" "$tmp/dc/steps.tsv" || bad "device_check: summary failed"
[ "$rc" != 77 ] || grep -q "^Device: none usable" "$tmp/dc/summary.md" || bad "summary.md names a device"
[ "$fail" = 0 ] || { cat "$tmp/dc.log"; exit 1; }
echo "gpu bundle: $(($(wc -c <"$tmp/b/maskkit-gpu.tar.gz") / 1048576)) MiB, $(wc -l <"$tmp/b/libs.txt") libraries; device_check ran its steps:"
cat "$tmp/dc/steps.tsv"
