#!/bin/sh
# measure and attn-stats across MPI ranks on a 4.3 GB float32 attention file
# [512 samples, 4 layers, 8 heads, 256, 256] with lengths 16..256: the
# outputs of 1, 2 and 4 ranks (and of one process without mpirun, and of
# MASKKIT_SERIAL, a maskkit built without MPI, when given) must be byte for
# byte the same; each is timed 3 times after a warm-up (the file in the page
# cache), median wall time, throughput in MB/s of the file's data and the
# ratio to 1 rank.  Ranks on one machine share its cores (each takes its
# share of OpenMP threads); the OMP_NUM_THREADS=1 rows show the ranks alone.
# Ranks are not bound to cores (--bind-to none): Open MPI would bind one
# rank to one core, leaving the other cores of a 1-rank run idle.
: "${MASKKIT:=./maskkit}" "${PYTHON:=/usr/bin/python3}" "${MPIRUN:=mpirun}"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
dir=${BENCH_DIR:-${TMPDIR:-/tmp}}/mk_bench_mpi.$$
mkdir -p "$dir" || exit 1
trap 'rm -rf "$dir"' EXIT
file=$dir/attn.h5
echo "writing $file ..."
"$PYTHON" - "$file" <<'PY' || exit 1
import sys
import h5py
import numpy as np
rng = np.random.default_rng(3)
s_, l_, h_, n = 512, 4, 8, 256
with h5py.File(sys.argv[1], "w") as f:
    d = f.create_dataset("attentions", (s_, l_, h_, n, n), dtype="f4")
    f["lengths"] = rng.integers(16, n + 1, s_)
    for i in range(s_):
        x = rng.random((l_, h_, n, n), dtype=np.float32) ** 4
        d[i] = x / x.sum(axis=-1, keepdims=True)
PY
bytes=$((512 * 4 * 8 * 256 * 256 * 4))
echo "data: $bytes bytes; $(nproc) CPUs"
status=0
mpirun="$MPIRUN --bind-to none --oversubscribe"

# time LABEL OUT CMD...: warm-up, then 3 timed runs; prints the median
timed() {
	label=$1 out=$2; shift 2
	"$@" >"$out" 2>"$dir/err" || { echo "$label failed: $(tail -1 "$dir/err")"; status=1; return; }
	: >"$dir/runs"
	for r in 1 2 3; do
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1 || status=1
		e=$(date +%s.%N)
		echo "$s $e" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$dir/runs"
	done
	med=$(sort -n "$dir/runs" | sed -n 2p)
	[ "$label" = "1 rank" ] && base=$med
	awk -v l="$label" -v m="$med" -v b="$bytes" -v base="${base:-$med}" 'BEGIN {
		printf "  %-28s median %6.2f s  %6.0f MB/s  x%.2f of 1 rank\n", l, m, b / 1e6 / m,
		       base / m }'
}

for cmd in "measure --threshold 0.004 --json" "attn-stats --json"; do
	for threads in all 1; do
		echo "$cmd (OpenMP threads per rank: $threads)"
		t=""
		[ "$threads" = 1 ] && t="env OMP_NUM_THREADS=1"
		base=""
		timed "1 rank" "$dir/out1" $t $mpirun -n 1 "$MASKKIT" $cmd "$file"
		timed "2 ranks" "$dir/out2" $t $mpirun -n 2 "$MASKKIT" $cmd "$file"
		timed "4 ranks" "$dir/out4" $t $mpirun -n 4 "$MASKKIT" $cmd "$file"
		timed "2 ranks, collective MPI-IO" "$dir/outc" $t $mpirun -n 2 \
			"$MASKKIT" $cmd "$file" --mpi-io collective
		[ "$threads" = all ] && timed "no mpirun" "$dir/out0" $t "$MASKKIT" $cmd "$file"
		if [ "$threads" = all ] && [ -n "${MASKKIT_SERIAL:-}" ]; then
			timed "built without MPI" "$dir/outs" $t "$MASKKIT_SERIAL" $cmd "$file"
		fi
		for o in "$dir"/out2 "$dir"/out4 "$dir"/outc "$dir"/out0 "$dir"/outs; do
			[ -f "$o" ] || continue
			if cmp -s "$dir/out1" "$o"; then :; else
				echo "  DIFFERENT: $(basename "$o") vs 1 rank"; status=1
			fi
		done
		rm -f "$dir"/out0 "$dir"/outs
		echo "  outputs identical: $([ $status = 0 ] && echo yes || echo NO)"
	done
done
exit $status
