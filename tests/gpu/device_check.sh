#!/bin/sh
# The whole device check of the cuda backend, in one command on the GPU
# machine, run from the source tree with the bundle (tests/gpu/bundle.sh)
# beside it:
#   tests/gpu/device_check.sh "$OUT"   (BUNDLE: default gpu-bundle/maskkit-gpu.tar.gz)
# Only a few files come back from such a machine, so the results are kept
# in a work folder and packed after every step into OUT/results.tar.gz,
# with OUT/steps.tsv (each step's exit status and seconds) and
# OUT/summary.md beside it: a step that is killed leaves the rest.
# Steps, in order of value, each time-boxed:
#   info         nvidia-smi, the driver, nvcc, PyTorch, where libcuda is, the
#                bundle's manifest
#   block_plan   check_block_plan (the block kernel's host split plan)
#   check_cuda   every kernel x normalisation x dtype x head dim against the
#                double reference and the cpu backend
#   sweep_4096   bench/gpu_sweep.sh at bf16, d = 128, batch x heads = 64, with
#                bench/peers.py (SDPA flash, SDPA with the boolean mask,
#                FlexAttention from maskkit's block layouts) in the same run
#   dnas         dense softmax and DNAS at n = 4096, for their ratio
#   memcheck, synccheck, racecheck
#                tests/gpu/sanitize.sh, one tool each, on a reduced case list
#                (CHECK_CUDA_MASKS: the masks with empty rows and split rows;
#                racecheck on the first only)
#   sweep_16384  the sweep at n = 16384
#   ncu_dense    Nsight Compute on one launch of the dense tile kernel (bf16,
#                d = 128, n = 4096, 64 slices): where its time goes
#   summary      tests/gpu/summarize.py: summary.md, the table the README gets
# TOTAL (seconds, default 420) bounds the whole run: a step gets at most what
# is left of it, less a reserve for the summary and the packing, so that the
# command ends inside the device tool's limit with room for one rerun;
# STEPS="check_cuda racecheck" reruns only those.  Without a usable device
# every step says so and the script still finishes (the CI self-test runs it
# that way).
set -u
self=$0
top=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${BUNDLE:-$top/gpu-bundle/maskkit-gpu.tar.gz}
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
	echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
	ldconfig -p 2>/dev/null | grep -E 'libcuda|libnvidia-ml' || echo "ldconfig: no libcuda"
	"$maskkit" --version
	head -n 6 "$dir/MANIFEST"
	uname -a
	nproc
	free -g 2>/dev/null || true
	df -h "${TMPDIR:-/tmp}" 2>/dev/null || true
}

block_plan() { "$dir/bin/check_block_plan"; }

check_cuda() {
	CK_FORK=no "$dir/bin/check_cuda"
	rc=$?
	# a skip says why; the loader's view of the driver tells the rerun more
	if [ "$rc" = 77 ]; then
		LD_DEBUG=libs "$dir/bin/check_cuda" 2>&1 | grep -E 'libcuda' | head -20
	fi
	return $rc
}

# sanitize TOOL MASKS [NORMS CASE]: check_cuda's mask cases MASKS, its first
# NORMS norms (default all four), only its Check case CASE (default all)
sanitize() {
	TOOLS=$1 CHECK_CUDA="$dir/bin/check_cuda" CHECK_CUDA_MASKS=$2 CHECK_CUDA_NORMS=${3:-} \
		CK_RUN_CASE=${4:-} sh "$dir/tests/gpu/sanitize.sh"
}

# sweep N PATTERNS SPARSITY KERNELS [REPS]: bench/gpu_sweep.sh without its
# peers (a step of their own), adaptive repetitions unless REPS
sweep() {
	MASKKIT=$maskkit PYTHON=$python N=$1 BATCH=1 HEADS=64 D=128 DTYPE=bf16 REPS=${5:-} PEERS=0 \
		PATTERNS=$2 SPARSITY=$3 KERNELS=$4 sh "$dir/bench/gpu_sweep.sh" "$work/sweep_$1"
}

