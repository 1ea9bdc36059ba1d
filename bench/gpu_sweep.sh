#!/bin/sh
# maskkit's cuda kernels against PyTorch on one GPU, in one run and one plot:
#   MASKKIT=build/maskkit bench/gpu_sweep.sh [OUT_DIR]      (default out/gpu_sweep)
# 1. maskkit sweep --backend cuda --dtype bf16 --head-dim 128 --n 4096 (masked,
#    block and csr over the patterns and sparsities, dense as the reference),
#    timed with CUDA events, every output checked against the reference: one
#    sweep per kernel (sweep_KERNEL.json, merged into sweep.json), so that a
#    kernel that fails its check, or a run cut short, loses only its own rows;
# 2. bench/peers.py on the very masks the sweep solved (SDPA flash dense,
#    SDPA with the boolean mask, FlexAttention from maskkit's block layout);
# 3. one figure (templates/gpu_sweep.gp): time against achieved sparsity.
# Environment: N (4096), BATCH (1), HEADS (16), D (128), DTYPE (bf16),
# BACKEND (cuda; cpu with DTYPE=fp32 tries the script without a GPU),
# DEVICE (0), REPS (unset: the sweep's adaptive repetitions, and 20 for the
# peers; set: exactly that many for both), TILE (64), PATTERNS, SPARSITY
# (50%..95%:15%), KERNELS (dense block csr masked: one sweep each), PEERS (0:
# none), PYTHON,
# MAX_MEMORY (4G).  Without gnuplot (the GPU machine has none) the plot's data
# is left for tests/gpu/summarize.py --plot elsewhere.
# Needs a GPU; a benchmark, never part of make check.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
maskkit=${MASKKIT:-$here/build/maskkit}
python=${PYTHON:-python3}
out=${1:-out/gpu_sweep}
N=${N:-4096} BATCH=${BATCH:-1} HEADS=${HEADS:-16} D=${D:-128} DTYPE=${DTYPE:-bf16}
DEVICE=${DEVICE:-0} REPS=${REPS:-} TILE=${TILE:-64} MAX_MEMORY=${MAX_MEMORY:-4G}
BACKEND=${BACKEND:-cuda}
PATTERNS=${PATTERNS:-local,bigbird,longformer,strided}
SPARSITY=${SPARSITY:-50%..95%:15%}
mkdir -p "$out"
# the sweep repeats each point until its speed-ups are known to --precision
# (or its --max-time is up) unless REPS asks for a fixed count
reps_opt=${REPS:+--reps $REPS}

for kernel in ${KERNELS:-dense block csr masked}; do
	echo "== maskkit sweep --kernels $kernel ($BACKEND, $DTYPE, n $N, d $D)"
	"$maskkit" sweep --backend "$BACKEND" --device "$DEVICE" --dtype "$DTYPE" --head-dim "$D" \
		--n "$N" --batch "$BATCH" --heads "$HEADS" --tile "$TILE" $reps_opt \
		--patterns "$PATTERNS" --sparsity "$SPARSITY" --kernels "$kernel" \
		--max-memory "$MAX_MEMORY" -o "$out/sweep_$kernel.json" ||
		echo "gpu_sweep: the $kernel sweep failed (exit $?); the others go on"
done
"$python" - "$out" <<'PY'
import glob, json, sys
parts = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/sweep_*.json"))]
if not parts:
    sys.exit("gpu_sweep: no sweep finished")
merged = dict(parts[0], results=[r for p in parts for r in p["results"]])
json.dump(merged, open(sys.argv[1] + "/sweep.json", "w"), indent=1)
PY

masks=$("$python" -c '
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
print(",".join(dict.fromkeys(r["mask"] for r in rows if r["kernel"] != "dense")))
' "$out/sweep.json")

if [ "${PEERS:-1}" = 0 ]; then
	echo "== peers: left to a later step (PEERS=0)"
else
	echo "== peers (torch, $DTYPE)"
	MASKKIT=$maskkit PYTHONUNBUFFERED=1 "$python" "$here/bench/peers.py" --no-numpy \
		--no-agreement --n "$N" --batch "$BATCH" --heads "$HEADS" --head-dim "$D" \
		--dtype "$DTYPE" --reps "${REPS:-20}" --tile "$TILE" --patterns "$masks" \
		-o "$out/peers.csv" ||
		echo "gpu_sweep: peers.py failed (exit $?); the plot shows what it wrote"
fi

# The plot's data: a block per (pattern, source/kernel) series in order of
# sparsity, and the gnuplot variables naming them.
"$python" - "$out" <<'PY'
import csv, json, sys
out = sys.argv[1]
sweep = json.load(open(out + "/sweep.json"))
series, dense = {}, []
pattern_of = {}
for r in sweep["results"]:
    if r["kernel"] == "dense":
        dense = dense or [("maskkit-dense", r["median_s"])]
        continue
    pattern_of[r["mask"]] = r["pattern"]
    series.setdefault((r["pattern"], "maskkit-" + r["kernel"]), []).append(
        (100 * r["achieved"], r["median_s"]))
try:
    with open(out + "/peers.csv") as f:
        peers = list(csv.DictReader(line for line in f if not line.startswith("#")))
except OSError:
    peers = []
for r in peers:
    if None in r.values():  # a row cut short
        continue
    if r["kernel"].endswith("dense"):
        if r["kernel"] == "sdpa_flash_dense" and len(dense) < 2:
            dense.append(("sdpa-flash", float(r["median_s"])))
        continue
    p = pattern_of.get(r["pattern"], r["pattern"])
    series.setdefault((p, r["kernel"]), []).append(
        (100 * float(r["achieved"]), float(r["median_s"])))
kinds = sorted({k for _, k in series})
patterns = sorted({p for p, _ in series})
names, blocks = [], []
for p in patterns:
    for k in kinds:
        pts = sorted(series.get((p, k), [])) or [(float("nan"), float("nan"))]
        names.append(p + "/" + k)
        blocks.append("\n".join(f"{x:.4f} {y:.6e}" for x, y in pts))
open(out + "/plot.dat", "w").write("\n\n\n".join(blocks) + "\n")
m = sweep["machine"]
with open(out + "/plot.vars", "w") as f:
    f.write(f"panels = {len(blocks)}\nper_pattern = {len(kinds)}\n")
    f.write("series = '" + " ".join(names) + "'\n")
    f.write("dense_s = '" + " ".join(f"{t:.6e}" for _, t in dense) + "'\n")
    f.write("dense_names = '" + " ".join(n for n, _ in dense) + "'\n")
    f.write(f"gpu = '{m.get('gpu', '')}'\n")
PY

title="maskkit cuda vs PyTorch: n = $N, batch $BATCH, heads $HEADS, d = $D, $DTYPE, tile $TILE"
printf '%s\n' "$title" >"$out/plot.title"
plot() {
	${GNUPLOT:-gnuplot} -e "datafile = '$1/plot.dat'; output = '$1/gpu_sweep.png'" \
		-e "load '$1/plot.vars'" -e "title = '$title' . (strlen(gpu) ? ', ' . gpu : '')" \
		"$here/templates/gpu_sweep.gp"
}
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
	plot "$out"
	echo "gpu_sweep: $out/sweep.json, $out/peers.csv, $out/gpu_sweep.png"
else
	echo "gpu_sweep: $out/sweep.json, $out/peers.csv; no gnuplot here: the plot is made from"
	echo "  $out/plot.dat by tests/gpu/summarize.py --plot where gnuplot is installed"
fi
