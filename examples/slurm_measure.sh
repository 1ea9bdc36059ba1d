#!/bin/bash
# maskkit on a SLURM cluster: the Eq. 9 sparsity and the attention statistics
# of one large attention dump, spread over every rank of the job, then a
# sweep with one GPU per rank.  Submit with `sbatch examples/slurm_measure.sh`
# (edit the #SBATCH lines for your partition); outside SLURM it runs the same
# steps under `mpirun -n ${NP:-2}` on this machine, which is how it is tested.
#
#SBATCH --job-name=maskkit
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=8
#SBATCH --gpus-per-node=4
#SBATCH --time=01:00:00
#SBATCH --output=maskkit-%j.log
set -euo pipefail

MASKKIT=${MASKKIT:-$HOME/maskkit/build/maskkit}   # built with configure --with-mpi
DATA=${DATA:?set DATA to the HDF5 file: [samples, layers, heads, N, N] probabilities + lengths}
OUT=${OUT:-$PWD/maskkit-${SLURM_JOB_ID:-local}}
THRESHOLD=${THRESHOLD:-0.01}
# a GPU-sized sweep by default; SWEEP_ARGS="" skips it
SWEEP_ARGS=${SWEEP_ARGS-"--backend auto --n 4096 --dtype bf16 --reps 20"}

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

# Rank 0 prints and writes; every rank reads its share of the (sample, layer)
# blocks.  The results are the bits one process would print.
launch "$MASKKIT" measure "$DATA" --threshold "$THRESHOLD" --by head --json >"$OUT/measure.json"
# On a parallel file system (Lustre, GPFS) collective MPI-IO lets a few
# aggregators read large contiguous stripes for all ranks.
launch "$MASKKIT" attn-stats "$DATA" --json --mpi-io collective >"$OUT/attn_stats.json"
# Each rank takes a share of the (pattern, sparsity) grid on the GPU of its
# rank on the node; every row names the host and device that measured it.
if [ -n "$SWEEP_ARGS" ]; then
	# shellcheck disable=SC2086
	launch "$MASKKIT" sweep $SWEEP_ARGS -o "$OUT/sweep.csv"
fi
ls -l "$OUT"