# peers N: bench/peers.py on the masks of PEERS_PATTERNS_N (a rerun's way
# to time the masks an earlier run swept), else of sweep_N/sweep.json
peers() {
	eval "masks=\${PEERS_PATTERNS_$1:-}"
	[ -n "$masks" ] || masks=$("$python" -c 'import json, sys
rows = json.load(open(sys.argv[1]))["results"]
print(",".join(dict.fromkeys(r["mask"] for r in rows if r["kernel"] != "dense")))' \
		"$work/sweep_$1/sweep.json") || return 2
	mkdir -p "$work/sweep_$1"
	MASKKIT=$maskkit PYTHONUNBUFFERED=1 "$python" "$dir/bench/peers.py" --no-numpy \
		--no-agreement --n "$1" --batch 1 --heads 64 --head-dim 128 --dtype bf16 \
		--reps "${REPS:-20}" --tile 64 --patterns "$masks" -o "$work/sweep_$1/peers.csv"
}

dnas() {
	"$maskkit" sweep --backend cuda --dtype bf16 --head-dim 128 --n 4096 --batch 1 --heads 64 \
		--kernels dense --norm softmax,dnas --patterns local --sparsity 50% ${REPS:+--reps $REPS} \
		-o "$work/dnas.json"
}

# one dense launch after the warm-ups, the clocks left alone (the device
# notes: ncu's clock control would pin them below what the sweep ran at)
ncu_dense() {
	command -v ncu >/dev/null || { echo "ncu: not found"; return 77; }
	ncu --clock-control none --target-processes all -k regex:tiles_kernel --launch-skip 3 \
		--launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
		--section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
		--section WarpStateStats --section SchedulerStats --section InstructionStats \
		"$maskkit" sweep --backend cuda --dtype bf16 --head-dim 128 --n 4096 --batch 1 \
		--heads 64 --kernels dense --patterns local --sparsity 50% --reps 1 --warmup 3 -q \
		-o "$work/ncu_sweep.csv"
}

summary() { "$python" "$top/tests/gpu/summarize.py" "$work"; }

if [ "${1:-}" = --step ]; then
	dir=$MK_DC_DIR work=$MK_DC_WORK maskkit=$MK_DC_DIR/bin/maskkit
	shift
	"$@"
	exit $?
fi

# ---- the run -------------------------------------------------------------------

out=${1:?usage: tests/gpu/device_check.sh OUT}
total=${TOTAL:-420}
reserve=25 # seconds kept for the summary and the packing
start=$(date +%s)
mkdir -p "$out"
out=$(cd "$out" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/maskkit-gpu.XXXXXX")
work=$(mktemp -d "${TMPDIR:-/tmp}/maskkit-results.XXXXXX")
tar -xzf "$bundle" -C "$dir" || { echo "device_check: cannot unpack '$bundle'" >&2; exit 2; }
MK_DC_DIR=$dir MK_DC_WORK=$work
export MK_DC_DIR MK_DC_WORK
printf 'step\texit\tseconds\n' >"$work/steps.tsv"

# results.tar.gz replaced whole each time: a kill never leaves half of one
pack() {
	tar -czf "$out/results.tar.gz.tmp" -C "$work" . && mv "$out/results.tar.gz.tmp" "$out/results.tar.gz"
	cp "$work/steps.tsv" "$out/steps.tsv"
	[ ! -f "$work/summary.md" ] || cp "$work/summary.md" "$out/summary.md"
}
trap 'pack; rm -rf "$dir" "$work"' EXIT

# step NAME SECONDS FUNCTION [ARGS]: its output in NAME.log, its exit status
# and time in steps.tsv ("skipped" when STEPS leaves it out or no time is
# left), the last lines of its log on stdout
step() {
	name=$1 limit=$2; shift 2
	left=$((start + total - reserve - $(date +%s)))
	[ "$name" = summary ] && left=$((left + reserve - 5))
	case " ${STEPS:-$name} " in *" $name "*) ;; *) left=0 ;; esac
	if [ "$left" -lt 10 ]; then
		printf '%s\tskipped\t0\n' "$name" >>"$work/steps.tsv"
		echo "== $name: skipped"
		return
	fi
	[ "$limit" -le "$left" ] || limit=$left
	echo "== $name (at most $limit s)"
	t0=$(date +%s)
	timeout -k 5 "$limit" sh "$self" --step "$@" >"$work/$name.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	[ "$rc" = 124 ] && echo "device_check: $name stopped after $limit s" >>"$work/$name.log"
	printf '%s\t%s\t%s\n' "$name" "$rc" "$secs" >>"$work/steps.tsv"
	tail -n 4 "$work/$name.log" | sed 's/^/   /'
	echo "   exit $rc, $secs s"
	pack
}

step info 20 info
step block_plan 20 block_plan
step check_cuda 100 check_cuda
step sweep_4096 150 sweep 4096 "${PATTERNS:-local,bigbird,longformer,strided}" \
	"${SPARSITY:-50%..95%:15%}" "${KERNELS:-dense block csr masked}"
step peers_4096 90 peers 4096
step dnas 60 dnas
step memcheck 50 sanitize memcheck "${SANITIZE_MASKS:-4,10}"
step synccheck 40 sanitize synccheck "${SANITIZE_MASKS:-4,10}"
# racecheck is the slowest tool: one mask case, softmax and dnas, the kernels only
step racecheck 100 sanitize racecheck "${RACECHECK_MASKS:-4}" 2 kernels
# n = 16384: each run uploads 1.5 GB of inputs, so fewer points and a fixed
# count (the GPU's repetitions agree to within 1% at n = 4096)
step sweep_16384 120 sweep 16384 "${PATTERNS_16384:-local,bigbird}" \
	"${SPARSITY_16384:-50%,80%,95%}" "${KERNELS_16384:-dense block}" "${REPS_16384:-4}"
step peers_16384 90 peers 16384
step ncu_dense 45 ncu_dense
STEPS="${STEPS:+$STEPS }summary" step summary 30 summary
echo "device_check: $(($(date +%s) - start)) s; results in $out (results.tar.gz, steps.tsv, summary.md)"
