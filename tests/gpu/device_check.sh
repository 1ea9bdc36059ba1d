#!/bin/sh
# The whole device check of the cuda backend, in one command on the GPU
# machine (run from the source tree, with the bundle tests/gpu/bundle.sh
# made beside it; everything it finds goes under OUT):
#   tests/gpu/device_check.sh OUT     (BUNDLE: default gpu-bundle/maskkit-gpu.tar.gz)
# Steps, each time-boxed so that one failure or hang leaves the others' results:
#   info         nvidia-smi, the driver, nvcc, PyTorch, the bundle's manifest
#   block_plan   check_block_plan (the block kernel's host split plan)
#   check_cuda   every kernel x normalisation x dtype x head dim against the
#                double reference and the cpu backend
#   memcheck, racecheck, synccheck
#                tests/gpu/sanitize.sh, one tool each, on a reduced case list
#                (CHECK_CUDA_MASKS: the masks with empty rows and split rows)
#   sweep_4096, sweep_16384
#                bench/gpu_sweep.sh at bf16, d = 128, batch x heads = 64, with
#                bench/peers.py (SDPA flash, SDPA with the boolean mask,
#                FlexAttention from maskkit's block layouts) in the same run
#   dnas         dense softmax and DNAS, for their ratio
#   summary      tests/gpu/summarize.py: OUT/summary.md, the table the README gets
# OUT/steps.tsv lists each step's exit status and seconds.  Without a usable
# device every step says so and the script still finishes (the CI self-test
# runs it that way).  Time limits: TIME_SCALE multiplies them (default 1,
# about 8 minutes in all at most).
set -u
self=$0
top=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${BUNDLE:-$top/gpu-bundle/maskkit-gpu.tar.gz}
scale=${TIME_SCALE:-1}
python=${PYTHON:-python3}
# ---- the steps (run as `sh device_check.sh --step NAME`, under timeout) ----

info() {
	nvidia-smi || echo "nvidia-smi: not found"
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit \
		--format=csv || true
	command -v nvcc >/dev/null && nvcc --version
	command -v compute-sanitizer >/dev/null && compute-sanitizer --version
	"$python" -c 'import torch
print("torch", torch.__version__, "cuda", torch.version.cuda,
      torch.cuda.get_device_name() if torch.cuda.is_available() else "no device")' ||
		echo "torch: not importable"
	"$maskkit" --version
	head -n 6 "$dir/MANIFEST"
	uname -a
	nproc
}

block_plan() { "$dir/bin/check_block_plan"; }

check_cuda() { CK_FORK=no "$dir/bin/check_cuda"; }

sanitize() {
	TOOLS=$1 CHECK_CUDA="$dir/bin/check_cuda" CHECK_CUDA_MASKS=${SANITIZE_MASKS:-4,10} \
		sh "$dir/tests/gpu/sanitize.sh"
}

sweep() {
	MASKKIT=$maskkit PYTHON=$python N=$1 BATCH=1 HEADS=64 D=128 DTYPE=bf16 REPS=${REPS:-10} \
		MAX_MEMORY=32G PATTERNS=${PATTERNS:-local,bigbird,longformer,strided} \
		SPARSITY=${SPARSITY:-50..95:15} sh "$dir/bench/gpu_sweep.sh" "$out/sweep_$1"
}

dnas() {
	"$maskkit" sweep --backend cuda --dtype bf16 --head-dim 128 --n 4096 --batch 1 --heads 64 \
		--kernels dense --norm softmax,dnas --patterns local --sparsity 50 --reps "${REPS:-10}" \
		--max-memory 32G -o "$out/dnas.json"
}

summary() { "$python" "$top/tests/gpu/summarize.py" "$out"; }

if [ "${1:-}" = --step ]; then
	dir=$MK_DC_DIR out=$MK_DC_OUT maskkit=$MK_DC_DIR/bin/maskkit
	shift
	"$@"
	exit $?
fi

out=${1:?usage: tests/gpu/device_check.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
printf 'step\texit\tseconds\n' >"$out/steps.tsv"
dir=$(mktemp -d "${TMPDIR:-/tmp}/maskkit-gpu.XXXXXX")
trap 'rm -rf "$dir"' EXIT
tar -xzf "$bundle" -C "$dir" || { echo "device_check: cannot unpack '$bundle'" >&2; exit 2; }
MK_DC_DIR=$dir MK_DC_OUT=$out
export MK_DC_DIR MK_DC_OUT

# step NAME SECONDS FUNCTION [ARGS]: its output in OUT/NAME.log, its exit
# status and time in OUT/steps.tsv, and the last lines of its log on stdout
step() {
	name=$1 limit=$(($2 * scale)); shift 2
	echo "== $name (at most $limit s)"
	t0=$(date +%s)
	timeout -k 10 "$limit" sh "$self" --step "$@" >"$out/$name.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	[ "$rc" = 124 ] && echo "device_check: $name stopped after $limit s" >>"$out/$name.log"
	printf '%s\t%s\t%s\n' "$name" "$rc" "$secs" >>"$out/steps.tsv"
	tail -n 4 "$out/$name.log" | sed 's/^/   /'
	echo "   exit $rc, $secs s"
}

step info 30 info
step block_plan 30 block_plan
step check_cuda 90 check_cuda
for tool in memcheck racecheck synccheck; do
	step "$tool" 45 sanitize "$tool"
done
step sweep_4096 100 sweep 4096
step sweep_16384 120 sweep 16384
step dnas 40 dnas
step summary 30 summary
echo "device_check: results in $out (steps.tsv, summary.md)"
