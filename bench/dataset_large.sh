#!/bin/sh
# A 2 GiB float32 attention file [256 samples, 4 layers, 8 heads, 256, 256]
# with lengths 16..256, measured with `maskkit measure --threshold` and
# `--top-p`: median wall time of 3 runs after one warm-up (the file in the
# page cache), throughput in MB/s of the file's data, and peak RSS, which
# must stay near one (sample, layer) block (8 x 256 x 256 x 4 = 2 MiB) plus
# the program, whatever the file's size.
: "${MASKKIT:=./maskkit}" "${PYTHON:=/usr/bin/python3}"
dir=${BENCH_DIR:-${TMPDIR:-/tmp}}/mk_bench_data.$$
mkdir -p "$dir" || exit 1
trap 'rm -rf "$dir"' EXIT
file=$dir/attn.h5
"$PYTHON" - "$file" <<'PY' || exit 1
import sys
import h5py
import numpy as np
rng = np.random.default_rng(1)
s_, l_, h_, n = 256, 4, 8, 256
with h5py.File(sys.argv[1], "w") as f:
    d = f.create_dataset("attentions", (s_, l_, h_, n, n), dtype="f4")
    f["lengths"] = rng.integers(16, n + 1, s_)
    for i in range(s_):
        x = rng.random((l_, h_, n, n), dtype=np.float32)
        d[i] = x / x.sum(axis=-1, keepdims=True)
PY
bytes=$((256 * 4 * 8 * 256 * 256 * 4))
echo "data: $bytes bytes of float32 (threads: ${OMP_NUM_THREADS:-all})"
for rule in "--threshold 0.004" "--top-p 0.9"; do
	"$MASKKIT" measure "$file" $rule >/dev/null || exit 1 # warm-up: page cache
	: >"$dir/runs"
	for r in 1 2 3; do
		/usr/bin/time -f "%e %M" -o "$dir/time" "$MASKKIT" measure "$file" $rule >/dev/null || exit 1
		cat "$dir/time" >>"$dir/runs"
	done
	sort -n "$dir/runs" | sed -n 2p | {
		read -r secs kib
		awk -v r="$rule" -v s="$secs" -v k="$kib" -v b="$bytes" 'BEGIN {
			printf "measure %-16s median %6.2f s  %7.0f MB/s  peak RSS %5.1f MiB\n",
			       r, s, b / 1e6 / s, k / 1024 }'
	}
done
