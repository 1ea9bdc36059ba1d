#!/bin/bash
# maskkit on a SLURM cluster: the Eq. 9 sparsity and the attention statistics
# of one large attention dump, spread over every rank of the job, then a
# sweep with one GPU per rank.  Submit with
#   DATA=/scratch/dump.h5 sbatch examples/slurm_measure.sh
# (edit the #SBATCH lines for your partition); outside SLURM it runs the same
# steps under `mpirun -n ${NP:-2}` on this machine, which is how it is tested.
# Variables: DATA (required: [samples, layers, heads, N, N] probabilities and
# their lengths), MASKKIT (a maskkit built with configure --with-mpi; default
# build/maskkit of this checkout), OUT (default ./maskkit-JOBID), THRESHOLD
# (0.01), SWEEP_ARGS (default a 4096-token fp32 sweep; add --dtype bf16 on
# GPUs; empty: no sweep).
#
#SBATCH --job-name=maskkit
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=8
#SBATCH --gpus-per-node=4
#SBATCH --time=01:00:00
#SBATCH --output=maskkit-%j.log
set -euo pipefail

DATA=${DATA:?set DATA to the HDF5 file: [samples, layers, heads, N, N] probabilities + lengths}
OUT=${OUT:-$PWD/maskkit-${SLURM_JOB_ID:-local}}
THRESHOLD=${THRESHOLD:-0.01}
SWEEP_ARGS=${SWEEP_ARGS-"--backend auto --n 4096 --reps 20"}
if [ -z "${MASKKIT:-}" ]; then
	# sbatch runs a copy of this script: the checkout is where it was submitted from
	for m in "$(dirname "$0")/../build/maskkit" "${SLURM_SUBMIT_DIR:-.}/build/maskkit" \
		 "$(command -v maskkit || true)"; do
		[ -x "$m" ] && MASKKIT=$m && break
	done
fi
[ -x "${MASKKIT:-}" ] || { echo "set MASKKIT to a maskkit built with configure --with-mpi" >&2; exit 2; }

if [ -n "${SLURM_JOB_ID:-}" ]; then
	# OpenMP threads per rank: the cores SLURM gave each task
	export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}
	# srun does not pass --cpus-per-task on from sbatch (Slurm >= 22.05): given again
	launch() { srun --mpi=pmix -c "${SLURM_CPUS_PER_TASK:-1}" "$@"; }  # or: mpirun "$@"
else
	launch() { mpirun -n "${NP:-2}" --oversubscribe "$@"; }
fi
mkdir -p "$OUT"
echo "maskkit on $(hostname): $DATA -> $OUT"
# to_file FILE CMD...: CMD's stdout into FILE, only when CMD succeeds
to_file() {
	local file=$1; shift
	"$@" >"$file.tmp" && mv "$file.tmp" "$file" || { rm -f "$file.tmp"; return 1; }
}

# Rank 0 prints and writes; every rank reads its share of the (sample, layer)
# blocks.  The results are the bits one process would print.
to_file "$OUT/measure.json" launch "$MASKKIT" measure "$DATA" --threshold "$THRESHOLD" --by head --json
# On a parallel file system (Lustre, GPFS) collective MPI-IO lets a few
# aggregators read large contiguous stripes for all ranks.
to_file "$OUT/attn_stats.json" launch "$MASKKIT" attn-stats "$DATA" --json --mpi-io collective
# Each rank takes a share of the (pattern, sparsity) grid on the GPU of its
# rank on the node; every row names the host and device that measured it.
if [ -n "$SWEEP_ARGS" ]; then
	# shellcheck disable=SC2086
	launch "$MASKKIT" sweep $SWEEP_ARGS -o "$OUT/sweep.csv"
fi
ls -l "$OUT"
